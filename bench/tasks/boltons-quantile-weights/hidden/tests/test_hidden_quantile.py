from boltons.statsutils import Stats


def test_quartiles_interpolate_between_neighbours():
    stats = Stats([1, 2, 3, 10])
    assert stats.get_quantile(0.25) == 1.75
    assert stats.get_quantile(0.75) == 4.75
    assert stats.iqr == 3.0


def test_decile_of_a_range():
    assert abs(Stats(range(100)).get_quantile(0.9) - 89.1) < 1e-9


def test_median_and_exact_positions_unchanged():
    assert Stats([1, 2, 3, 10]).median == 2.5
    assert Stats([4, 8, 15, 16, 23]).get_quantile(0.25) == 8
