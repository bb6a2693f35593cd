import cachetools
import cachetools.keys


def test_keyword_order_gives_one_key():
    assert cachetools.keys.hashkey(1, a=1, b=2) == cachetools.keys.hashkey(1, b=2, a=1)
    assert hash(cachetools.keys.hashkey(a=1, b=2)) == hash(cachetools.keys.hashkey(b=2, a=1))


def test_typed_keyword_order_gives_one_key():
    assert cachetools.keys.typedkey(a=1, b="x") == cachetools.keys.typedkey(b="x", a=1)
    assert cachetools.keys.typedkey(a=1, b="x") != cachetools.keys.typedkey(a="x", b=1)


def test_cached_call_with_keywords_reordered_runs_once():
    calls = []

    @cachetools.cached(cachetools.LRUCache(maxsize=8))
    def area(width, height):
        calls.append((width, height))
        return width * height

    assert area(width=2, height=3) == 6
    assert area(height=3, width=2) == 6
    assert calls == [(2, 3)]
