"""Splits one line of comma-separated values into fields; double quotes protect commas."""


def split_row(line: str, sep: str = ",") -> list[str]:
    fields, current, quoted = [], [], False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif char == sep:
            fields.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    fields.append("".join(current).strip())
    return fields
