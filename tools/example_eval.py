"""Evaluates the goal's examples in the project's Python, in the repository root.

argv[1] is JSON: [{"expression": ..., "expected": ...}]. Prints a marker line, then one JSON list with, for
each example, {"holds": bool, "got": repr or "Type: message", "value": the repr without object addresses (what
compares across runs of the same code), "raised": exception type name or "", "iterator": whether what it gave is
an iterator (a map object, a generator), which equals no list}.
An example without "expected" is a probe: only what it gives is wanted ("holds" is then false).
With argv[2] == "--trace", each also has "called": the repository's functions (outside the tests) that its
expression ran, in the order first called, as [path, qualified name, first line].
A name an example uses is looked up as a module of that name, or as a top-level definition in the repository
(outside the tests), whichever fits how it is used: `parse.parse(...)` wants the module, `word_count(...)`
the function. A module's submodules that an attribute chain names (`pkg.sub.f()`) are imported.
Only the standard library is used: this runs in whatever Python the project has.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import functools
import importlib
import json
import os
import re
import sys

MARKER = "@@omni-examples@@"
SKIP_DIRS = {"node_modules", "build", "dist", "venv", ".venv", "__pycache__", "site-packages"}


def module_of(path: str) -> str:
    parts = os.path.relpath(path)[:-3].split(os.sep)
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def defining_modules(name: str, root: str = "."):
    """The modules of the repository at root, outside its tests, that define name at their top (def, class,
    assignment), as dotted names."""
    pattern = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", re.M)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and "test" not in d)
        for file in sorted(files):
            if not file.endswith(".py") or file.startswith("test") or file in ("setup.py", "conftest.py"):
                continue
            try:  # a module that is not UTF-8 (a coding line) still imports: its names are ASCII to find
                with open(os.path.join(folder, file), encoding="utf-8", errors="surrogateescape") as handle:
                    text = handle.read()
            except OSError:
                continue
            if pattern.search(text):
                yield module_of(os.path.relpath(os.path.join(folder, file), root))


def from_module(name: str):
    return importlib.import_module(name)


def from_definition(name: str):
    for module in defining_modules(name):
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    raise NameError(f"{name} is not defined in the repository")


@functools.lru_cache(maxsize=None)  # probes use the same names many times: the repository is walked once
def resolve(name: str, called: bool):
    """A name called directly is a definition first; a name with attributes is a module first."""
    ways = (from_definition, from_module) if called else (from_module, from_definition)
    try:
        return ways[0](name)
    except (ImportError, NameError) as first:
        try:
            return ways[1](name)
        except (ImportError, NameError):
            raise first from None


def namespace(*sources: str) -> dict:
    trees = [ast.parse(source, mode="eval") for source in sources]
    bound = {node.id for tree in trees for node in ast.walk(tree)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {arg.arg for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Lambda)
              for arg in node.args.args}
    called = {node.func.id for tree in trees for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    names = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names \
                    and node.id not in bound and not hasattr(builtins, node.id):
                names[node.id] = resolve(node.id, node.id in called)
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(names.get(dotted(node).partition(".")[0]),
                                                                type(sys)):
                import_submodules(dotted(node))
    return names


def dotted(node: ast.expr) -> str:
    """`a.b.c` for an attribute chain on a name, else "" (`f().b` is no chain)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def import_submodules(chain: str) -> None:
    """A module's submodules that a chain reaches (`pkg.sub.f`: pkg.sub), imported so the attribute exists, as
    `import pkg.sub` in a test would make it: a package does not import each of its submodules itself. Each prefix
    in turn, until one is not a module."""
    parts = chain.split(".")
    for end in range(2, len(parts) + 1):
        try:
            importlib.import_module(".".join(parts[:end]))
        except Exception:  # noqa: BLE001 - not a module (an attribute), or one that fails: the eval says what
            return


class Calls:
    """The repository's own functions a piece of code runs (sys.setprofile), first call first."""

    def __init__(self):
        self.root, self.seen, self.called = os.getcwd() + os.sep, set(), []

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event != "call" or code in self.seen:
            return
        self.seen.add(code)
        path = code.co_filename
        if not path.startswith(self.root) or code.co_name.startswith("<"):
            return
        relative = os.path.relpath(path, self.root)
        if any(part.startswith("test") or part in SKIP_DIRS for part in relative.split(os.sep)):
            return
        self.called.append([relative, getattr(code, "co_qualname", code.co_name), code.co_firstlineno])


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # `<Node object at 0x7f...>` differs from one process to the next


def evaluate(example: dict, trace: bool = False) -> dict:
    calls = Calls()
    try:
        expected = example.get("expected")
        names = namespace(example["expression"], *([expected] if expected else []))
        sys.setprofile(calls if trace else None)
        try:
            got = eval(example["expression"], names)  # noqa: S307 - the user's own example, in the sandbox
        finally:
            sys.setprofile(None)
        holds = bool(got == eval(expected, names)) if expected else False  # noqa: S307
        shown = repr(got)[:300]
        found = {"holds": holds, "got": shown, "value": ADDRESS.sub("", shown), "raised": "",
                 "iterator": isinstance(got, collections.abc.Iterator)}
    except Exception as exc:  # noqa: BLE001 - whatever the code raises is the answer
        shown = f"{type(exc).__name__}: {exc}"[:300]
        found = {"holds": False, "got": shown, "value": ADDRESS.sub("", shown), "raised": type(exc).__name__,
                 "iterator": False}
    return {**found, "called": calls.called} if trace else found


def main() -> None:
    del sys.path[0]  # this script's folder: the tools' modules must not shadow the project's
    sys.path[:0] = [os.path.abspath(path) for path in ("src", ".") if os.path.isdir(path)]
    trace = sys.argv[2:3] == ["--trace"]
    results = [evaluate(example, trace) for example in json.loads(sys.argv[1])]
    print("\n" + MARKER + json.dumps(results))


if __name__ == "__main__":
    main()
