import parse


def test_percent_type():
    assert parse.parse("a {:%} b", "a 100% b")[0] == 1
    assert parse.parse("a {:%} b", "a 50% b")[0] == 0.5
    assert abs(parse.parse("a {:%} b", "a 50.1% b")[0] - 0.501) < 1e-9
    assert parse.parse("{:%}", "abc") is None
