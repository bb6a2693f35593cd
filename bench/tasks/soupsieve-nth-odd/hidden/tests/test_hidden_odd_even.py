import bs4
import soupsieve as sv

ROWS = "<table>" + "".join(f"<tr id='r{i}'><td>{i}</td></tr>" for i in range(1, 7)) + "</table>"


def ids(selector):
    soup = bs4.BeautifulSoup(ROWS, "html.parser")
    return [el["id"] for el in sv.select(selector, soup)]


def test_odd_and_even_rows():
    assert ids("tr:nth-child(odd)") == ["r1", "r3", "r5"]
    assert ids("tr:nth-child(even)") == ["r2", "r4", "r6"]
    assert ids("tr:nth-of-type(odd)") == ["r1", "r3", "r5"]


def test_the_formula_forms_agree():
    assert ids("tr:nth-child(2n+1)") == ids("tr:nth-child(odd)")
