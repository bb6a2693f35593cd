from textkit.wrap import wrap_words


def test_exact_fill():
    assert wrap_words("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
