"""Whether a small model, shown the spectrum's suspects with their code, the goal and how the failing tests fail,
points to the bug's definition more often than the spectrum's order does (a model's vote among suspects, as
Agentless and AutoFL localize): for each task of the tune half and the dev tasks, where the spectrum
(tools/spectrum.py, omni's passing side) ranks the bug's first definition, and where k sampled answers "which one
holds the bug?" rank it (most votes first, ties in the spectrum's order), and the greedy answer. No sandbox: the
spectrum and the tests run on this machine's Python, in the task's repository, and a task with no failing test of
its own gets the grader's hidden tests as the failing side, as bench/spectrum_rank.py does. It reads the task's bug
patch, so it is for the tune half and the dev tasks only (bench/reach.py).

    python bench/suspect_vote.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b [--tasks a,b]
        [-k 8] [--top 7]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from openai import OpenAI

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import spectrum as tool  # noqa: E402  (tools/spectrum.py)
from context import Context  # noqa: E402
from reach import readable  # noqa: E402
from run_tasks import pytest_ids  # noqa: E402
from spectrum_rank import failing_side  # noqa: E402

from omni.prompts import Prompts  # noqa: E402

TEMPERATURE = 0.8
MAX_LINES = 30  # of each suspect's code shown
FAILURE_CHARS = 1200
SLOTS = 4  # answers per request: a llama.cpp server gives n up to its slots


def source_of(repo: Path, path: str, symbol: str) -> str:
    """The definition's code, its first MAX_LINES lines; "" when it is not found."""
    text = (repo / path).read_text(errors="replace")
    nodes, found = ast.parse(text).body, None
    for part in symbol.split("."):
        found = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.name == part), None)
        if found is None:
            return ""
        nodes = found.body
    rows = text.splitlines()[found.lineno - 1 - len(found.decorator_list):found.end_lineno]
    return "\n".join(rows[:MAX_LINES] + (["    ..."] if len(rows) > MAX_LINES else []))


def failure_of(repo: Path, task: dict, failing: list[str]) -> str:
    _, log = pytest_ids(repo, failing, extra=[*task.get("pytest_args", []), "-x", "-q", "--tb=short"])
    lines = [line for line in log.splitlines() if line.startswith(("E ", ">", "    assert", "FAILED"))]
    return "\n".join(lines)[-FAILURE_CHARS:]


def vote(task: dict, work: Path, client: OpenAI, model: str, k: int, top: int) -> dict:
    repo, right, failing, _ = failing_side(task, work)
    found = tool.spectrum(Context(root=repo), failing)["details"].get("suspects", [])[:top]
    shown = [dict(s, source=source_of(repo, s["path"], s["symbol"])) for s in found]
    shown = [s for s in shown if s["source"]]
    names = [f"{s['path']}:{s['symbol']}" for s in shown]
    row = {"task": task["id"], "right": right, "names": names,
           "spectrum": next((names.index(r) + 1 for r in right if r in names), None)}
    if len(shown) < 2:
        return {**row, "votes": {}, "greedy": None, "voted": row["spectrum"], "seconds": 0.0}
    prompt = Prompts(Path(__file__).resolve().parent / "prompts").render(
        "suspect_vote", goal=task["goal"], check="\n".join(f"- {t}" for t in failing),
        failure=failure_of(repo, task, failing), suspects=shown)
    messages = [{"role": "user", "content": prompt}]
    began = time.monotonic()
    choices = [c for at in range(0, k, SLOTS) for c in client.chat.completions.create(
        model=model, messages=messages, temperature=TEMPERATURE, n=min(SLOTS, k - at), max_tokens=8).choices]
    greedy = client.chat.completions.create(model=model, messages=messages, temperature=0, max_tokens=8)
    picks = [_number(c.message.content, len(shown)) for c in choices]
    votes = Counter(p for p in picks if p)
    order = sorted(range(1, len(shown) + 1), key=lambda n: (-votes[n], n))  # most votes first, then the spectrum's
    voted = next((order.index(names.index(r) + 1) + 1 for r in right if r in names), None)
    return {**row, "votes": dict(votes), "greedy": _number(greedy.choices[0].message.content, len(shown)),
            "voted": voted, "seconds": round(time.monotonic() - began, 1)}


def _number(text: str | None, most: int) -> int | None:
    match = re.search(r"\d+", text or "")
    return int(match.group()) if match and 1 <= int(match.group()) <= most else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-k", "--samples", type=int, default=8, help="sampled answers per task")
    parser.add_argument("--top", type=int, default=7, help="suspects shown, the spectrum's best first")
    opts = parser.parse_args()
    client, rows = OpenAI(base_url=opts.base_url, api_key="sk-local", timeout=600), []
    print(f"{'task':32} spectrum  votes  greedy  (suspects; votes by number; seconds)")
    for task in readable(opts.tasks, "suspect_vote.py"):
        with tempfile.TemporaryDirectory(prefix="omni-vote-") as tmp:
            row = vote(task, Path(tmp), client, opts.model, opts.samples, opts.top)
        rows.append(row)
        greedy = "-" if row["greedy"] is None else ("right" if row["spectrum"] and row["names"][row["greedy"] - 1]
                                                    in row["right"] else f"#{row['greedy']}")
        print(f"{row['task']:32} {row['spectrum'] or '-':>8}  {row['voted'] or '-':>5}  {greedy:>6}  "
              f"({len(row['names'])}; {row['votes']}; {row['seconds']} s)", flush=True)
    ranked = [r for r in rows if r["spectrum"]]
    print(f"\n{len(ranked)} of {len(rows)} tasks with the bug's definition among the suspects shown: first by the "
          f"spectrum {sum(r['spectrum'] == 1 for r in ranked)}, first by the votes "
          f"{sum(r['voted'] == 1 for r in ranked)}, the greedy answer right "
          f"{sum(r['greedy'] is not None and r['names'][r['greedy'] - 1] in r['right'] for r in ranked)}; "
          f"rank higher by the votes {sum(r['voted'] < r['spectrum'] for r in ranked)}, "
          f"lower {sum(r['voted'] > r['spectrum'] for r in ranked)}")


if __name__ == "__main__":
    main()
