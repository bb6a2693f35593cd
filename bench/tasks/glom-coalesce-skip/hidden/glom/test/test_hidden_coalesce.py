from glom import Coalesce, glom


def test_a_tuple_of_values_to_skip_skips_each_of_them():
    target = {"nick": "", "name": None, "login": "ada"}
    assert glom(target, Coalesce("nick", "name", "login", skip=(None, ""))) == "ada"
    assert glom(target, Coalesce("nick", "login", skip=("",))) == "ada"


def test_a_single_value_to_skip_still_works():
    assert glom({"a": 0, "b": 2}, Coalesce("a", "b", skip=0)) == 2
