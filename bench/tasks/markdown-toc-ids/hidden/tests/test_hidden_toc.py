import markdown


def ids(text):
    md = markdown.Markdown(extensions=["toc"])
    html = md.convert(text)
    return [line.split('id="')[1].split('"')[0] for line in html.splitlines() if 'id="' in line]


def test_heading_ids_are_lower_case():
    assert ids("# Hello World\n") == ["hello-world"]
    assert ids("## Release Notes 2.0\n") == ["release-notes-20"]


def test_repeated_headings_get_numbered_ids():
    assert ids("# Intro\n\n# Intro\n\n# Intro\n") == ["intro", "intro_1", "intro_2"]
