from rowsplit import split_row


def test_plain_fields():
    assert split_row("a, b,c") == ["a", "b", "c"]


def test_other_separator():
    assert split_row("a;b", sep=";") == ["a", "b"]
