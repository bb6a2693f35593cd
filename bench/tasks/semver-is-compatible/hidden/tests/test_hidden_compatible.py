import pytest

from semver import Version


def test_plugin_versions():
    host = Version.parse("2.3.1")
    assert host.is_compatible(Version.parse("2.3.0"))
    assert host.is_compatible(Version.parse("2.7.9"))
    assert not host.is_compatible(Version.parse("2.2.9"))
    assert not host.is_compatible(Version.parse("3.0.0"))
    assert not Version.parse("2.3.1-beta.1").is_compatible(Version.parse("2.3.1"))


def test_zero_major_only_with_itself():
    assert Version.parse("0.4.2").is_compatible(Version.parse("0.4.2"))
    assert not Version.parse("0.4.2").is_compatible(Version.parse("0.4.3"))


def test_other_types_refused():
    with pytest.raises(TypeError):
        Version(1, 0, 0).is_compatible("1.0.0")
