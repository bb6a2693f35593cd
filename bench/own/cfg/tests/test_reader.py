from minicfg.reader import read_config


def test_sections_and_keys():
    assert read_config("a = 1\n[s]\nb = two\n") == {"": {"a": "1"}, "s": {"b": "two"}}


def test_comments_are_dropped():
    assert read_config("# note\na = 1  # one\n") == {"": {"a": "1"}}
