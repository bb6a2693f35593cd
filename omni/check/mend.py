"""A reproduction test file as a small model writes it, mended where the mending is mechanical and sure before it is
written: the code fence left inside the JSON's file text (closed or not), and a missing import of a name the
project's own tests import (the import lines omni showed it), of pytest, or of a standard library module (`time`).
The lint guard would refuse such a file (an undefined name, a syntax error), and a try of two would be spent on what
omni can write itself. Nothing is guessed: a name no shown import line binds stays undefined here (the reproduction
then asks the project where it is defined: `imported`), and the guard's message goes back to the model as before."""

from __future__ import annotations

import ast
import builtins
import sys

from omni.model.textmode import code_of

_KNOWN = {"pytest": "import pytest"}


def mended(code: str, imports: str) -> str:
    """The file with its fence taken off and the imports it lacks added at its top; the file as given when it does
    not parse once unfenced, or lacks nothing that an import line binds."""
    text = (code_of(code) or _unfenced(code)) if code.lstrip().startswith("```") else code
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lacking = _undefined(tree)
    binding = {line: _binds(line) for line in imports.splitlines()}
    lines = [line for line, names in binding.items() if names & lacking]
    bound = set().union(*(binding[line] for line in lines))
    lines += [_KNOWN.get(name) or f"import {name}" for name in sorted(lacking - bound)
              if name in _KNOWN or name in sys.stdlib_module_names]
    return imported(text, lines)


def imported(code: str, lines: list[str]) -> str:
    """The file with these import lines added at its top (after a `from __future__` line)."""
    if not lines:
        return code
    body = code.splitlines()
    at = max((i + 1 for i, line in enumerate(body) if line.startswith("from __future__")), default=0)
    return "\n".join(body[:at] + lines + body[at:])


def lacking(code: str) -> set[str]:
    """The names a file reads and binds nowhere; none when it does not parse."""
    try:
        return _undefined(ast.parse(code))
    except (SyntaxError, ValueError):
        return set()


def _unfenced(code: str) -> str:
    """A file whose opening fence line was never closed: without that line when the rest parses, else as it came."""
    rest = code.lstrip().partition("\n")[2]
    return rest if parses(rest) else code


def parses(code: str) -> bool:
    """Whether code is Python that parses."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: a null byte, on some Pythons
        return False
    return True


def _undefined(tree: ast.Module) -> set[str]:
    """Names the file reads and binds nowhere (a simple, file-wide reading: a test file's names are few)."""
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _binds(line: str) -> set[str]:
    """The names one import line binds; none when it is not one."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return set()
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, (ast.Import, ast.ImportFrom)) or any(a.name == "*" for a in node.names):
        return set()
    return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
