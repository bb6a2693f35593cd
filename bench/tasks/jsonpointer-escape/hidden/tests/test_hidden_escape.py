from jsonpointer import JsonPointer, escape, resolve_pointer, unescape


def test_parts_round_trip():
    for part in ("a/b", "m~n", "~1", "a~/b", "/~"):
        assert unescape(escape(part)) == part
        pointer = JsonPointer.from_parts([part])
        assert pointer.parts == [part]
        assert resolve_pointer({part: 7}, pointer.path) == 7


def test_rfc_6901_examples():
    doc = {"a/b": 1, "m~n": 8}
    assert resolve_pointer(doc, "/a~1b") == 1
    assert resolve_pointer(doc, "/m~0n") == 8
    assert JsonPointer.from_parts(["a/b"]).path == "/a~1b"
