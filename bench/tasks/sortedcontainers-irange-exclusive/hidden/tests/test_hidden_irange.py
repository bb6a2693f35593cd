from sortedcontainers import SortedDict, SortedList, SortedSet


def test_sorted_dict_irange_excludes_maximum():
    d = SortedDict(a=1, b=2, c=3, d=4, e=5)
    assert list(d.irange('b', 'd', inclusive=(True, False))) == ['b', 'c']


def test_sorted_list_irange_exclusive_both_ends():
    sl = SortedList(range(10))
    assert list(sl.irange(2, 5, inclusive=(False, False))) == [3, 4]
    assert list(sl.irange(2, 5, inclusive=(False, False), reverse=True)) == [4, 3]


def test_exclusive_maximum_across_sublists():
    sl = SortedList(range(0, 5000, 5))
    got = list(sl.irange(100, 3000, inclusive=(True, False)))
    assert got[0] == 100 and got[-1] == 2995 and 3000 not in got


def test_sorted_set_irange_inclusive_unchanged():
    s = SortedSet([1, 3, 5, 7])
    assert list(s.irange(3, 7)) == [3, 5, 7]
    assert list(s.irange(3, 6, inclusive=(True, False))) == [3, 5]
