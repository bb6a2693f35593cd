"""Near misses merged with the code as it is. A candidate that makes the check pass and breaks tests that passed
before has often turned a case the code handles into the case the goal is about: a small model rewrites the nearest
branch instead of adding one beside it (`if url.startswith('http://')` became `if url.startswith('ftp://')`, and every
test of http broke). Its merges keep both: the branch as it is, with the candidate's as an `elif` after it, and the
candidate's with the branch as it is after it. No model call; verified repair tries them after each round of samples
that settled nothing, from the near misses of every round of the call so far (the one-change candidates' too),
judged as every candidate is (omni/repair/verified.py)."""

from __future__ import annotations

import ast
import textwrap

from omni.repair.rewritten import indent_of, parses, shape

MAX_MERGED = 3  # near misses merged, the fewest broken tests first


def merges(original: str, rows: list) -> tuple[list[str], str]:
    """The merges of the near misses among rows ((id, code, outcome): those that pass the check and break tests)
    with the definition as it is (original), each once and none of a shape tried before; and how they were made,
    for verified repair's rounds."""
    near = sorted((r for r in rows if r[1] and r[2] and r[2].passes and r[2].breaks),
                  key=lambda r: (len(r[2].breaks), r[2].diff_lines))
    tried = {shape(code) for _, code, _ in rows if code}
    found: list[str] = []
    for _, code, _ in near[:MAX_MERGED]:
        found += [m for m in kept_both(original, code) if m not in found and shape(m) not in tried]
    return found, "merged"


def kept_both(original: str, candidate: str) -> list[str]:
    """The candidate with the one `if` statement of original it replaced kept too: the branch as it was first and
    the candidate's as its `elif`, then the other way round (each only where the first ends without an `else`).
    None when the two definitions differ in more than one statement of one block, or that is no `if` on both sides."""
    before, after = textwrap.dedent(original), textwrap.dedent(candidate)
    try:
        old_def, new_def = ast.parse(before).body[0], ast.parse(after).body[0]
    except (SyntaxError, IndexError):
        return []
    pair = _replaced(_body(old_def), _body(new_def)) if isinstance(old_def, type(new_def)) else None
    if pair is None:
        return []
    old, new = pair
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    indent = indent_of(new_lines[new.lineno - 1])
    if new.col_offset != len(indent) or old.col_offset != len(indent_of(old_lines[old.lineno - 1])):
        return []  # shares its line with other code
    kept = _reindented(old_lines[old.lineno - 1:old.end_lineno], indent)
    written = new_lines[new.lineno - 1:new.end_lineno]
    head, tail = new_lines[:new.lineno - 1], new_lines[new.end_lineno:]
    orders = [(kept, written, old), (written, kept, new)]
    found = []
    for first, second, chain in orders:
        if not _open(chain):
            continue
        text = "".join(head + _ended(first) + _as_elif(second, indent) + tail)
        if parses(text):
            found.append(textwrap.indent(text, indent_of(candidate.lstrip("\n"))))
    return found


def _replaced(old: list[ast.stmt], new: list[ast.stmt]) -> tuple[ast.If, ast.If] | None:
    """The two `if` statements where the blocks old and new differ, when that is their only difference: found in
    the blocks of one compound statement whose header the two share, or the two statements themselves."""
    if len(old) != len(new):
        return None
    differ = [(a, b) for a, b in zip(old, new, strict=True) if ast.dump(a) != ast.dump(b)]
    if len(differ) != 1:
        return None
    a, b = differ[0]
    if isinstance(a, ast.If) and isinstance(b, ast.If) and ast.dump(a.test) != ast.dump(b.test):
        return a, b
    if type(a) is not type(b) or _header(a) != _header(b):
        return None
    blocks = [(x, y) for x, y in zip(_blocks(a), _blocks(b), strict=True) if ast.dump(ast.Module(x, []))
              != ast.dump(ast.Module(y, []))]
    return _replaced(*blocks[0]) if len(blocks) == 1 else None


def _body(node: ast.AST) -> list[ast.stmt]:
    """A definition's statements, without its docstring (a candidate is asked for without it)."""
    body = list(getattr(node, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    return [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]


def _header(node: ast.AST) -> list[str]:
    """A compound statement without its blocks: `for x in xs:`, `while n:`, `if a:`."""
    return [_dumped(v) for f, v in ast.iter_fields(node) if f not in ("body", "orelse", "finalbody", "handlers")]


def _dumped(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(_dumped, value)) + "]"
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def _open(node: ast.If) -> bool:
    """Whether an `if` chain ends without an `else` (another branch can follow it)."""
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
    return not node.orelse


def _reindented(lines: list[str], indent: str) -> list[str]:
    """lines moved from their first line's indentation to indent."""
    was = indent_of(lines[0]) if lines else ""
    return [indent + line[len(was):] if line.startswith(was) else line for line in lines]


def _ended(lines: list[str]) -> list[str]:
    return lines[:-1] + [lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"]


def _as_elif(lines: list[str], indent: str) -> list[str]:
    first = lines[0][len(indent):]
    return [indent + "el" + first, *lines[1:]] if first.startswith("if") else lines
