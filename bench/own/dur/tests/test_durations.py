import pytest

from timekit import format_duration, parse_duration


def test_hours_and_seconds():
    assert parse_duration("2h") == 7200
    assert parse_duration("90s") == 90


def test_rejects_words():
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_format():
    assert format_duration(3661) == "1h1m1s"
