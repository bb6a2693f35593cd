from boltons.urlutils import URL


def test_navigate_up_keeps_directory_slash():
    assert URL('http://example.com/docs/api/index.html').navigate('..').to_text() == 'http://example.com/docs/'


def test_navigate_dot_keeps_directory_slash():
    assert URL('http://example.com/docs/api/').navigate('.').to_text() == 'http://example.com/docs/api/'


def test_normalize_trailing_dotdot():
    url = URL('http://example.com/a/b/c/..')
    url.normalize()
    assert url.to_text() == 'http://example.com/a/b/'
