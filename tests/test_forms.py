"""Whether a value a model wrote has the form of what the code gives (omni/check/forms.py), on values of no
benchmark task."""

from omni.check.forms import other_form


def test_values_of_the_code_s_form_fit_whatever_they_hold():
    assert other_form("{'name': 'Ada Lovelace'}", "{'name': 'Ada'}") == ""
    assert other_form("7.5", "7") == ""  # a number is any number
    assert other_form("['x', 'y']", "['x,y']") == ""  # a list of another length: the fix may change it
    assert other_form("'blue'", "None") == ""  # a function that returns nothing may be the problem
    assert other_form("[]", "['leftover']") == "" and other_form("{'k': [1]}", "{'k': []}") == ""
    assert other_form("{'a': {'b': 1}}", "{'a': {'b': 2, 'c': 3}}") == ""


def test_a_value_of_another_form_says_what_each_is():
    assert other_form("{'db': {'host': 'h=1'}}", "{'host': 'h'}") == \
        "the code gives a dict of str, and you wrote a dict of dict"
    assert other_form("[3, 4]", "(3, 4)") == "the code gives a tuple of int, and you wrote a list of int"
    assert other_form("'12'", "12") == "the code gives an int, and you wrote a str"
    assert other_form("{'k': 'v'}", "{'k': ['v']}") == "the code gives a dict of list, and you wrote a dict of str"


def test_what_is_not_a_literal_is_not_judged():
    assert other_form("Point(1, 2)", "(1, 2)") == ""
    assert other_form("[1, 2]", "<Span object>") == ""
    assert other_form("'" + "a" * 50, "'abc'") == ""  # a repr cut at its length limit
