"""A reproduction test reply cut off at its cap, read for what it finished. A small model asked for a test file often
writes a right one and then repeats its assertions until the cap: the reply's JSON string ends mid-line, so nothing
parses, and a minute of the model's work on this CPU would be thrown away. Its complete lines are most of a file:
they are kept up to the last point where they parse, a repeated assertion or case once and only the first few, and
what is left is a test file when it still holds a test function that asserts something. Nothing is written that
the model did not write; a reply with no such part is asked again, as before."""

from __future__ import annotations

import ast
from collections import Counter

from omni.check.mend import parses

KEPT = 4  # assertions of a test function, or cases of a list, kept of a cut reply: the prompt asks for four at most
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f"}
_FENCE = "```"


def salvaged(reply: str) -> str:
    """The complete part of a cut reply as a test file, or "" when it holds no test function that asserts."""
    text, whole = _file_text(reply)
    lines = text.split("\n")
    if not whole:
        lines = lines[:-1]  # the line the cap cut
    while lines and not parses("\n".join(lines)):
        lines.pop()
    once = _once(lines)
    code = "\n".join(once if parses("\n".join(once)) else lines).strip("\n")
    return code + "\n" if code and _asserts(ast.parse(code)) else ""


def _file_text(reply: str) -> tuple[str, bool]:
    """The file as far as the reply wrote it, and whether its end was reached (a closed string or fence)."""
    key = reply.find('"test_code"')
    if key != -1:
        colon = reply.find(":", key + len('"test_code"'))
        start = reply.find('"', colon) if colon != -1 else -1
        return _json_string(reply[start + 1:]) if start != -1 else ("", False)
    fence = reply.find(_FENCE)
    if fence != -1:
        body = reply[reply.find("\n", fence) + 1:] if "\n" in reply[fence:] else ""
        end = body.find(_FENCE)
        return (body[:end], True) if end != -1 else (body, False)
    return reply, False


def _json_string(raw: str) -> tuple[str, bool]:
    """A JSON string's text from just after its opening quote, decoded as far as it goes: (text, closed)."""
    out, i = [], 0
    while i < len(raw):
        char = raw[i]
        if char == '"':
            return "".join(out), True
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = raw[i + 1:i + 2]
        if code == "u" and len(raw) >= i + 6:
            try:
                out.append(chr(int(raw[i + 2:i + 6], 16)))
            except ValueError:
                break
            i += 6
        elif code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        else:
            break  # cut inside an escape, or not JSON
    return "".join(out), False


def _once(lines: list[str]) -> list[str]:
    """The lines with an assertion, or a case of a decorator's list (`("IV", 4),`), that repeats an earlier one
    left out, and those past the first KEPT of a function or a decorator: a small model that runs on to the cap
    drifts (counting twelve M's as eleven thousand), and the first few it wrote are the ones it meant. A value's
    lines inside a function are left as they are: leaving one out would change the value."""
    seen, kept, count, decorating = set(), [], Counter(), False
    for line in lines:
        text = line.strip()
        if text.startswith(("def ", "async def ", "@", "class ")):
            count.clear()
            decorating = text.startswith("@")
        kind = "assert" if text.startswith("assert ") else "case" if decorating and _case(text) else ""
        if kind and (text in seen or count[kind] >= KEPT):
            continue
        count[kind] += 1
        seen.add(text)
        kept.append(line)
    return kept


def _case(text: str) -> bool:
    return text.startswith(("(", "[", "'", '"')) and text.endswith(",")


def _asserts(tree: ast.Module) -> bool:
    """Whether a test function asserts something: an assert statement, or pytest's raises."""
    for node in ast.walk(tree):  # a test class's methods too
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assert) or (isinstance(inner, ast.Attribute) and inner.attr == "raises"):
                    return True
    return False
