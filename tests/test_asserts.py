"""How a reproduction test's assertions are read as examples (omni/check/asserts.py): pure, no sandbox. The test
files are of the kind a small model writes; none is a benchmark task's."""

from __future__ import annotations

from omni.check.asserts import MAX_READ, asserted_examples, what_it_asserts


def read(code: str) -> list[str]:
    return [str(e) for e in asserted_examples(code)]


def test_each_parametrize_case_is_put_in():
    code = ("import pytest\nimport shapes\n\n@pytest.mark.parametrize('side, area', [(2, '4'), (3, '9')])\n"
            "def test_area(side, area):\n    assert shapes.square(side) == area\n")
    assert read(code) == ["shapes.square(2) == '4'", "shapes.square(3) == '9'"]


def test_names_as_a_list_and_one_name_cases_and_two_decorators():
    code = ("import pytest\n@pytest.mark.parametrize(['word'], [('ox',)])\n"
            "@pytest.mark.parametrize('n', [1, 2])\ndef test_plural(word, n):\n    assert plural(word, n) == 'oxen'\n")
    assert read(code) == ["plural('ox', 1) == 'oxen'", "plural('ox', 2) == 'oxen'"]


def test_plain_locals_are_put_in_and_the_value_may_come_first():
    code = ("def test_join():\n    parts = ['a', 'b']\n    want = 'a-b'\n    got = join(parts, sep='-')\n"
            "    assert want == got\n")
    assert read(code) == ["join(['a', 'b'], sep='-') == 'a-b'"]


def test_a_value_from_a_call_is_used_once_and_a_name_another_statement_names_is_dropped():
    code = ("def test_queue():\n    q = Queue(2)\n    q.put(1)\n    assert q.size() == 1\n"
            "    r = Queue(1)\n    first = r.put(5)\n    assert first == None\n    assert r.size() == 1\n")
    assert read(code) == ["Queue(1).put(5) == None"]


def test_a_list_a_call_may_change_is_used_once_and_a_constant_as_often_as_named():
    code = ("def test_fill():\n    table = {}\n    n = -2\n    size = fill(table, n)\n    assert size == 0\n"
            "    assert lookup(table, n) == 'x'\n    assert twice(n) == (-4,)\n")
    assert read(code) == ["fill({}, -2) == 0", "twice(-2) == (-4,)"]


def test_what_says_no_value_or_names_what_is_unknown_is_not_read():
    code = ("import pytest\n\ndef helper():\n    assert f(1) == 2\n\ndef test_kinds(tmp_path):\n"
            "    assert g(1)\n    assert g(1) != 2\n    assert g(1) == g(2) == 3\n    assert load(tmp_path) == {}\n"
            "    assert 1 == 1\n    for x in [1]:\n        assert g(x) == 1\n    with pytest.raises(ValueError):\n"
            "        g(-1)\n\nclass TestMore:\n    def test_method(self):\n        assert h('x') == 'X'\n")
    assert read(code) == ["h('x') == 'X'"]


def test_repeats_are_read_once_and_a_long_file_gives_at_most_its_cap():
    cases = ", ".join(f"({n}, {n * n})" for n in range(40))
    code = (f"import pytest\n@pytest.mark.parametrize('n, sq', [{cases}])\ndef test_sq(n, sq):\n"
            "    assert square(n) == sq\n    assert square(n) == sq\n")
    read_back = read(code)
    assert len(read_back) == MAX_READ and read_back[0] == "square(0) == 0" and len(set(read_back)) == MAX_READ


def test_what_is_not_python_reads_as_nothing():
    assert read('{"test_code": "def test_a():\\n') == []
    assert read("@pytest.mark.parametrize('a', ids)\ndef test_a(a):\n    assert f(a) == 1\n") == []


def test_what_a_file_asserts_is_said_as_written_with_the_exceptions_it_expects_and_its_cap():
    code = ("import pytest\nfrom shop.pricing import order_total\n\n\nclass TestTotals:\n"
            "    def test_bulk(self):\n        total = order_total(10, 11.0)\n        assert total == 110.0\n\n"
            "    def test_negative(self):\n        with pytest.raises(ValueError):\n"
            "            order_total(-1, 1)\n\n\n"
            "def helper():\n    assert False\n\n\ndef test_more():\n    assert order_total(1, 1) == 1\n"
            "    assert order_total(2, 1) == 2\n    assert order_total(3, 1) == 3\n")
    assert what_it_asserts(code) == ["assert order_total(10, 11.0) == 110.0", "raises ValueError",
                                     "assert order_total(1, 1) == 1", "assert order_total(2, 1) == 2"]  # 4 at most
    model_wrote = ("import shop.pricing\n\ndef test_exactly_ten():\n    price = 1.0\n    quantity = 10\n"
                   "    expected_total = price * quantity\n"
                   "    actual_total = shop.pricing.unit_price(price, quantity) * quantity\n"
                   "    assert actual_total != expected_total, 'the bulk rate'\n")
    assert what_it_asserts(model_wrote) == ["assert shop.pricing.unit_price(1.0, 10) * 10 != 1.0 * 10"]
    assert what_it_asserts("def test_x(:\n") == []
