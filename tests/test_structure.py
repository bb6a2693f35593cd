"""The shape of the code, checked: imports point one way, pieces stay small, each tool is declared
once, and the installed package carries no test double."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each folder of omni/ may import from its own layer and the layers below it, never above.
LAYERS = {"cli": 4, "run": 3, "loop": 2, "check": 2, "model": 1, "box": 1}
BASE = 0  # omni/*.py: protocols, errors, results, settings, prompts, resources, trust


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
    """The known modules a file imports, at any depth (lazy imports inside functions count too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out |= {n for n in names if n in known}
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
    edges = graph(folder)
    if folder == "omni":  # a package's own __init__ re-exporting a submodule is not a cycle of the design
        edges = {k: {v for v in vs if not k.startswith(v + ".") and not v.startswith(k + ".")}
                 for k, vs in edges.items()}
    assert cycles(edges) == []


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], BASE) if len(parts) > 2 or parts[-1] in LAYERS else BASE


def test_imports_point_down_the_layers():
    upward = [f"{a} -> {b}" for a, targets in graph("omni").items() for b in targets
              if layer(b) > layer(a) or (layer(b) == layer(a) != BASE and a.split(".")[1] != b.split(".")[1]
                                         and {a.split(".")[1], b.split(".")[1]} != {"loop", "check"})]
    assert upward == []


def test_the_check_layer_does_not_import_the_loop():
    assert not [f"{a} -> {b}" for a, targets in graph("omni").items() for b in targets
                if a.startswith("omni.check") and b.startswith("omni.loop")]


def definitions(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node


def test_pieces_stay_small():
    too_long = []
    for folder in ("omni", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            if lines > 400:
                too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
            for node in definitions(path):
                size = node.end_lineno - node.lineno + 1
                if not isinstance(node, ast.ClassDef) and size > 60:
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


def test_the_host_reads_no_tool_prose_with_regular_expressions():
    """Tool results carry fields; the loop, the gate and the session read those."""
    for rel in ("omni/loop", "omni/run/session.py", "omni/run/wiring.py", "omni/check/gate.py"):
        for path in (ROOT / rel).rglob("*.py") if (ROOT / rel).is_dir() else [ROOT / rel]:
            text = path.read_text()
            if path.name == "plan.py":  # parses the planner model's reply, not a tool's output
                continue
            assert "import re\n" not in text, path


def test_the_installed_package_ships_no_test_double(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("omni/loop/agent.py") for n in names)
    assert not [n for n in names if "fake" in n or n.startswith("tests/")]
