from funcy import count_reps


def test_count_reps():
    assert count_reps([0, 1, 0]) == {0: 2, 1: 1}
    assert count_reps("abca") == {"a": 2, "b": 1, "c": 1}
    assert count_reps([]) == {}
