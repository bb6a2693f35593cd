import pathspec


def test_later_negation_wins():
    spec = pathspec.PathSpec.from_lines("gitwildmatch", ["*.txt", "!keep.txt"])
    assert spec.match_file("a.txt")
    assert not spec.match_file("keep.txt")
    assert sorted(spec.match_files(["a.txt", "keep.txt", "b.py"])) == ["a.txt"]
