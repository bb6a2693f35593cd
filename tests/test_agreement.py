"""Which sampled reproduction example becomes the check (omni/check/agreement.py), on examples that all show a
problem: the goal's own words first, then the function most samples call, then the call and value most samples
wrote, then the first."""

from __future__ import annotations

from omni.check.agreement import agreed
from omni.check.examples import Evaluation
from omni.goal.examples import Example


def shown(*examples: tuple[str, str]) -> list[Evaluation]:
    return [Evaluation(Example(expression, expected), holds=False, got="0") for expression, expected in examples]


def test_the_value_most_samples_wrote_for_one_call_wins_over_a_lone_one():
    chosen, agree = agreed(shown(("area(2, 3)", "5"), ("area(2, 3)", "6"), ("area(2, 3)", "6")),
                           "the area of a rectangle is off")
    assert str(chosen.example) == "area(2, 3) == 6" and agree == 2


def test_an_example_of_a_function_the_goal_names_in_its_own_words_wins_over_more_of_another():
    chosen, _ = agreed(shown(("indent_lines('a', 2)", "['  a']"), ("indent_lines('b', 2)", "['  b']"),
                             ("to_camel('a_b')", "'aB'")),
                       "names written in camel case keep their underscores")
    assert chosen.example.expression == "to_camel('a_b')"


def test_the_function_most_samples_call_wins_then_the_first_of_its_calls():
    chosen, agree = agreed(shown(("total([1])", "2"), ("mean([1, 3])", "2"), ("mean([2, 4])", "3")),
                           "an average comes out too high")
    assert chosen.example.expression == "mean([1, 3])" and agree == 1


def test_a_method_call_is_grouped_by_the_method_and_named_by_any_call_in_it():
    chosen, _ = agreed(shown(("len(Stack().items)", "0"), ("Queue(2).pop()", "None"), ("Queue(3).pop()", "None")),
                       "popping an empty queue should give nothing back")
    assert chosen.example.expression == "Queue(2).pop()"


def test_when_nothing_sets_them_apart_the_first_is_chosen():
    chosen, agree = agreed(shown(("f(1)", "2"), ("g(1)", "3")), "it is wrong")
    assert chosen.example.expression == "f(1)" and agree == 1
