"""What a goal reports a call gives now, and a reproduction's call matched to it (omni/check/goal_input.py): the
same call on another state is told apart from one on the goal's input."""

from __future__ import annotations

import pytest

from omni.check.examples import Evaluation
from omni.check.goal_input import as_reported, off_input
from omni.goal.examples import Example, reported

GOAL = ("With items 1 to 5, s.upto(3, inclusive=False) returns [1, 2, 3] -- 3 should not be in it. An inclusive "
        "limit works.")


@pytest.mark.parametrize("goal, expected", [
    (GOAL, [Example("s.upto(3, inclusive=False)", "[1, 2, 3]")]),
    ("rgb(('50%', '50%')) gives (127, 127), one less than it should", [Example("rgb(('50%', '50%'))", "(127, 127)")]),
    ("`parse('-5')` returned 5 for me", [Example("parse('-5')", "5")]),
])
def test_a_call_and_the_value_the_goal_says_it_gives_now_are_read(goal, expected):
    assert reported(goal) == expected


@pytest.mark.parametrize("goal", [
    "get_name() returns 'orders' for a quoted name",  # a call with no arguments is no one case
    "upto(3) returns the wrong items",  # words, not a value
    "the limit returns [1, 2, 3] where it should not",  # no call
])
def test_no_report_is_read_where_there_is_no_call_with_a_value(goal):
    assert reported(goal) == []


def held(expression: str, got: str) -> Evaluation:
    return Evaluation(Example(expression, got), True, got)


def test_the_goals_call_on_another_state_that_holds_is_off_the_goals_input():
    said = off_input([held("Shelf([1, 2]).upto(3, inclusive=False)", "[1, 2]")], reported(GOAL))
    assert said.startswith("`Shelf([1, 2]).upto(3, inclusive=False)` gives [1, 2] on the code as it is now, but "
                           "the goal says this call gives [1, 2, 3]")


@pytest.mark.parametrize("done", [
    [held("Shelf([1, 2, 3]).upto(3, inclusive=False)", "(1, 2, 3)")],  # the goal's value: on its input
    [Evaluation(Example("Shelf([1, 2]).upto(3, inclusive=False)", "[1, 2, 3]"), False, "[1, 2]")],  # fails: shows it
    [held("Shelf([1, 2]).upto(4, inclusive=False)", "[1, 2]")],  # another call than the goal's
    [held("Shelf([1, 2]).upto(3, inclusive=False)", "<generator object at 0x7f>")],  # no literal: nothing known
])
def test_a_call_on_the_goals_input_or_another_call_is_not_judged(done):
    assert off_input(done, reported(GOAL)) == ""


def test_the_goals_call_on_its_input_asserting_the_value_the_goal_reports_is_told_its_value_is_the_problem():
    said = as_reported([held("Shelf([1, 2, 3, 4]).upto(3, inclusive=False)", "[1, 2, 3]")], reported(GOAL))
    assert said.startswith("`Shelf([1, 2, 3, 4]).upto(3, inclusive=False)` gives [1, 2, 3] on the code as it is "
                           "now, and that is what the goal reports this call gives")
    assert as_reported([held("Shelf([1, 2]).upto(3, inclusive=False)", "[1, 2]")], reported(GOAL)) == ""
    assert off_input([held("Shelf([1, 2, 3, 4]).upto(3, inclusive=False)", "[1, 2, 3]")], reported(GOAL)) == ""
