from packaging.utils import canonicalize_name, is_normalized_name


def test_dots_become_dashes_like_underscores():
    assert canonicalize_name("Zope.Interface") == "zope-interface"
    assert canonicalize_name("a._-b") == "a-b"


def test_a_name_with_a_dot_is_not_normalized():
    assert not is_normalized_name("zope.interface")
    assert is_normalized_name("zope-interface")
