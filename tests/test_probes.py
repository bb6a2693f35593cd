"""Probes: the calls near the goal's examples that tell passing candidate rewrites apart."""

from __future__ import annotations

import pytest

from omni.goal.reading import read_goal
from omni.repair.probes import MAX_AROUND, Probes, behaviour, goal_probes, left_as_it_was

STEPS = ("Steps in ranges are ignored: ranger.pick('[::2]', [0, 1, 2, 3, 4]) returns the whole list "
         "instead of [0, 2, 4], and '[::-1]' does not reverse.")


def wrong(goal: str):
    return read_goal(goal).wrong


def test_a_quoted_value_the_goal_says_goes_wrong_stands_in_for_the_argument_it_resembles():
    probes = goal_probes(wrong(STEPS), ["ranger.pick('[::2]', [0, 1, 2, 3, 4])"])
    assert probes.named == ["ranger.pick('[::-1]', [0, 1, 2, 3, 4])"]


@pytest.mark.parametrize("goal", [
    "'{:%}' should match a number followed by a percent sign: f('a {:%} b', 'a 50% b') == 0.5",  # no "goes wrong"
    "f('[::2]', [0, 1]) gives [0, 1] instead of [0], and 'hello world' does not work",  # nothing like an argument
    "f('[::2]', [0, 1]) gives [0, 1] instead of [0]: '[::2]' is ignored",  # the example's own value
])
def test_no_named_probe_without_a_quoted_value_that_goes_wrong_and_fits_an_argument(goal):
    assert goal_probes(wrong(goal), ["f('[::2]', [0, 1])"]).named == []


def test_around_probes_put_ordinary_values_in_each_literal_argument_and_leave_other_code_alone():
    probes = goal_probes((), ["pkg.search('reverse(@)', [1, 2, 3])", "rev(items=[1], key=k)"])
    assert "pkg.search('reverse(@)', 'abc')" in probes.around and "pkg.search([], [1, 2, 3])" in probes.around
    assert "rev(items=None, key=k)" in probes.around
    assert not any("key=[]" in p or "key=0" in p for p in probes.around)  # k is a name, not a value
    assert "rev(items=[1], key=k)" not in probes.around  # [1] is one of the values: the example itself
    assert len(probes.around) == MAX_AROUND  # of 3 * 9 - 1, each argument in turn: all three get some


def test_a_rewrite_that_leaves_a_named_probe_as_it_was_is_told_so_and_one_that_raised_before_is_not_asked():
    probes = Probes(named=["f('[::-1]', [0, 1])", "f('[x]', [0])"])
    before = [{"got": "[0, 1]", "raised": ""}, {"got": "ValueError: bad", "raised": "ValueError"}]
    assert "f('[::-1]', [0, 1]) still gives [0, 1], as before" in left_as_it_was(
        probes, before, [{"got": "[0, 1]", "raised": ""}, {"got": "ValueError: bad", "raised": "ValueError"}])
    assert left_as_it_was(probes, before, [{"got": "[1, 0]", "raised": ""},
                                           {"got": "ValueError: bad", "raised": "ValueError"}]) == ""
    assert left_as_it_was(probes, before, []) == ""  # the probes did not run: nothing is said


def test_behaviour_counts_changed_probes_by_value_with_addresses_aside_and_exceptions_by_type():
    probes = Probes(around=["f('')", "f(0)", "f(None)"])
    before = [{"got": "''", "raised": ""}, {"got": "TypeError: not iterable", "raised": "TypeError"},
              {"got": "<A at 0x7f01>", "value": "<A>", "raised": ""}]  # the sandbox leaves addresses out of value
    after = [{"got": "[]", "raised": ""}, {"got": "TypeError: not subscriptable", "raised": "TypeError"},
             {"got": "<A at 0x7f99>", "value": "<A>", "raised": ""}]
    assert behaviour(probes, before, after) == (("[]", "TypeError", "<A>"), 1)
    assert behaviour(probes, before, after[:2]) == ((), 0)  # cut short: no behaviour to tell apart
