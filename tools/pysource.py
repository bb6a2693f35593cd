"""Python source as data: the definitions of a module, read with Python's own ast."""

from __future__ import annotations

import ast
import difflib

from workspace import ToolError, not_utf8


SIGNATURE_CHARS = 160  # a member's parameters in a long class's list, at most


def parameters(text: str) -> dict[int, str]:
    """Per function of a module that parses, at its first line (definitions' start), its parameter list on one
    line as Python reads it (`(self, maxsize, ttl, timer=time.monotonic)`): how to call it, which a member's name
    alone does not say; cut at SIGNATURE_CHARS."""
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            said = f"({ast.unparse(node.args)})"
            found[_first_line(node)] = said if len(said) <= SIGNATURE_CHARS else said[:SIGNATURE_CHARS - 2] + "…)"
    return found


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """A definition's first line: its first decorator's, when it has one."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def definitions(text: str, path: str) -> list[tuple[str, str, int, int, int]]:
    """(kind, qualified name, first line, last line, depth) of every class and function.

    Read with Python's own ast, not libcst: the same names and line ranges, but about 40 ms for a
    5,000-line module where libcst's position metadata takes over a second (bench/outline_5k.py).
    """
    if not_utf8(text):
        raise ToolError(f"{path} is not valid UTF-8 ({not_utf8(text)}); it cannot be parsed as Python. Read it "
                        "with read_file, and edit it with replace_in_file, which keeps every byte it does not change.")
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ToolError(f"{path} does not parse as Python (line {exc.lineno}): {exc.msg}. "
                        "Fix it with replace_in_file first.") from exc
    rows: list[tuple[str, str, int, int, int]] = []

    def walk(node, prefix: str, in_class: bool, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                kind = "class" if isinstance(child, ast.ClassDef) else ("method" if in_class else "def")
                rows.append((kind, name, _first_line(child), child.end_lineno, depth))
                walk(child, name + ".", isinstance(child, ast.ClassDef), depth + 1)
            elif not isinstance(child, (ast.expr, ast.Lambda)):
                walk(child, prefix, in_class, depth)

    walk(tree, "", False, 0)
    return rows


def is_named(name: str, symbol: str) -> bool:
    """Whether a qualified name (Class.method) is the one symbol names: itself, or by its last parts."""
    return name == symbol or name.endswith("." + symbol)


def changed_definitions(before: str | None, after: str) -> list[str]:
    """The innermost definitions (qualified names) holding the lines an edit changed, in file order."""
    if not before:
        return []
    try:
        rows = definitions(after, "")
    except ToolError:
        return []
    found: list[str] = []
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        for line in range(j1 + 1, max(j1 + 1, j2) + 1) if tag != "equal" else ():
            holding = [r for r in rows if r[2] <= line <= r[3]]
            name = max(holding, key=lambda r: r[4])[1] if holding else None
            if name and name not in found:
                found.append(name)
    return found


def values(text: str) -> list[tuple[str, str, int, int, int]]:
    """("value", qualified name, first line, last line, depth) of every name a module or a class body binds with
    one plain assignment (`_UNIT = {...}`, `Parser.PATTERN: str = "..."`): the tables, patterns and constants a
    function reads. A name bound twice at one level is left out (which one is meant cannot be told), and so is a
    statement that shares a line with another (`A = 1; B = 2`, `class C: D = 3`): its lines are not its own."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    rows: list[tuple[str, str, int, int, int]] = []

    def walk(body: list[ast.stmt], prefix: str, depth: int, header: int = 0) -> None:
        bound: dict[str, list[ast.stmt]] = {}
        shared = {id(s) for a, b in zip(body, body[1:], strict=False) if b.lineno <= a.end_lineno for s in (a, b)}
        shared |= {id(body[0])} if body and body[0].lineno == header else set()
        for statement in body:
            if isinstance(statement, ast.ClassDef):
                walk(statement.body, f"{prefix}{statement.name}.", depth + 1, statement.lineno)
            for name in _assigned(statement):
                bound.setdefault(name, []).append(statement)
        rows.extend(("value", prefix + name, s[0].lineno, s[0].end_lineno, depth) for name, s in bound.items()
                    if len(s) == 1 and _plain(s[0]) and id(s[0]) not in shared)

    walk(tree.body, "", 0)
    return sorted(rows, key=lambda r: r[2])


def _assigned(statement: ast.stmt) -> list[str]:
    """The names a statement binds at its own level (any form: a plain assignment, an augmented one, a loop's)."""
    if isinstance(statement, ast.Assign):
        return [n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    return []


def _plain(statement: ast.stmt) -> bool:
    """One name given one value: `NAME = value` or `NAME: type = value`."""
    if isinstance(statement, ast.Assign):
        return len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
    return isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
        and statement.value is not None
