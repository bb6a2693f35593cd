from rowsplit import split_row


def test_quoted_comma():
    assert split_row('x,"a, b",y') == ["x", "a, b", "y"]
