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

from reach import readable, same, sites  # noqa: E402

from omni.model.endpoint import ModelConfig  # noqa: E402
from omni.model.infill import Infill  # noqa: E402
from omni.model.transport import Transport  # noqa: E402
from omni.repair.infilled import candidates, holes, masked  # noqa: E402


def reach(task: dict, work: Path, infill: Infill, samples: int) -> list[dict]:
    rows = []
    for site in sites(task, work):
        if isinstance(site, str):
            rows.append({"task": task["id"], "definition": site, "reach": "not a definition on both sides"})
            continue
        end = site.start + site.source.count("\n") - 1
        lines = sorted({n for n in site.changed if site.start <= n <= end + 1})
        began, asked, found, made = time.monotonic(), 0, None, 0
        for hole in holes(site.text, lines):
            cut = masked(site.text, hole, site.start, end)
            fills, _ = infill.fill(cut, samples, one_line=hole.one_line)
            asked += 1
            for code in candidates(cut, hole, fills, site.source):
                made += 1
                if found is None and same(code, site.upstream):
                    found = f"{hole.kind} of line {hole.line}, candidate {made}, hole {asked}"
        rows.append({"task": task["id"], "definition": site.definition, "lines": lines, "holes": asked,
                     "candidates": made, "found": found, "seconds": round(time.monotonic() - began, 1),
                     "reach": "yes" if found else "no"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-n", "--samples", type=int, default=3, help="sampled fills besides the greedy one, per hole")
    opts = parser.parse_args()
    tasks = readable(opts.tasks, "infill_reach.py")
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
