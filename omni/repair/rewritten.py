"""The code the candidates of a definition rewrite: the definition without its docstring (replace_symbol keeps
it), the file lines the failing tests point to as lines of that code, a candidate's shape, and two helpers every
kind of candidate text uses: a line's indentation, and whether a definition's text parses."""

from __future__ import annotations

import ast
import textwrap

from omni.repair.inputs import first_statement


def without_docstring(source: str) -> str:
    """The definition as the candidates are asked to rewrite it: without its docstring, which replace_symbol
    keeps. A small model copies a docstring it is shown into every candidate, and generation is what costs time
    on a CPU. Unchanged when it has none, when the docstring is the whole body, or when it shares a line with
    other code."""
    if (doc := _docstring_lines(source)) is None:
        return source
    lines = source.splitlines()
    return "\n".join(lines[:doc[0] - 1] + lines[doc[1]:])


def in_rewrite(lines: tuple[int, ...], start: int, whole: str) -> frozenset[int]:
    """File lines (of the definition that begins at line start, whole its source) as lines of the code the
    candidates rewrite (without_docstring's): the docstring's own are left out, those after it move up."""
    doc = _docstring_lines(whole) or (0, -1)
    relative = [line - start + 1 for line in lines]
    return frozenset(n - (doc[1] - doc[0] + 1 if n > doc[1] else 0) for n in relative if not doc[0] <= n <= doc[1])


def _docstring_lines(source: str) -> tuple[int, int] | None:
    """The first and last line of the definition's docstring, when without_docstring leaves it out."""
    node = first_statement(source)
    body = getattr(node, "body", [])
    if len(body) < 2 or not isinstance(body[0], ast.Expr) or not isinstance(getattr(body[0], "value", None),
                                                                             ast.Constant):
        return None
    doc, after = body[0], body[1]
    if not isinstance(doc.value.value, str) or doc.lineno <= node.lineno or after.lineno <= doc.end_lineno:
        return None
    return doc.lineno, doc.end_lineno


def shape(code: str) -> str:
    """A candidate with its formatting and comments left out: two of the same shape are one fix."""
    try:
        return ast.dump(ast.parse(textwrap.dedent(code)))
    except SyntaxError:
        return code.strip()


def indent_of(line: str) -> str:
    """The whitespace a line begins with."""
    return line[:len(line) - len(line.lstrip())]


def parses(code: str) -> bool:
    """Whether a definition's text (at any indentation) is Python."""
    try:
        ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return False
    return True
