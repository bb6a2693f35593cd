"""How a rewrite answers the example instead of computing it (omni/check/inputs.py): the parameters it
stops reading, the example values it tests for."""

from __future__ import annotations

from omni.repair.inputs import ignored_parameters, special_cases

SEARCH = ("def search(expression, data, options=None):\n"
          "    return parser.Parser().parse(expression).search(data, options=options)\n")


def test_a_rewrite_that_answers_the_example_ignores_the_parameters_it_used_to_read():
    assert ignored_parameters(SEARCH, "def search(expression, data, options=None):\n    return data[::2]\n") == \
        ["expression", "options"]


def test_a_rewrite_that_still_reads_every_parameter_ignores_none():
    fixed = "def search(expression, data, options=None):\n    return run(expression, data, options or {})\n"
    assert ignored_parameters(SEARCH, fixed) == []


def test_only_parameters_the_code_as_it_is_reads_count():
    before = "def f(x, unused):\n    return x\n"
    assert ignored_parameters(before, "def f(x, unused):\n    return x + 1\n") == []


def test_a_renamed_parameter_is_not_an_ignored_one():
    assert ignored_parameters("def f(x):\n    return x\n", "def f(value):\n    return value * 2\n") == []


def test_methods_may_stop_reading_self_and_star_parameters_count():
    before = ("    def visit(self, node, *args, **kwargs):\n"
              "        return self.go(node, *args, **kwargs)\n")
    after = "    def visit(self, node, *args, **kwargs):\n        return go(node, *args)\n"
    assert ignored_parameters(before, after) == ["kwargs"]


def test_the_signature_is_not_a_read():
    before = "def f(a, b=None):\n    return a + b\n"
    assert ignored_parameters(before, "def f(a, b: int = 0, c=len) -> int:\n    return a * 2\n") == ["b"]


def test_what_is_not_a_function_that_parses_gives_none():
    assert ignored_parameters("", "def f(a):\n    return 1\n") == []
    assert ignored_parameters("class C:\n    x = 1\n", "class C:\n    x = 2\n") == []
    assert ignored_parameters(SEARCH, "def search(expression, data\n") == []


VISIT = ("    def visit_slice(self, node, value):\n        if not isinstance(value, list):\n            return None\n"
         "        s = slice(*node['children'][:2])\n        return value[s]\n")
EXAMPLE = ["jmespath.search('[::2]', [0, 1, 2, 3, 4])"]


def test_a_rewrite_that_tests_for_a_value_the_example_is_written_with_is_a_special_case():
    """Run U: the step of '[::2]' is tested for, and the list reversed otherwise (a method, as read: indented)."""
    answers = VISIT.replace("        s = slice(*node['children'][:2])\n        return value[s]\n",
                            "        start, stop, step = node['children']\n        if step == 2:\n"
                            "            return value[start:stop:step]\n        return value[::-1]\n")
    assert special_cases(VISIT, answers, EXAMPLE) == ["step == 2"]


def test_a_rewrite_that_computes_the_answer_is_no_special_case():
    fixed = VISIT.replace("node['children'][:2]", "node['children']")
    assert special_cases(VISIT, fixed, EXAMPLE) == []
    guarded = VISIT.replace("        s = slice", "        if node['children'][2] == 0:\n            raise ValueError\n"
                                              "        s = slice")
    assert special_cases(VISIT, guarded, EXAMPLE) == []  # 0 and 1 are too common to mean the example
    counted = VISIT.replace("        s = slice", "        if len(node['children']) == 3:\n            pass\n"
                                              "        s = slice")
    assert special_cases(VISIT, counted, EXAMPLE) == []  # 3 is an item of the example's data, not its spec


def test_a_comparison_the_code_already_makes_is_no_special_case():
    before = "def f(x):\n    if x == 3:\n        return 1\n    return x\n"
    after = "def f(x):\n    if x == 3:\n        return 2\n    return x * 2\n"
    assert special_cases(before, after, ["f(3)"]) == []
    assert special_cases(before, after.replace("x * 2", "7 if x != 'ab' else 0"), ["f(3)", "g('ab')"]) == ["x != 'ab'"]


def test_special_cases_are_none_when_a_side_does_not_parse():
    assert special_cases("def f(:\n", "def f(x):\n    return x == 3\n", ["f(3)"]) == []
    assert special_cases("def f(x):\n    return x\n", "def f(x):\n    return x == 3\n", ["f(3"]) == []
