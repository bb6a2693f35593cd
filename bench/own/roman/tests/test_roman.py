from numerals import from_roman, to_roman


def test_plain_numbers():
    assert to_roman(3) == "III"
    assert to_roman(1666) == "MDCLXVI"


def test_reads_subtractive_forms():
    assert from_roman("XIV") == 14
    assert from_roman("MCMXC") == 1990
