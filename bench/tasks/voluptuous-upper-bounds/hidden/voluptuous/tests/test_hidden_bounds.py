import pytest

from voluptuous import Invalid, Length, Range, Schema


def test_an_upper_bound_is_included():
    assert Schema(Range(min=1, max=10))(10) == 10
    assert Schema(Length(max=3))("abc") == "abc"
    assert Schema({"code": Length(min=2, max=2)})({"code": "fr"}) == {"code": "fr"}


def test_values_past_the_bound_are_still_refused():
    with pytest.raises(Invalid):
        Schema(Range(max=10))(11)
    with pytest.raises(Invalid):
        Schema(Length(max=3))("abcd")
    with pytest.raises(Invalid):
        Schema(Range(max=10, max_included=False))(10)
