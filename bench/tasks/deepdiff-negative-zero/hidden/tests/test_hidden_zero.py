from deepdiff import DeepDiff


def test_numbers_that_round_to_zero_are_equal_whatever_their_sign():
    assert DeepDiff(-0.0001, 0.0001, significant_digits=2) == {}
    assert DeepDiff({"x": [0.0004, -0.0003]}, {"x": [-0.0002, 0.0001]}, significant_digits=3) == {}


def test_real_differences_are_still_reported():
    assert DeepDiff(-0.02, 0.02, significant_digits=2) != {}
