"""Reach of infilled candidates: with the bug's own lines masked out of its file, does the model's fill-in-the-middle
write the upstream code back?

For each bug definition of a task (tune half and dev tasks only: it reads bug patches, as bench/reach.py does), the
lines the bug patch wrote (or the gap where it only removed lines) are cut out, and the model is asked for the middle
(prefix = the file up to them, suffix = the file after them, each cut to a window around the definition). A sample
counts when the definition it makes has upstream's syntax tree. This is the ceiling of infilling with a perfect
localization; the candidates omni makes must also find the lines.

    python bench/infill_reach.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b [--tasks a,b] [-n 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from failures import _changed_lines, bug_definitions  # noqa: E402
from reach import READABLE, definition, file_at, same  # noqa: E402
from run_tasks import TASKS, prepare, selected  # noqa: E402

from omni.model.endpoint import ModelConfig  # noqa: E402
from omni.model.infill import Infill  # noqa: E402
from omni.model.transport import Transport  # noqa: E402
from omni.repair.infilled import candidates, holes, masked  # noqa: E402


def reach(task: dict, work: Path, infill: Infill, samples: int) -> list[dict]:
    repo = prepare(task, work)
    patch = (task["dir"] / "bug.patch").read_text()
    changed = _changed_lines(patch)
    rows = []
    for right in bug_definitions(patch, repo):
        path, _, name = right.partition(":")
        text = file_at(repo, "HEAD", path)
        bugged, upstream = definition(text, name), definition(file_at(repo, "HEAD~1", path), name)
        if bugged is None or upstream is None:
            rows.append({"task": task["id"], "definition": right, "reach": "not a definition on both sides"})
            continue
        start, source = bugged
        end = start + source.count("\n") - 1
        lines = sorted({n for n, _ in changed.get(path, []) if start <= n <= end + 1})
        began, asked, found, made = time.monotonic(), 0, None, 0
        for hole in holes(text, lines):
            cut = masked(text, hole, start, end)
            fills, _ = infill.fill(cut, samples, one_line=hole.one_line)
            asked += 1
            for code in candidates(cut, hole, fills, source):
                made += 1
                if found is None and same(code, upstream[1]):
                    found = f"{hole.kind} of line {hole.line}, candidate {made}, hole {asked}"
        rows.append({"task": task["id"], "definition": right, "lines": lines, "holes": asked, "candidates": made,
                     "found": found, "seconds": round(time.monotonic() - began, 1),
                     "reach": "yes" if found else "no"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-n", "--samples", type=int, default=3, help="sampled fills besides the greedy one, per hole")
    opts = parser.parse_args()
    wanted = [t for t in opts.tasks.split(",") if t]
    tasks = [t for t in selected(TASKS, wanted, None) if t["half"] in READABLE] if wanted else \
        [t for half in READABLE for t in selected(TASKS, [], half)]
    if wanted and len(tasks) < len(wanted):
        sys.exit("infill_reach.py reads bug patches: only tune-half and dev tasks (the check half stays unread)")
    infill = Infill.probed(Transport(ModelConfig(model=opts.model, base_url=opts.base_url, api_key="sk-local"),
                                     lambda kind, **data: None))
    if infill is None:
        sys.exit(f"{opts.base_url} does not fill in the middle for {opts.model}")
    rows = []
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix="omni-infill-") as tmp:
            for row in reach(task, Path(tmp), infill, opts.samples):
                rows.append(row)
                shown = f"{row['found'] or 'not found'}; {row['holes']} holes, {row['candidates']} candidates, " \
                    f"{row['seconds']} s" if "holes" in row else row["reach"]
                print(f"{row['task']:32} {row['definition'].split(':')[1][:36]:36} {shown}", flush=True)
    reached = [r for r in rows if r["reach"] == "yes"]
    print(f"\n{len(reached)} of {len(rows)} bug definitions written back as upstream by at least one fill "
          f"(greedy + {opts.samples} samples each)")


if __name__ == "__main__":
    main()
