"""Whether a value a model wrote has the form of what the code gives (omni/check/forms.py), on values of no
benchmark task."""

from omni.check.forms import of_another_form, other_form


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


def test_an_iterator_compared_with_a_list_or_a_tuple_is_of_another_form():
    assert other_form("['b', 'c']", "<map object at 0x7f81ecc75c90>", iterator=True) == \
        "the code gives an iterator, which equals no list of str"
    assert other_form("(1, 2)", "<generator object pairs at 0x7f12>", iterator=True) == \
        "the code gives an iterator, which equals no tuple of int"
    assert other_form("[1]", "<map object at 0x7f81>") == ""  # not known for an iterator: not judged
    assert other_form("3", "<map object at 0x7f81>", iterator=True) == ""  # not a sequence: nothing known
    form = other_form("[2]", "<filter object at 0x7f>", iterator=True)
    said = of_another_form("evens([1, 2])", "<filter object at 0x7f>", form, iterator=True)
    assert said.endswith("Put the call in list(...), `list(evens([1, 2]))`, and write the list it should give.")
