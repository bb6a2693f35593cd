from minicfg.reader import read_config


def test_value_with_equals():
    assert read_config("url = http://x/?a=1&b=2\n") == {"": {"url": "http://x/?a=1&b=2"}}
