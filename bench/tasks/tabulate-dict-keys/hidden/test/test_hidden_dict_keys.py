from tabulate import tabulate


def test_keys_of_later_rows_become_columns():
    rows = [{"name": "ada", "age": 36}, {"name": "bob", "age": 41, "team": "ops"}, {"name": "cy", "email": "c@x"}]
    out = tabulate(rows, headers="keys", tablefmt="plain")
    lines = out.splitlines()
    assert lines[0].split() == ["name", "age", "team", "email"]
    assert "ops" in lines[2] and "c@x" in lines[3]


def test_dict_headers_cover_every_key():
    rows = [{"a": 1}, {"b": 2}]
    out = tabulate(rows, headers={"a": "A", "b": "B"}, tablefmt="plain")
    assert out.splitlines()[0].split() == ["A", "B"]
