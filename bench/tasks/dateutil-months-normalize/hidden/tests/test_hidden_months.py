from dateutil.relativedelta import relativedelta


def test_twelve_months_is_a_year():
    assert relativedelta(months=12) == relativedelta(years=1)
    assert relativedelta(months=-12) == relativedelta(years=-1)
    assert relativedelta(months=14) == relativedelta(years=1, months=2)
