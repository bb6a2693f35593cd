import inflection


def test_digit_before_capital_starts_a_word():
    assert inflection.underscore("Area51Controller") == "area51_controller"
    assert inflection.underscore("Mp3Player") == "mp3_player"
    assert inflection.tableize("Vector3Point") == "vector3_points"


def test_words_without_digits_unchanged():
    assert inflection.underscore("SpecialGuest") == "special_guest"
    assert inflection.underscore("HTMLTidy") == "html_tidy"
