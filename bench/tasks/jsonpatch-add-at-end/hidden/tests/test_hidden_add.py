import jsonpatch
import pytest


def test_adding_at_the_index_equal_to_the_length_appends():
    doc = {"items": ["a", "b"]}
    assert jsonpatch.apply_patch(doc, [{"op": "add", "path": "/items/2", "value": "c"}]) == {"items": ["a", "b", "c"]}
    assert jsonpatch.apply_patch([], [{"op": "add", "path": "/0", "value": 1}]) == [1]


def test_past_the_end_is_still_refused():
    with pytest.raises(jsonpatch.JsonPatchConflict):
        jsonpatch.apply_patch(["a"], [{"op": "add", "path": "/2", "value": "c"}])
