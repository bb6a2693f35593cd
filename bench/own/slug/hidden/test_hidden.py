from textkit.slug import slugify


def test_runs_of_spaces():
    assert slugify("Hello   big  World") == "hello-big-world"
