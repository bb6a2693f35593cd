from packaging.specifiers import SpecifierSet
from packaging.version import Version


def test_a_post_release_comes_after_its_release():
    assert Version("1.0") < Version("1.0.post1") < Version("1.0.post2") < Version("1.1")
    assert sorted(["2.0.post1", "2.0", "1.9"], key=Version) == ["1.9", "2.0", "2.0.post1"]


def test_specifiers_see_post_releases_in_order():
    assert "1.0.post1" in SpecifierSet(">=1.0,<1.1")
    assert max(["3.1", "3.1.post2", "3.1.post1"], key=Version) == "3.1.post2"
