from more_itertools import split_after, split_before


def test_split_before_stops_at_maxsplit():
    lines = ["# a", "x", "# b", "y", "# c", "z"]
    got = list(split_before(lines, lambda s: s.startswith("#"), maxsplit=1))
    assert got == [["# a", "x"], ["# b", "y", "# c", "z"]]
    assert len(list(split_before(range(10), lambda n: n % 2 == 0, maxsplit=3))) == 4


def test_split_after_stops_at_maxsplit():
    got = list(split_after("a,b,c,d", lambda c: c == ",", maxsplit=1))
    assert got == [["a", ","], ["b", ",", "c", ",", "d"]]
    assert len(list(split_after(range(10), lambda n: n % 3 == 0, maxsplit=2))) == 3
