from datetime import date, timedelta

from isodate import Duration, parse_duration


def test_negative_durations_with_years_or_months():
    assert parse_duration("-P1Y2M") == Duration(years=-1, months=-2)
    assert date(2024, 3, 31) + parse_duration("-P1M") == date(2024, 2, 29)
    assert parse_duration("-P1Y") == -parse_duration("P1Y")


def test_signs_of_day_durations_unchanged():
    assert parse_duration("-P3D") == timedelta(days=-3)
    assert parse_duration("P1Y2M") == Duration(years=1, months=2)
