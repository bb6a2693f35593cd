from timekit import parse_duration


def test_minutes():
    assert parse_duration("45m") == 2700
    assert parse_duration("1h30m") == 5400
