import tomlkit


def test_hexadecimal_integers():
    doc = tomlkit.parse("color = 0xff00ff\nmask = 0xDEAD_beef\n")
    assert doc["color"] == 0xFF00FF and doc["mask"] == 0xDEADBEEF
    assert tomlkit.dumps(doc) == "color = 0xff00ff\nmask = 0xDEAD_beef\n"


def test_other_bases_still_parse():
    doc = tomlkit.parse("o = 0o17\nb = 0b101\nd = 1_000\n")
    assert (doc["o"], doc["b"], doc["d"]) == (15, 5, 1000)
