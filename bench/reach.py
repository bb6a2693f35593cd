"""Reach of the mechanical candidates: for each task, is the upstream code of the bug's definition among the
one-change candidates (omni/repair/mutants.py) of its bugged code, and how many come before it?

No model and no sandbox: the task's sdist, its bug patch and `mutants` alone, so it runs in seconds a task. Two
ranks per task: with the bug's own lines as the first tier (what a perfect spectrum would give), and with no tier
at all (code order). A fix the catalogue does not hold says a kind of change is missing; a fix past the limit says
the order spends the budget elsewhere. It reads the task's bug patch, so it is for the tune half and the dev tasks:
the check half is refused, since its patches must stay unread (bench/README.md).

    python bench/reach.py                 # the tune half and the dev tasks
    python bench/reach.py --tasks a,b     # some of them
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from failures import _changed_lines, _definitions, bug_definitions  # noqa: E402
from run_tasks import TASKS, prepare, selected  # noqa: E402

from omni.repair.mutants import MAX_MUTANTS, mutants  # noqa: E402

READABLE = ("tune", "dev")


def definition(source: str, name: str) -> tuple[int, str] | None:
    """(first line, source text) of the definition 'Qual.name' in a module's source."""
    for start, end, qualified in _definitions(source):
        if qualified == name:
            lines = source.splitlines(keepends=True)
            return start, "".join(lines[start - 1:end])
    return None


def file_at(repo: Path, rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True, text=True).stdout


def same(a: str, b: str) -> bool:
    """The same code, formatting, comments and the order of a call's keyword arguments aside: `f(s, k=1, m=m)` is
    `f(s, m=m, k=1)`, as the fix that passes a dropped keyword on again writes it last."""
    try:
        return _shape(a) == _shape(b)
    except SyntaxError:
        return False


def _shape(source: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            node.keywords.sort(key=lambda k: (k.arg is None, k.arg or ""))
    return ast.dump(tree)


@dataclass
class Site:
    """One definition a task's bug patch wrote into, with the bug: its file's text, where it begins, its
    source and upstream's, and the file lines the patch wrote (or the line after a gap where it only removed lines)."""

    definition: str  # path:Qual.name
    text: str
    start: int
    source: str
    upstream: str
    changed: list[int]


def sites(task: dict, work: Path) -> Iterator[Site | str]:
    """The task's bug definitions, each a Site, or its name when it is not a definition on both sides."""
    repo, pristine = prepare(task, work / "bug"), prepare(task, work / "upstream", bug=False)
    patch = (task["dir"] / "bug.patch").read_text()
    changed = _changed_lines(patch)
    for right in bug_definitions(patch, repo):
        path, _, name = right.partition(":")
        text = file_at(repo, "HEAD", path)
        bugged, upstream = definition(text, name), definition(file_at(pristine, "HEAD", path), name)
        if bugged is None or upstream is None:
            yield right
            continue
        yield Site(right, text, bugged[0], bugged[1], upstream[1], [line for line, _ in changed.get(path, [])])


def readable(wanted: str, script: str) -> list[dict]:
    """The tasks named (comma-separated), or all of the tune half and the dev tasks; the check half is refused."""
    names = [t for t in wanted.split(",") if t]
    tasks = [t for t in selected(TASKS, names, None) if t["half"] in READABLE] if names else \
        [t for half in READABLE for t in selected(TASKS, [], half)]
    if names and len(tasks) < len(names):
        sys.exit(f"{script} reads bug patches: only tune-half and dev tasks (the check half stays unread)")
    return tasks


def reach(task: dict, work: Path) -> list[dict]:
    rows = []
    for site in sites(task, work):
        if isinstance(site, str):
            rows.append({"task": task["id"], "definition": site, "reach": "not a definition on both sides"})
            continue
        near = frozenset(line - site.start + 1 for line in site.changed)
        ranks = []
        for tier in (near, frozenset()):
            found = mutants(site.source, limit=100_000, near=tier)
            ranks.append(next((n + 1 for n, m in enumerate(found) if same(m, site.upstream)), None))
        rows.append({"task": task["id"], "definition": site.definition, "lines": site.source.count("\n"),
                     "rank_on_lines": ranks[0], "rank_in_order": ranks[1],
                     "reach": "no" if ranks[0] is None else "yes"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    opts = parser.parse_args()
    tasks = readable(opts.tasks, "reach.py")
    rows = []
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix="omni-reach-") as tmp:
            rows += reach(task, Path(tmp))
    width = max(len(r["task"]) for r in rows)
    for r in rows:
        where = f"on lines {r.get('rank_on_lines')}, in order {r.get('rank_in_order')}" if r["reach"] == "yes" \
            else r["reach"]
        print(f"{r['task']:{width}}  {r['definition'].split(':')[1]:40.40}  {r.get('lines', ''):>4}  {where}")
    reached = [r for r in rows if r["reach"] == "yes"]
    within = [r for r in reached if r["rank_on_lines"] <= MAX_MUTANTS]
    print(f"\n{len(reached)} of {len(rows)} bug definitions have their upstream code among the candidates; "
          f"{len(within)} within the first {MAX_MUTANTS} when the bug's lines come first")


if __name__ == "__main__":
    main()
