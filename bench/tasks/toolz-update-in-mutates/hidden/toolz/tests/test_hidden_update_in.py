from collections import OrderedDict

from toolz import update_in


def test_update_in_leaves_nested_input_alone():
    cfg = {"db": {"port": 5432, "host": "x"}, "debug": False}
    new = update_in(cfg, ["db", "port"], lambda p: p + 1)
    assert new == {"db": {"port": 5433, "host": "x"}, "debug": False}
    assert cfg == {"db": {"port": 5432, "host": "x"}, "debug": False}
    assert new["db"] is not cfg["db"]


def test_update_in_deep_path_uses_factory():
    d = {"a": {"b": {"c": 1}}}
    new = update_in(d, ["a", "b", "c"], str, factory=OrderedDict)
    assert new == {"a": {"b": {"c": "1"}}}
    assert isinstance(new["a"], OrderedDict) and isinstance(new["a"]["b"], OrderedDict)
    assert d == {"a": {"b": {"c": 1}}}
