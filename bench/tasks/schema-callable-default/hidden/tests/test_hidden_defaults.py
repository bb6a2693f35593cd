from schema import Optional, Schema


def test_a_callable_default_is_called_for_each_validation():
    schema = Schema({"name": str, Optional("tags", default=list): [str]})
    first, second = schema.validate({"name": "a"}), schema.validate({"name": "b"})
    assert first == {"name": "a", "tags": []} and second["tags"] == []
    first["tags"].append("x")
    assert second["tags"] == []  # a fresh list each time


def test_a_plain_default_is_used_as_it_is():
    assert Schema({Optional("n", default=3): int}).validate({}) == {"n": 3}
