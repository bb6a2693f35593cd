"""Throughput of `omni batch` on this machine: 16 scripted tasks (a one-file repository each, a scripted model that
fixes it in one edit; the Docker sandbox, the baseline tests and the check as in any run) with 1, 2 and 4 workers,
side by side in one run (1 2 4, then 4 2 1, so drift hits all alike), as tasks per minute and the ratio to one
worker.

Run: python bench/batch.py [--tasks 16] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, git_repo

from fake_server import FakeOpenAI

FLAGS = ["--set", "model=fake-model", "--set", "tool_mode=native", "--set", "review=false", "--set", "samples=1",
         "--set", "reproduce=false", "--set", "finish_on_check=false", "--set", "opening_repair=false"]
CALC = "def add(a, b):\n    return a - b\n"
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def one_batch(tmp: Path, count: int, workers: int, label: str) -> float:
    lines = []
    with FakeOpenAI() as fake:
        for n in range(count):
            key = f"<<{label}-{n}>>"
            repo = tmp / f"{label}-{n}"
            repo.mkdir()
            (repo / "calc.py").write_text(CALC)
            (repo / "test_calc.py").write_text(TEST)
            git_repo(repo)
            fake.add_for(key, {"text": "1. Fix add\n2. Finish"}, FIX, {"tool": "finish", "args": {"summary": "fixed"}})
            lines.append(json.dumps({"id": f"{label}-{n}", "repo": str(repo), "goal": f"{key} fix add in calc.py"}))
        tasks = tmp / f"{label}.jsonl"
        tasks.write_text("\n".join(lines) + "\n")
        started = time.perf_counter()
        out = tmp / f"{label}.out"
        done = subprocess.run([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out),
                               "--workers", str(workers), "--set", f"base_url={fake.base_url}", *FLAGS],
                              capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
    rows = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    unfinished = [f"{r['id']}: {r.get('status')} {r.get('reason', '')[:300]}" for r in rows
                  if r["status"] != "finished"]
    if done.returncode != 0 or unfinished:
        sys.exit(f"the batch with {workers} worker(s) did not finish all {count} tasks:\n" + "\n".join(unfinished)
                 + f"\n(records kept: {out})")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--workers", default="1,2,4")
    opts = parser.parse_args()
    counts = [int(w) for w in opts.workers.split(",")]
    walls: dict[int, list[float]] = {w: [] for w in counts}
    tmp = Path(tempfile.mkdtemp(prefix="omni-bench-batch-"))  # kept when a batch does not finish: its records
    for round_, order in enumerate((counts, list(reversed(counts)))):
        for workers in order:
            walls[workers].append(one_batch(tmp, opts.tasks, workers, f"r{round_}w{workers}"))
    shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(walls[counts[0]])
    print(f"\nomni batch, {opts.tasks} scripted tasks (Docker sandbox each), this machine")
    for workers in counts:
        wall = statistics.median(walls[workers])
        print(f"  {workers} worker(s): median {wall:6.1f} s   {opts.tasks / wall * 60:5.1f} tasks/min   "
              f"ratio to {counts[0]}: {base / wall:.2f}x  (runs: {', '.join(f'{w:.1f}' for w in walls[workers])})")


if __name__ == "__main__":
    main()
