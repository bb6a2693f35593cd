"""Near misses merged with the code as it is (omni/repair/merged.py): the branch a candidate replaced kept beside
its own. Code from outside the benchmark."""

from __future__ import annotations

import ast
import textwrap
from types import SimpleNamespace

import pytest

from omni.repair.merged import kept_both, merges

UNITS = '''def to_metres(value, unit):
    """A length in metres."""
    if unit == "km":
        return value * 1000
    return value
'''
REPLACED = '''def to_metres(value, unit):
    if unit == "cm":
        return value / 100
    return value
'''


def test_a_replaced_branch_is_kept_before_and_after_the_candidates_own():
    first, second = kept_both(UNITS, REPLACED)
    assert first == ('def to_metres(value, unit):\n    if unit == "km":\n        return value * 1000\n'
                     '    elif unit == "cm":\n        return value / 100\n    return value\n')
    assert second == ('def to_metres(value, unit):\n    if unit == "cm":\n        return value / 100\n'
                      '    elif unit == "km":\n        return value * 1000\n    return value\n')


METHOD = ("    def total(self, rows):\n        n = 0\n        for row in rows:\n            if row > 0:\n"
          "                n += row\n        return n\n")
CHAIN = ("def name(n):\n    if n == 1:\n        return 'one'\n    elif n == 2:\n        return 'two'\n"
         "    return 'many'\n")


@pytest.mark.parametrize("code, old, new, kept", [
    (METHOD, "if row > 0:\n                n += row", "if row < 0:\n                n -= row",  # in a loop, a method
     "            if row > 0:\n                n += row\n            elif row < 0:\n"),
    (CHAIN, "elif n == 2:\n        return 'two'", "elif n == 3:\n        return 'three'",  # an elif of a chain
     "    elif n == 2:\n        return 'two'\n    elif n == 3:\n        return 'three'\n    return"),
])
def test_a_replaced_branch_at_any_depth_is_kept_with_the_candidates_after_it(code, old, new, kept):
    first, second = kept_both(code, code.replace(old, new))
    assert kept in first and first.splitlines()[0] == code.splitlines()[0]
    assert second.index(new.split(":")[0].replace("elif", "")) < second.index(old.split(":")[0].replace("elif", ""))
    ast.parse(textwrap.dedent(first))


def test_a_branch_that_ends_in_an_else_takes_no_elif_after_it():
    with_else = UNITS.replace("    return value\n", "    else:\n        return value\n")
    candidate = REPLACED.replace("    return value\n", "    else:\n        return value\n")
    assert kept_both(with_else, candidate) == []


def test_no_merge_when_more_than_the_one_branch_changed_or_it_is_no_branch():
    assert kept_both(UNITS, REPLACED.replace("return value\n", "return float(value)\n")) == []
    assert kept_both("def f(x):\n    return x\n", "def f(x):\n    return -x\n") == []
    assert kept_both(UNITS, "def to_metres(value, unit:\n") == []


def test_only_near_misses_are_merged_the_fewest_broken_first():
    def row(n, code, passes, breaks):
        return (n, code, SimpleNamespace(passes=passes, breaks=breaks, diff_lines=4))

    miles = REPLACED.replace('"cm"', '"mi"').replace("/ 100", "* 1609")
    rows = [row(1, REPLACED, False, []), row(2, miles, True, ["t1", "t2"]), row(3, REPLACED, True, ["t1"])]
    found, how = merges(UNITS, rows)
    assert how == "merged" and len(found) == 4 and '"cm"' in found[0] and '"mi"' in found[2]
    assert merges(UNITS, rows[:1]) == ([], "merged")
    tried = [*rows, row(4, found[0], False, [])]
    assert merges(UNITS, tried)[0] == found[1:]  # one of a shape tried before is not tried again
