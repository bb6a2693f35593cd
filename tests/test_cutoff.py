"""The complete part of a reproduction test reply cut off at its cap (omni/check/cutoff.py)."""

import json

from omni.check.cutoff import salvaged

FILE = "from shapes import area\n\n\ndef test_square():\n    assert area(2) == 4\n    assert area(3) == 9\n"


def cut_json(code: str, at: int) -> str:
    """The JSON reply for a file, cut after `at` characters of its encoded form, as a capped reply ends."""
    return json.dumps({"test_code": code})[:at]


def test_a_reply_cut_mid_line_keeps_its_complete_lines():
    whole = cut_json(FILE + "    assert area(4) == 16\n", 10_000)
    reply = whole[:whole.index("area(4)") + 2]
    assert reply.endswith("assert ar")
    assert salvaged(reply) == FILE


def test_repeated_assertions_and_cases_are_kept_once():
    code = ("import pytest\nfrom shapes import area\n\n\n@pytest.mark.parametrize('side, want', [\n    (2, 4),\n"
            "    (2, 4),\n    (5, 25),\n])\ndef test_square(side, want):\n    assert area(side) == want\n\n\n"
            "def test_unit():\n    assert area(1) == 1\n    assert area(1) == 1\n    assert area(1) == 1\n    assert ")
    got = salvaged(json.dumps({"test_code": code})[:-1])
    assert got.count("(2, 4),") == 1 and got.count("assert area(1) == 1") == 1 and "(5, 25)," in got
    compile(got, "test_x.py", "exec")


def test_a_function_cut_before_its_body_is_dropped_and_the_rest_kept():
    code = FILE + "\n\ndef test_circle():\n"
    assert salvaged(cut_json(code + "    assert area(", 10_000)[:-1]) == FILE


def test_a_cut_parametrize_list_drops_its_function_whole():
    code = FILE + "\n\n@pytest.mark.parametrize('n', [\n    1,\n    2,\n"
    assert salvaged(cut_json(code, 10_000)[:-1]) == FILE


def test_nothing_that_asserts_is_nothing():
    assert salvaged(cut_json("from shapes import area\n\n\ndef test_square():\n    assert ar", 10_000)[:-2]) == ""
    assert salvaged(cut_json("from shapes import area\n\nx = area(2)\n", 10_000)[:-3]) == ""
    assert salvaged("I will write a test that checks the area of a squ") == ""


def test_a_fenced_reply_and_escapes_are_read():
    code = 'from shapes import label\n\n\ndef test_label():\n    assert label("a\\tb") == "a\tb é"\n'
    reply = cut_json(code + '    assert label("\\u00e9")', 10_000)[:-2]
    assert "\\u00e9" in reply and salvaged(reply) == code
    assert salvaged("Here is the test:\n```python\n" + FILE + "    assert area(") == FILE
    assert salvaged("```python\n" + FILE + "```\nThis test checks") == FILE


def test_a_test_class_method_counts():
    code = "from shapes import area\n\n\nclass TestArea:\n    def test_square(self):\n        assert area(2) == 4\n"
    assert salvaged(cut_json(code + "\n    def test_", 10_000)) == code


def test_only_the_first_four_assertions_of_a_function_and_cases_of_a_list_are_kept():
    asserts = "".join(f"    assert area({n}) == {n * n}\n" for n in range(1, 9))
    cases = "".join(f"    ({n}, {n * n}),\n" for n in range(1, 9))
    code = ("import pytest\nfrom shapes import area\n\n\n@pytest.mark.parametrize('side, want', [\n" + cases +
            "])\ndef test_square(side, want):\n    assert area(side) == want\n\n\ndef test_more():\n" + asserts)
    got = salvaged(cut_json(code + "    assert area(", 10_000)[:-2])
    assert "(4, 16)," in got and "(5, 25)," not in got
    assert "assert area(4) == 16" in got and "assert area(5) == 25" not in got
    assert "assert area(side) == want" in got  # the first of its own function


def test_a_value_written_over_lines_inside_a_function_is_kept_whole():
    code = ("from shapes import sides\n\n\ndef test_sides():\n    want = [\n" + "        1,\n" * 6 + "    ]\n"
            "    assert sides('hexagon') == want\n")
    assert salvaged(cut_json(code + "    assert sides(", 10_000)[:-2]) == code
