from textkit.slug import ascii_fold, slugify


def test_simple_title():
    assert slugify("Hello World") == "hello-world"


def test_accents_are_folded():
    assert ascii_fold("café") == "cafe"


def test_punctuation_dropped():
    assert slugify("Hello, World!") == "hello-world"
