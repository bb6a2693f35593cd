"""Which sampled reproduction example becomes the check (omni/check/agreement.py), on examples that all show a
problem: only one that two samples wrote alike, and of those the one calling a function the goal names in its own
words, then the function most samples call, then the call and value most samples wrote, then the first."""

from __future__ import annotations

from omni.check.agreement import agreed
from omni.check.examples import Evaluation
from omni.goal.examples import Example


def shown(*examples: tuple[str, str]) -> list[Evaluation]:
    return [Evaluation(Example(expression, expected), holds=False, got="0") for expression, expected in examples]


def test_the_value_two_samples_wrote_for_one_call_wins_over_a_lone_one():
    chosen, agree = agreed(shown(("area(2, 3)", "5"), ("area(2, 3)", "6"), ("area(2, 3)", "6")),
                           "the area of a rectangle is off")
    assert str(chosen.example) == "area(2, 3) == 6" and agree == 2


def test_lone_answers_are_no_check_however_many_there_are():
    assert agreed(shown(("to_number('IV')", "5"), ("to_number('X')", "11"), ("to_number('IX')", "8")),
                  "numbers with a smaller digit first are read wrong") is None


def test_an_example_of_a_function_the_goal_names_in_its_own_words_wins_over_more_of_another():
    chosen, _ = agreed(shown(("indent_lines('a', 2)", "['  a']"), ("indent_lines('a', 2)", "['  a']"),
                             ("indent_lines('b', 2)", "['  b']"), ("to_camel('a_b')", "'aB'"),
                             ("to_camel('a_b')", "'aB'")),
                       "names written in camel case keep their underscores")
    assert chosen.example.expression == "to_camel('a_b')"


def test_the_function_most_samples_call_wins_over_another_call_written_as_often():
    chosen, agree = agreed(shown(("total([1])", "2"), ("total([1])", "2"), ("mean([1, 3])", "3"),
                                 ("mean([2, 4])", "4"), ("mean([2, 4])", "4")), "an average comes out too high")
    assert chosen.example.expression == "mean([2, 4])" and agree == 2


def test_a_method_call_is_grouped_by_the_method_and_named_by_any_call_in_it():
    chosen, _ = agreed(shown(("len(Stack().items)", "0"), ("len(Stack().items)", "0"), ("Queue(2).pop()", "None"),
                             ("Queue(2).pop()", "None")), "popping an empty queue should give nothing back")
    assert chosen.example.expression == "Queue(2).pop()"


def test_when_nothing_sets_them_apart_the_first_is_chosen_and_one_sample_may_settle_it_alone():
    chosen, agree = agreed(shown(("f(1)", "2"), ("g(1)", "3")), "it is wrong", at_least=1)
    assert chosen.example.expression == "f(1)" and agree == 1


def test_a_lone_value_the_goal_writes_out_is_a_check():
    goal = "The percentiles are off: for scores [2, 4, 9, 30] the 25th comes out 3.25, but it should be 3.5000"
    chosen, agree = agreed(shown(("pct([2, 4, 9, 30], 25)", "4.5"), ("pct([2, 4, 9, 30], 25)", "3.5000")), goal)
    assert chosen.example.expected == "3.5000" and agree == 1
    assert agreed(shown(("pct([2, 4, 9, 30], 25)", "4.5"), ("pct([2, 4, 9, 30], 75)", "3.5")), goal) is None
    quoted = "pages [1, 2, 2, 3] come out as '1-2,2-3' where they should be '1-3'"
    assert agreed(shown(("pages([1, 2, 2, 3])", "'1-3'"),), quoted)[0].example.expected == "'1-3'"


def test_a_lone_value_its_own_call_holds_is_no_check_though_the_goal_writes_it():
    goal = "parse_size('1.5k') should be 1500 and gives 15"
    assert agreed(shown(("parse_size('1.5k')", "'1.5k'"),), goal) is None  # the input, not an outcome
    assert agreed(shown(("parse_size('1.5k')", "1500"),), goal)[0].example.expected == "1500"
