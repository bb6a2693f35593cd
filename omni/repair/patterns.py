"""Mechanical candidates in regular expressions, the changes mutation tools for regexes make (MutRex and kin): the
pattern a `re` call is given, with a character class that takes digits too (`[a-z]` as `[a-z\\d]`) or is negated
the other way, `+` and `*`, an optional part made required (`?` left out), a lazy repeat made greedy (`*?` as `*`),
a count one more or one less (`{2,4}` as `{2,5}`), an anchor left out (`^`, `$`, `\\b`), and a class escape the other
way (`\\s` and `\\S`). A bug in a pattern is one character in a string, which no operator mutation reaches and a
small model rewriting the function rarely touches. Only a pattern written as one string literal in the call
itself is changed, and only into one that compiles; omni/repair/mutants.py takes these in turn with its kinds."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

from omni.repair.statements import Edit

_CALLS = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"}
_MODULES = {"re", "regex"}
_OTHER_WAY = {"s": "S", "S": "s", "w": "W", "W": "w", "d": "D", "D": "d"}
_LETTERS = re.compile(r"a-z|A-Z")
_COUNT = re.compile(r"\{(\d+)(,(\d*))?\}")


def patterns(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The pattern of a call of `re.sub`, `re.compile`, ... written with one change, each variant that compiles."""
    given = _pattern_given(node)
    if given is None:
        return
    written = lines[given.lineno - 1].encode()[given.col_offset:given.end_col_offset].decode()
    if not _one_literal(written):
        return
    for changed in dict.fromkeys(variants(given.value)):
        literal = _literal(changed, written)
        if changed != given.value and literal and _compiles(changed):
            yield (given.lineno, given.col_offset, given.end_lineno, given.end_col_offset, literal)


def variants(pattern: str) -> Iterator[str]:
    """The pattern with one change each: its character classes first, then its repeats, anchors and escapes."""
    tokens = list(_tokens(pattern))
    for start, end, kind in tokens:
        if kind == "class":
            body = pattern[start + 1:end - 1]
            if _LETTERS.search(body) and "\\d" not in body and "0-9" not in body:
                yield pattern[:end - 1] + "\\d" + pattern[end - 1:]
            yield pattern[:start + 1] + (body[1:] if body.startswith("^") else "^" + body) + pattern[end - 1:]
    for start, end, kind in tokens:
        text = pattern[start:end]
        if kind == "repeat" and text.endswith("?") and len(text) > 1:
            yield pattern[:end - 1] + pattern[end:]  # lazy made greedy
        elif kind == "repeat" and text in ("+", "*"):
            yield pattern[:start] + ("*" if text == "+" else "+") + pattern[end:]
        elif kind == "repeat" and text == "?":
            yield pattern[:start] + pattern[end:]
        elif kind == "count":
            yield from _counts(pattern, start, end)
        elif kind == "anchor":
            yield pattern[:start] + pattern[end:]
        elif kind == "escape" and text[1] in _OTHER_WAY:
            yield pattern[:start + 1] + _OTHER_WAY[text[1]] + pattern[end:]


def _tokens(pattern: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of the parts a change is made in: "class" (`[...]`, whole), "repeat" (`+`, `*`, `?`, with
    a lazy `?` after it), "count" (`{m,n}`), "anchor" (`^` first, `$` last, `\\b`), "escape" (`\\s` and the like,
    outside a class); `(?` and the rest are passed over."""
    n, i = len(pattern), 0
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            yield i, i + 2, "anchor" if pattern[i + 1] == "b" else "escape"
            i += 2
        elif char == "[":
            end = _class_end(pattern, i)
            if end is None:
                return
            yield i, end, "class"
            i = end
        elif char == "(" and pattern.startswith("(?", i):
            i += 2
        elif char in "+*?":
            lazy = i + 1 < n and pattern[i + 1] == "?"
            yield i, i + 1 + lazy, "repeat"
            i += 1 + lazy
        elif char == "{" and (count := _COUNT.match(pattern, i)):
            yield i, count.end(), "count"
            i = count.end()
        else:
            if (char == "^" and i == 0) or (char == "$" and i == n - 1):
                yield i, i + 1, "anchor"
            i += 1


def _class_end(pattern: str, start: int) -> int | None:
    """The index just after the `]` that closes the class opened at start (a `]` first in it is a member)."""
    i = start + 1 + pattern.startswith("^", start + 1)
    i += pattern.startswith("]", i)
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    return None


def _counts(pattern: str, start: int, end: int) -> Iterator[str]:
    """A count's bounds one more and one less, each in turn (`{2,4}`: `{3,4}`, `{1,4}`, `{2,5}`, `{2,3}`)."""
    count = _COUNT.match(pattern, start)
    for group in (1, 3):
        if count.group(group):
            value = int(count.group(group))
            for other in (value + 1, value - 1):
                if other >= 0:
                    yield pattern[:count.start(group)] + str(other) + pattern[count.end(group):]


def _pattern_given(node: ast.AST) -> ast.Constant | None:
    """The string literal a call of the re module (or regex) is given as its pattern, on one line."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CALLS
            and isinstance(node.func.value, ast.Name) and node.func.value.id in _MODULES):
        return None
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pattern"), None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str) and given.lineno == given.end_lineno:
        return given
    return None


def _one_literal(written: str) -> bool:
    """Whether the source text is one string literal (not two written side by side), with no bytes or f prefix."""
    try:
        found = [t for t in tokenize.generate_tokens(io.StringIO(written).readline)
                 if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(found) == 1 and found[0].type == tokenize.STRING and not re.match(r"(?i)[ru]*[bf]", written)


def _literal(value: str, written: str) -> str:
    """value written as the literal `written` is: raw stays raw, the same quotes; "" when it cannot be."""
    prefix = re.match(r"(?i)[ru]*", written).group(0)
    quote = written[len(prefix):][:3] if written[len(prefix):][:3] in ('"""', "'''") else written[len(prefix)]
    if "r" in prefix.lower():
        ends_open = (len(value) - len(value.rstrip("\\"))) % 2
        return "" if quote[0] in value or "\n" in value or ends_open else f"{prefix}{quote}{value}{quote}"
    if not value.isprintable():
        return ""
    return prefix + quote + value.replace("\\", "\\\\").replace(quote[0], "\\" + quote[0]) + quote


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return False
    return True
