from textkit.wrap import wrap_words


def test_wraps_between_words():
    assert wrap_words("a bb ccc dddd", 6) == ["a bb", "ccc", "dddd"]
