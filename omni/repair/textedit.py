"""An edit of a definition's text (omni/repair/statements.py: `Edit`), made and written: a node's text replaced, an
operator between two operands replaced, two nodes on one line exchanged, and the edit applied to the lines. The
mechanical kinds of omni/repair/mutants.py and omni/repair/catalogue.py write their candidates with these."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from omni.repair.statements import Edit


def at(node: ast.AST, text: str) -> Edit:
    """The node's text replaced by `text`."""
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, text)


def between(lines: list[str], left: ast.AST, right: ast.AST, old: str, new: str) -> Iterator[Edit]:
    """The operator `old` written between two operands on one line, as `new`."""
    if not old or left.end_lineno != right.lineno:
        return
    row = lines[right.lineno - 1].encode()
    gap = row[left.end_col_offset:right.col_offset].decode()
    words = gap.split()
    if " ".join(w for w in words if w not in "()") != old:
        return
    start = gap.index(old.split()[0])
    end = gap.index(old.split()[-1], start) + len(old.split()[-1])
    column = left.end_col_offset + len(gap[:start].encode())
    yield (right.lineno, column, right.lineno, column + len(gap[start:end].encode()), new)


def exchange(lines: list[str], first: ast.AST, second: ast.AST) -> Edit:
    """Two nodes on one line, the first left of the second, written in each other's place (what lies between them
    kept)."""
    row = lines[first.lineno - 1].encode()
    a, b = row[first.col_offset:first.end_col_offset], row[second.col_offset:second.end_col_offset]
    middle = row[first.end_col_offset:second.col_offset]
    return (first.lineno, first.col_offset, second.end_lineno, second.end_col_offset, (b + middle + a).decode())


def source_of(node: ast.AST, lines: list[str]) -> str:
    """A node's text as written, when it is on one line; "" when it spans more."""
    if node.lineno != node.end_lineno:
        return ""
    return lines[node.lineno - 1].encode()[node.col_offset:node.end_col_offset].decode()


def apply(lines: list[str], edit: Edit) -> str:
    first, start, last, end, text = edit
    head = lines[first - 1].encode()[:start].decode()
    tail = lines[last - 1].encode()[end:].decode()
    return "".join(lines[:first - 1]) + head + text + tail + "".join(lines[last:])
