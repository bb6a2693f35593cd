"""The shape of the code, checked: imports point one way, pieces stay small, each tool is declared
once, and the installed package carries no test double."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each folder of omni/ may import from its own layer and the layers below it, never above, and never a sibling
# folder of its own layer: the loop knows verified repair only through omni/protocols.py (Strategy).
LAYERS = {"cli": 5, "run": 4, "batch": 4, "loop": 3, "repair": 3, "delegate": 3, "check": 2, "model": 1, "box": 1}
BASE = 0  # omni/*.py and omni/goal/: protocols, errors, results, settings, prompts, resources, trust, the goal
MAX_CLASS, MAX_MODULE, MAX_FUNCTION = 200, 400, 60


def modules(folder: str) -> dict[str, Path]:
    """Module name -> file, for omni (dotted names) or tools (flat names, as the server imports them)."""
    found = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts) if folder == "omni" else list(rel.parts[1:])
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(path: Path, known: set[str]) -> set[str]:
    """The known modules a file imports, at any depth (lazy imports inside functions count too). Importing
    anything from a package runs the package's __init__, so `from omni.cli import history` is an edge to
    omni.cli (its __init__) as well as to omni.cli.history."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:  # the packages on the way run their __init__ too
            parts = name.split(".")
            out |= {".".join(parts[:n]) for n in range(2, len(parts) + 1)} & known
    return out


def graph(folder: str) -> dict[str, set[str]]:
    mods = modules(folder)
    return {name: imports(path, set(mods)) - {name} for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return found


@pytest.mark.parametrize("folder", ["omni", "tools"])
def test_no_import_cycles(folder):
    assert cycles(graph(folder)) == []  # package __init__ files count: importing from a package runs its __init__


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], BASE) if len(parts) > 2 or parts[-1] in LAYERS else BASE


def folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or parts[-1] in LAYERS else ""


def test_imports_point_down_the_layers():
    upward = [f"{a} -> {b}" for a, targets in graph("omni").items() for b in targets
              if layer(b) > layer(a) or (layer(b) == layer(a) != BASE and folder(a) != folder(b))]
    assert upward == []


def test_the_loop_and_the_repair_wing_know_each_other_only_by_protocol():
    crossing = [f"{a} -> {b}" for a, targets in graph("omni").items() for b in targets
                if {folder(a), folder(b)} == {"loop", "repair"} or (folder(a) == "check" and folder(b) in
                                                                    ("loop", "repair"))]
    assert crossing == []


def definitions(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node


def test_pieces_stay_small():
    too_long = []
    for place in ("omni", "tools"):
        for path in (ROOT / place).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            if lines > MAX_MODULE:
                too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
            for node in definitions(path):
                size = node.end_lineno - node.lineno + 1
                if size > (MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION):
                    too_long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {size} lines")
    assert too_long == []


def test_the_loop_class_reads_in_one_sitting():
    agent = next(n for n in definitions(ROOT / "omni" / "loop" / "agent.py") if n.name == "Agent")
    assert agent.end_lineno - agent.lineno + 1 <= 150
    init = next(n for n in agent.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert len(init.args.args) - 1 <= 5  # a few grouped objects


def test_each_tool_is_declared_once():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import specs
    finally:
        sys.path.remove(str(ROOT / "tools"))
    names = [spec.__name__ for spec in specs.ALL]
    assert len(names) == len(set(names))
    for path in list((ROOT / "omni").rglob("*.py")) + list((ROOT / "tools").glob("*.py")):
        if path.name == "specs.py":
            continue
        tree = ast.parse(path.read_text())
        # no other table of tools: no dict or tuple literal holding three or more tool names
        for node in ast.walk(tree):
            if isinstance(node, (ast.Dict, ast.Tuple, ast.List, ast.Set)):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                held = [i.value for i in items if isinstance(i, ast.Constant) and i.value in names]
                assert len(held) < 3, f"{path.relative_to(ROOT)}:{node.lineno} lists tools {held}"


# The host modules that may use regular expressions, and on what: none of them reads a tool's result.
REGEX_READERS = {
    "omni/goal/reading.py": "the goal's English",
    "omni/goal/examples.py": "the goal's English: its examples",
    "omni/model/textmode.py": "the model's replies (actions written as text)",
    "omni/model/local.py": "model names a server lists (their size)",
    "omni/loop/plan.py": "the planner model's reply",
    "omni/cli/parsing.py": "argparse's own error messages",
    "omni/visible.py": "text about to be shown on the terminal",
    "omni/run/buildview.py": "the image build's log lines, for the progress line",
    "omni/delegate/hints.py": "the session's goals and plans (the user's and the planner's words), for the paths",
    "omni/box/requirements.py": "the repository's dependency files (the names in requirement strings)",
    "omni/repair/patterns.py": "the project's own regular expressions, changed and compiled as candidates",
    "omni/repair/gaps.py": "the model's replies (the line after which missing lines go)",
}


def uses_regex(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Import) and any(a.name == "re" for a in n.names)
               or isinstance(n, ast.ImportFrom) and n.module == "re" for n in ast.walk(tree))


def reads_tool_results(tree: ast.AST) -> bool:
    """Calls a tool (run_tool) or reads a result's details (details()), directly."""
    return any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == "run_tool"
                                            or getattr(n.func, "id", None) == "details") for n in ast.walk(tree))


def test_the_host_reads_no_tool_output_with_regular_expressions():
    """Tool results carry fields, and the host reads those: a host module uses a regular expression only on text
    that no tool wrote (REGEX_READERS), and none of those calls a tool or reads a result's details."""
    found = []
    for path in (ROOT / "omni").rglob("*.py"):
        rel, tree = path.relative_to(ROOT).as_posix(), ast.parse(path.read_text())
        if uses_regex(tree) and (rel not in REGEX_READERS or reads_tool_results(tree)):
            found.append(rel)
    assert found == []


def test_the_one_by_path_load_of_the_tool_declarations_points_down():
    """tools/specs.py is data for the host, loaded by path (the installed wheel has it under omni/_data): only the
    toolbox loads it, and it imports nothing of omni's, so the dependency runs one way."""
    loaders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "omni").rglob("*.py") if '"specs.py"' in p.read_text()]
    assert loaders == ["omni/box/toolbox.py"]
    specs = ast.parse((ROOT / "tools" / "specs.py").read_text())
    assert not [n for n in ast.walk(specs) if isinstance(n, (ast.Import, ast.ImportFrom))
                and "omni" in (getattr(n, "module", "") or "" + " ".join(a.name for a in n.names))]


def test_the_installed_package_ships_no_test_double(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("omni/loop/agent.py") for n in names)
    assert not [n for n in names if "fake" in n or n.startswith("tests/")]


def test_no_rule_names_or_quotes_a_benchmark_task():
    """Where omni reads goals and code (omni/goal, check, repair, loop, delegate; tools; prompts), nothing names a
    definition a benchmark task's bug patch changes (the function of its hunk headers, when it is no plain word: an
    underscore or a capital inside, no dunder) or quotes six words in a row of a task's goal: a rule that fires for
    one task's wording or names is tuning, not skill. (The model client's and the sandbox's own names may match a
    task's by chance: they read no goal.)"""
    folders = ("omni/goal", "omni/check", "omni/repair", "omni/loop", "omni/delegate", "tools", "prompts")
    texts = {path: path.read_text(errors="replace") for folder in folders
             for path in (ROOT / folder).rglob("*") if path.is_file() and path.suffix in (".py", ".md")}
    found = []
    for task in sorted((ROOT / "bench" / "tasks").iterdir()):
        goal = json.loads((task / "task.json").read_text())["goal"].split()
        quotes = {" ".join(goal[n:n + 6]) for n in range(len(goal) - 5)}
        headers = [line.split("@@")[-1] for line in (task / "bug.patch").read_text().splitlines()
                   if line.startswith("@@")]
        names = {word.split("(")[0] for header in headers for kind, word in zip(header.split(), header.split()[1:],
                                                                                strict=False)
                 if kind in ("def", "class")}
        names = {n for n in names if not n.startswith("__") and ("_" in n or any(c.isupper() for c in n[1:]))}
        for path, text in texts.items():
            found += [f"{path.relative_to(ROOT)} quotes {task.name}'s goal" for quote in quotes if quote in text]
            found += [f"{path.relative_to(ROOT)} names {name} ({task.name})" for name in names
                      if re.search(rf"\b{re.escape(name)}\b", text)]
    assert found == []
