from jinja2 import Environment


def render(source, **values):
    return Environment().from_string(source).render(**values)


def test_indent_keeps_the_trailing_newline():
    assert render("{{ x|indent(2) }}", x="a:\nb: 1\n") == "a:\n  b: 1\n"
    assert render("{{ x|indent(2, first=True) }}", x="k: v\n") == "  k: v\n"


def test_indent_of_empty_and_blank_text():
    assert render("[{{ x|indent }}]", x="") == "[]"
    assert render("{{ x|indent(2, blank=True) }}", x="a\n\nb") == "a\n  \n  b"
