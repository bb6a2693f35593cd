"""Which tests exercise a source file: run_tests given `pkg/mod.py` (code, not tests) runs the test files that import
it. A model that fixed a function often asks for the tests of the file it edited by that file's name; pytest
collects nothing from it, and "no tests were collected" teaches a small model nothing it acts on."""

from __future__ import annotations

import ast
import fnmatch
import os
from pathlib import Path

from context import Context
from files import SKIP_DIRS, all_files

TEST_NAMES = ("test_*.py", "*_test.py")  # pytest's default python_files
MAX_TEST_FILES = 40


def is_test_file(path: str) -> bool:
    return any(fnmatch.fnmatch(os.path.basename(path), pattern) for pattern in TEST_NAMES)


def holds_tests(file: Path) -> bool:
    """Whether a file has anything pytest would collect by its default names (conftest.py and helpers do not)."""
    try:
        tree = ast.parse(file.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return True  # not read as code: let pytest say what it makes of it
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
               or isinstance(node, ast.ClassDef) and node.name.startswith("Test") for node in tree.body)


def module_name(root: Path, path: str) -> str:
    """The dotted name `path` is imported by: its folders up to the first one that is not a package
    (`src/pkg/sub/mod.py` -> `pkg.sub.mod`; `src/pkg/__init__.py` -> `pkg`; `tool.py` -> `tool`)."""
    parts = Path(path).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts
    top = len(parts) - 1
    while top > 0 and (root.joinpath(*parts[:top]) / "__init__.py").is_file():
        top -= 1
    return ".".join(parts[top:])


def imports(tree: ast.AST, module: str) -> bool:
    """Whether code imports `module` or a name from it (`import a.b`, `from a.b import x`, `from a import b`,
    `from . import b` inside the package)."""
    package, _, leaf = module.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name == module or alias.name.startswith(module + ".") for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == module or node.module.startswith(module + "."):
                return True
            if node.module == package and any(alias.name == leaf for alias in node.names):
                return True
    return False


def test_files(ctx: Context) -> list[str]:
    return [f for f in all_files(ctx, ".") if is_test_file(f) and Path(f).parts[0] not in SKIP_DIRS]


def tests_importing(ctx: Context, path: str, limit: int = MAX_TEST_FILES, tests: list[str] | None = None) -> list[str]:
    """The test files (of `tests`, else all) of the module at `path`: those that import it, or are named after it
    (`test_mod.py`); then, while there is room, those that import a package above it that imports it
    (`from wcwidth import wcswidth`, where wcwidth/__init__.py imports it from .wcwidth)."""
    module = module_name(ctx.root, path)
    leaf = module.rpartition(".")[2]
    packages = reexporting(ctx.root, path)
    direct, through = [], []  # each file read once: those that import the module, those that import a package
    for test in test_files(ctx) if tests is None else tests:
        if len(direct) == limit:
            break
        if test == path:
            continue
        if os.path.basename(test) in (f"test_{leaf}.py", f"{leaf}_test.py"):
            direct.append(test)
        elif (tree := _parsed(ctx.root / test, [module, *packages])) is None:
            continue
        elif imports(tree, module):
            direct.append(test)
        elif _imports_exactly(tree, packages):
            through.append(test)
    return (direct + through)[:limit]


def _parsed(file: Path, modules: list[str]) -> ast.AST | None:
    """The file's syntax tree, when it names one of modules' last parts at all; else None."""
    try:
        text = file.read_text(errors="replace")
        return ast.parse(text) if any(m.rpartition(".")[2] in text for m in modules) else None
    except (OSError, SyntaxError, ValueError):
        return None


def _imports_exactly(tree: ast.AST, modules: list[str]) -> bool:
    """Whether the code imports one of modules itself, or a name from it (not a module below it, which is another
    module's test)."""
    return any(isinstance(node, ast.Import) and any(a.name in modules for a in node.names)
               or isinstance(node, ast.ImportFrom) and not node.level and node.module in modules
               for node in ast.walk(tree))


def reexporting(root: Path, path: str) -> list[str]:
    """The packages above the module at `path`, nearest first, whose __init__.py imports it or a package already
    found (`from .core import middle`, `from . import core`, `from pkg.core import middle`): importing them runs it,
    and a test that imports a name from them reaches its code."""
    reached = [module_name(root, path)]
    found = []
    folder = (root / path).parent
    while folder != root and (init := folder / "__init__.py").is_file():
        package = module_name(root, str(init.relative_to(root)))
        if init.resolve() != (root / path).resolve() and _init_imports(init, package, reached):
            found.append(package)
            reached.append(package)
        folder = folder.parent
    return found


def _init_imports(init: Path, package: str, modules: list[str]) -> bool:
    """Whether a package's __init__.py imports one of modules, absolutely or relatively."""
    try:
        tree = ast.parse(init.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return False
    if any(imports(tree, m) for m in modules):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            named = ".".join(base + ([node.module] if node.module else []))
            if any(named == m or named.startswith(m + ".") or any(f"{named}.{a.name}" == m for a in node.names)
                   for m in modules):
                return True
    return False


def for_sources(ctx: Context, selection: list[str]) -> tuple[list[str], list[str]]:
    """The selection with each source file (a .py file with no tests in it) replaced by the test files that import
    it, and a note for each one replaced. A source file nothing imports is left out; if nothing is left, the whole
    suite runs (an empty selection)."""
    kept, notes, unmapped = [], [], []
    for item in selection:
        path = item.split("::")[0]
        file = ctx.root / path
        if "::" in item or not path.endswith(".py") or not file.is_file() or is_test_file(path) \
                or holds_tests(file):
            kept.append(item)
        elif tests := tests_importing(ctx, path):
            kept += [t for t in tests if t not in kept]
            notes.append(f"{path} is code, not tests: ran the tests that import it ({', '.join(tests)}).")
        else:
            unmapped.append(path)
    for path in unmapped:
        notes.append(f"{path} is code, not tests, and no test file imports it: "
                     + ("left out." if kept else "ran the whole suite."))
    return kept, notes
