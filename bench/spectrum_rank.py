"""Where the spectrum (tools/spectrum.py) ranks the bug's definitions, for each task of the tune half and the dev
tasks, three ways side by side in one run: with the passing side omni chooses (the first three test files of each
module the failing tests ran, in file order); against one chosen by the names the failing tests ran (the test files
that name the most of the definitions they ran first, and their classes: built into omni on 2026-12-06 (15d4062)
and taken out again after runs CW and CX, bench/README.md); and omni's side with the suspects the tests rank alike
ordered by the words of the names the goal writes as code (omni/repair/localize.py `tie_order`, as omni's Spectrum
orders them).

The failing side is the task's own failing tests, as a run has them at the start; a task with none (its goal is all
there is) gets the grader's hidden tests instead, as a stand-in for the reproduction test a run would write (said
in the table): a run whose check is the goal's examples ranks what those run, so for such a task the table is not
what the run saw. No model and no sandbox: the spectrum tool runs on this machine's Python, in the task's
repository. It reads the task's bug patch, so it is for the tune half and the dev tasks only (bench/reach.py).

    python bench/spectrum_rank.py [--tasks a,b]
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import spectrum as tool  # noqa: E402  (tools/spectrum.py)
from context import Context  # noqa: E402
from reach import readable  # noqa: E402
from run_tasks import ensure_test_requires, prepare  # noqa: E402
from testmap import MAX_TEST_FILES, test_files, tests_importing  # noqa: E402

from failures import bug_definitions  # noqa: E402
from omni.goal.reading import read_goal  # noqa: E402
from omni.repair.localize import tie_order  # noqa: E402

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def named_first(ctx: Context, failed: list[list], files: list[str]) -> list[str]:
    """The test files of the code the failing tests ran, those that name the most of the definitions they ran (and
    their classes; dunders and names of two letters or fewer left out) first; among equals, omni's order."""
    lines = {(path, line) for run in failed for path, line in run}
    tests, ran = test_files(ctx), sorted({path for path, _ in lines})
    found = {path: [t for t in tests_importing(ctx, path, MAX_TEST_FILES, tests) if t not in files] for path in ran}
    order = list(dict.fromkeys([*(t for path in ran for t in found[path][:3]),
                                *(t for path in ran for t in found[path])]))
    names = set()
    for path in ran:
        try:
            spans = tool._spans(ast.parse((ctx.root / path).read_bytes()))
        except (OSError, SyntaxError, ValueError):
            continue
        for line in (line for where, line in lines if where == path):
            if (holder := tool._holder(spans, line)) is not None:
                names.update(part for part in holder.split(".") if len(part) > 2 and not part.startswith("__"))
    named = {test: len(names & set(IDENTIFIER.findall((ctx.root / test).read_text(errors="replace"))))
             for test in order}
    return sorted(order, key=lambda test: -named[test])[:tool.MAX_MORE]


CHOOSERS = {"omni's": tool._passing_side, "named first": named_first}
TIED = "omni's, ties by the goal's names"  # omni's side, its ties ordered by tie_order


def failing_side(task: dict, work: Path) -> tuple[Path, list[str], list[str], bool]:
    """The task's repository with the bug, the bug's definitions, the failing tests (its own, else the hidden ones,
    copied in), and whether they are its own."""
    ensure_test_requires(task)
    repo = prepare(task, work)
    right = bug_definitions((task["dir"] / "bug.patch").read_text(), repo)
    own = [t for t in task["fail_to_pass"] if (repo / t.split("::")[0]).exists()]
    if not own and (task["dir"] / "hidden").is_dir():
        shutil.copytree(task["dir"] / "hidden", repo, dirs_exist_ok=True)
    return repo, right, own or task["fail_to_pass"], bool(own)


def ranks(task: dict, work: Path) -> dict:
    repo, right, failing, own = failing_side(task, work)
    row = {"task": task["id"], "failing": "own" if own else "hidden", "right": right}
    named = read_goal(task["goal"]).code_words()
    for name, chooser in CHOOSERS.items():
        tool._passing_side = chooser
        try:
            ran = tool.spectrum(Context(root=repo), failing)
        finally:
            tool._passing_side = CHOOSERS["omni's"]
        found = ran["details"].get("suspects", [])
        orders = {name: found} | ({TIED: tie_order(found, named)} if chooser is CHOOSERS["omni's"] else {})
        for order, suspects in orders.items():
            where = [f"{s['path']}:{s['symbol']}" for s in suspects]
            keys = [(s["score"], s.get("shared", 0)) for s in suspects]
            row[order] = {"ranks": [where.index(r) + 1 if r in where else None for r in right],
                          "tied": [keys.count(keys[where.index(r)]) if r in where else None for r in right],
                          "passed": ran["details"].get("passed", 0), "error": ran["error"][:200]}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    opts = parser.parse_args()
    orders = [*CHOOSERS, TIED]
    firsts, seconds = dict.fromkeys(orders, 0), dict.fromkeys(orders, 0)
    print(f"{'task':32} {'failing':7} " + "  ".join(f"{name}: rank (tied) passed" for name in orders))
    for task in readable(opts.tasks, "spectrum_rank.py"):
        with tempfile.TemporaryDirectory(prefix="omni-rank-") as tmp:
            row = ranks(task, Path(tmp))
        said = []
        for name in orders:
            got = row[name]
            firsts[name] += bool(got["ranks"]) and got["ranks"][0] == 1 and got["tied"][0] == 1
            seconds[name] += bool(got["ranks"]) and got["ranks"][0] is not None and got["ranks"][0] <= 3
            error = f" {got['error']}" if got["error"] else ""
            said.append(f"{name}: {got['ranks']} ({got['tied']}) {got['passed']}{error}")
        print(f"{row['task']:32} {row['failing']:7} " + "  ".join(said), flush=True)
    print("\nthe bug's first definition alone at the top: " + ", ".join(f"{k} {n}" for k, n in firsts.items()))
    print("the bug's first definition among the first three (MAX_SUSPECTS): "
          + ", ".join(f"{k} {n}" for k, n in seconds.items()))


if __name__ == "__main__":
    main()
