"""Values as repair targets: the tables, patterns and constants a module or a class binds with one plain
assignment (pysource.values), which the functions that read them depend on. values_read names those a definition
reads; read_symbol and replace_symbol (python_tools) read and rewrite one as they do a def."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from context import Context, result
from edits import gated_write
from pysource import is_named, values
from workspace import ToolError

MAX_VALUES = 3


def values_read(text: str, path: str, name: str, start: int, end: int) -> list[dict]:
    """The values the definition `name` (lines start-end of text) reads: its module's, read by bare name, and its
    classes', read as an attribute (`self.PATTERN`); only those written with a literal in them (a table, a
    pattern, a number: not `log = logging.getLogger(__name__)`), at most MAX_VALUES, in file order."""
    lines = text.splitlines()
    bare, attributes = _reads("\n".join(lines[start - 1:end]))
    read = []
    for _, qualified, first, last, _ in values(text):
        owner, _, short = qualified.rpartition(".")
        if short.startswith("__") or not (short in bare if not owner else
                                          short in attributes and name.startswith(owner + ".")):
            continue
        if _literal("\n".join(lines[first - 1:last])):
            read.append({"path": path, "kind": "value", "name": qualified, "start": first, "end": last})
    return read[:MAX_VALUES]


def _reads(source: str) -> tuple[set[str], set[str]]:
    """The names a definition's source reads bare (`_UNIT`), and the attributes it reads of a name
    (`self.PATTERN`, `Parser.PATTERN`)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return set(), set()
    bare = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
                  and isinstance(n.value, ast.Name)}
    return bare, attributes


def _literal(source: str) -> bool:
    """Whether an assignment's value holds a literal other than None (a number, a string, a bool)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return False
    value = getattr(tree.body[0], "value", None) if tree.body else None
    return value is not None and any(isinstance(n, ast.Constant) and n.value is not None for n in ast.walk(value))


def named(text: str, symbol: str, rows: list[tuple]) -> tuple[str, int, int] | None:
    """(qualified name, first line, last line) of the value symbol names in a module's text, when none of its
    definitions (rows: pysource.definitions of text) has that name; else None."""
    if any(is_named(row[1], symbol) for row in rows):
        return None
    found = [row for row in values(text) if is_named(row[1], symbol)]
    return (found[0][1], found[0][2], found[0][3]) if len(found) == 1 else None


def replace_value(ctx: Context, file: Path, path: str, text: str, value: tuple[str, int, int], new_source: str,
                  what: str) -> dict:
    """Write new_source (an assignment to the same name) over the value's lines, at their indentation; the rest
    of the file stays byte for byte."""
    name, start, end = value
    code = textwrap.dedent(new_source).strip("\n")
    short = name.rsplit(".", 1)[-1]
    try:
        statements = ast.parse(code).body
    except SyntaxError as exc:
        return result(False, failure="lint_failed", error=f"new_source is not valid Python (line {exc.lineno}): "
                                                           f"{exc.msg}. Nothing was written.")
    first = statements[0] if statements else None
    targets = first.targets if isinstance(first, ast.Assign) else [first.target] \
        if isinstance(first, ast.AnnAssign) else []
    if len(statements) != 1 or [getattr(t, "id", None) for t in targets] != [short]:
        raise ToolError(f"{name} is a value ({path} lines {start}-{end}); new_source must be one assignment to "
                        f"it, `{short} = ...`")
    lines = text.splitlines(keepends=True)
    indent = lines[start - 1][:len(lines[start - 1]) - len(lines[start - 1].lstrip())]
    ending = "\n" if lines[end - 1].endswith("\n") else ""
    written = textwrap.indent(code, indent) + ending
    return gated_write(ctx, file, path, text, "".join(lines[:start - 1]) + written + "".join(lines[end:]),
                       f"{what} {name}")
