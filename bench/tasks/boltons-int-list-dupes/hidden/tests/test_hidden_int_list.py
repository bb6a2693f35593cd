from boltons.strutils import format_int_list, parse_int_list


def test_repeated_value_inside_a_range():
    assert format_int_list([1, 2, 2, 3]) == '1-3'


def test_repeated_value_before_a_range():
    assert format_int_list([5, 5, 6]) == '5-6'
    assert format_int_list([4, 4]) == '4'


def test_round_trip_with_duplicates():
    pages = [9, 1, 2, 2, 3, 7, 7]
    assert format_int_list(pages) == '1-3,7,9'
    assert parse_int_list(format_int_list(pages)) == [1, 2, 3, 7, 9]
