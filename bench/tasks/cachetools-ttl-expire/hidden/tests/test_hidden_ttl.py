from cachetools import TTLCache


class Clock:
    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now


def test_setting_a_key_again_restarts_its_ttl():
    clock = Clock()
    cache = TTLCache(maxsize=10, ttl=10, timer=clock)
    cache["session"] = "a"
    clock.now = 8
    cache["session"] = "b"
    clock.now = 15
    assert "session" in cache
    assert cache["session"] == "b"
    clock.now = 18
    assert "session" not in cache


def test_expire_order_follows_the_last_write():
    clock = Clock()
    cache = TTLCache(maxsize=10, ttl=10, timer=clock)
    cache["a"] = 1
    clock.now = 2
    cache["b"] = 2
    clock.now = 4
    cache["a"] = 3
    clock.now = 12
    assert list(cache.expire()) == [("b", 2)]
    assert dict(cache) == {"a": 3}
