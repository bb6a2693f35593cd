import pytest
from pyparsing import DelimitedList, ParseException, Word, alphas, nums


def test_max_is_the_most_items_taken():
    two = DelimitedList(Word(alphas), max=2)
    assert two.parse_string("a,b,c").as_list() == ["a", "b"]
    with pytest.raises(ParseException):
        two.parse_string("a,b,c", parse_all=True)


def test_min_and_max_together():
    ints = DelimitedList(Word(nums), min=2, max=3)
    assert ints.parse_string("1, 2, 3", parse_all=True).as_list() == ["1", "2", "3"]
    with pytest.raises(ParseException):
        ints.parse_string("1", parse_all=True)
