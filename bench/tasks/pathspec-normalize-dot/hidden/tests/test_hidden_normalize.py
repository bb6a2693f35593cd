from pathspec.util import normalize_file


def test_strips_current_directory_prefix():
    assert normalize_file("./src/a.py") == "src/a.py"
    assert normalize_file("/src/a.py") == "src/a.py"
    assert normalize_file("src/./a.py") == "src/./a.py"
