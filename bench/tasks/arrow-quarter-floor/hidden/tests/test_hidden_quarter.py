import arrow


def test_each_month_falls_in_its_own_quarter():
    starts = {1: 1, 2: 1, 3: 1, 4: 4, 5: 4, 6: 4, 7: 7, 8: 7, 9: 7, 10: 10, 11: 10, 12: 10}
    for month, first in starts.items():
        floor, ceil = arrow.Arrow(2024, month, 15).span("quarter")
        assert floor == arrow.Arrow(2024, first, 1), month
        assert ceil == arrow.Arrow(2024, first + 2, 1).ceil("month"), month


def test_floor_of_a_quarter():
    assert arrow.get("2024-05-20").floor("quarter") == arrow.get("2024-04-01")
