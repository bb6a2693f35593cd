"""The parameters a rewrite stops reading (omni/check/inputs.py)."""

from __future__ import annotations

from omni.check.inputs import ignored_parameters

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
