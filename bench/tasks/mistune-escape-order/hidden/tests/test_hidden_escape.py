import mistune


def test_text_with_angle_brackets_is_escaped_once():
    assert mistune.html("a < b & c > d") == "<p>a &lt; b &amp; c &gt; d</p>\n"
    assert mistune.html("`x<y`") == "<p><code>x&lt;y</code></p>\n"


def test_entities_written_by_the_author_survive():
    assert mistune.html("AT&amp;T") == "<p>AT&amp;T</p>\n"
