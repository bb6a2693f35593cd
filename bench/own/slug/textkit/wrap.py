"""Word wrapping."""


def wrap_words(text: str, width: int) -> list[str]:
    """Lines of at most width characters, broken between words."""
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines
