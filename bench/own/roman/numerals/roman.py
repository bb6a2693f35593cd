"""Whole numbers from 1 to 3999 as Roman numerals, and back."""

_VALUES = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]
_SUBTRACTIVE = [(900, "CM"), (400, "CD"), (90, "XC"), (40, "XL"), (9, "IX"), (4, "IV")]
_LETTERS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number: int) -> str:
    if not 0 < number < 4000:
        raise ValueError("Roman numerals are for 1 to 3999")
    written = []
    for value, letters in _VALUES:
        count, number = divmod(number, value)
        written.append(letters * count)
    return "".join(written)


def from_roman(text: str) -> int:
    total = 0
    for letter, following in zip(text, text[1:] + " "):
        value = _LETTERS[letter]
        total += -value if following != " " and _LETTERS[following] > value else value
    return total
