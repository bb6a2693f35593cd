import jmespath


def test_slice_step():
    assert jmespath.search("[::2]", [0, 1, 2, 3, 4]) == [0, 2, 4]
    assert jmespath.search("[::-1]", [0, 1, 2]) == [2, 1, 0]
    assert jmespath.search("[1:3]", [0, 1, 2, 3]) == [1, 2]
