import webcolors


def test_percentages_round_to_the_nearest_integer():
    assert webcolors.rgb_percent_to_rgb(("50%", "50%", "50%")) == (128, 128, 128)
    assert webcolors.rgb_percent_to_rgb(("12.5%", "0%", "100%")) == (32, 0, 255)
    assert webcolors.rgb_percent_to_hex(("50%", "0%", "100%")) == "#8000ff"


def test_named_colours_round_trip_through_percentages():
    for name in ("navy", "teal", "olive", "gray"):
        assert webcolors.rgb_percent_to_name(webcolors.name_to_rgb_percent(name)) == name
