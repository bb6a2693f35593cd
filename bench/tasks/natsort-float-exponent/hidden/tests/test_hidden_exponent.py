from natsort import natsorted, ns


def test_floats_with_a_negative_exponent_sort_by_value():
    names = ["run_1e-3.log", "run_5e-10.log", "run_2e-1.log", "run_1.5.log"]
    assert natsorted(names, alg=ns.FLOAT) == ["run_5e-10.log", "run_1e-3.log", "run_2e-1.log", "run_1.5.log"]


def test_signed_reals():
    assert natsorted(["a-1e-2", "a1e-2", "a-3"], alg=ns.REAL) == ["a-3", "a-1e-2", "a1e-2"]
