import jmespath


def test_reverse():
    assert jmespath.search("reverse(@)", [1, 2, 3]) == [3, 2, 1]
    assert jmespath.search("reverse(@)", "abc") == "cba"
    assert jmespath.search("reverse(@)", []) == []
