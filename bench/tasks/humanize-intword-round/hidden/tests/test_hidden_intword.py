import humanize


def test_rounding_up_moves_to_the_next_word():
    assert humanize.intword(999_999_999) == "1.0 billion"
    assert humanize.intword(999_960_000_000) == "1.0 trillion"
    assert humanize.intword(-999_999_999) == "-1.0 billion"
    assert humanize.intword(999_960, "%.0f") == "1 million"


def test_values_that_stay_in_their_word():
    assert humanize.intword(1_200_000) == "1.2 million"
    assert humanize.intword(999_940_000) == "999.9 million"
