"""A batch from start to end: which tasks are already done (skipped unless --redo), the pool that runs the rest,
each transition to the view, a lost task's record, and the summary (OUT/summary.jsonl, OUT/summary.md).
Nothing here prints; omni/batch/view.py does."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from omni.batch.job import finish_record
from omni.batch.tasks import BatchTask

DONE = "finished"  # the one status that counts as done and verified; every other ends the batch with exit 1


@dataclass
class BatchState:
    total: int
    started: float = field(default_factory=time.monotonic)
    running: set[str] = field(default_factory=set)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        statuses = [r.get("status") for r in self.results.values()]
        return {"done": statuses.count(DONE), "failed": sum(s not in (DONE, "lost") for s in statuses),
                "lost": statuses.count("lost"), "running": len(self.running), "total": self.total}

    def estimate_s(self) -> float | None:
        """Seconds left, from the pace of the tasks finished in this batch (skipped ones took no time)."""
        finished = len(self.results) - len(self.skipped)
        left = self.total - len(self.results)
        if finished <= 0 or left <= 0:
            return None
        return (time.monotonic() - self.started) / finished * left


def previous(out: Path, task_id: str) -> dict[str, Any] | None:
    """The record an earlier batch left for this task, unless it was lost or interrupted (those run again)."""
    try:
        result = json.loads((out / task_id / "result.json").read_text())
    except (OSError, ValueError):
        return None
    return result if result.get("status") not in ("lost", "interrupted") else None


def run_batch(tasks: list[BatchTask], out: Path, pool, env: dict[str, str], redo: bool,
              show: Callable[..., None]) -> BatchState:
    """Run what is not done yet; show(kind, state, id=..., **fields) sees every transition."""
    out.mkdir(parents=True, exist_ok=True)
    state = BatchState(len(tasks))
    todo = []
    for task in tasks:
        earlier = None if redo else previous(out, task.id)
        if earlier is not None:
            state.results[task.id] = earlier
            state.skipped.append(task.id)
            show("skipped", state, id=task.id, result=earlier)
        else:
            todo.append(task.model_dump())

    lock = threading.Lock()

    def report(kind: str, task_id: str, **fields: Any) -> None:  # from the pool's threads
        with lock:
            _record(kind, task_id, fields)
            show(kind, state, id=task_id, **fields)

    def _record(kind: str, task_id: str, fields: dict[str, Any]) -> None:
        if kind == "running":
            state.running.add(task_id)
        elif kind in ("done", "lost"):
            state.running.discard(task_id)
            if kind == "lost":
                task = next(t for t in todo if t["id"] == task_id)
                (out / task_id).mkdir(parents=True, exist_ok=True)
                fields["result"] = finish_record(out / task_id, {"id": task_id, "repo": task["repo"],
                                                                 "ref": task["ref"]}, "lost", fields["reason"],
                                                 time.monotonic())
            state.results[task_id] = fields["result"]

    try:
        pool.run(todo, out, env, report)
    finally:
        write_summary(out, tasks, state)
    return state


def write_summary(out: Path, tasks: list[BatchTask], state: BatchState) -> None:
    rows = [state.results.get(t.id) or {"id": t.id, "status": "not run"} for t in tasks]
    (out / "summary.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "summary.md").write_text(summary_table(rows) + "\n")


def summary_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| task | status | steps | tokens | cost | wall | reason |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r.get('status', '')} | {r.get('steps', 0) or 0} | {r.get('tokens', 0) or 0:,} | "
                     f"{cost_text(r)} | {r.get('wall_s', 0) or 0:.0f} s | {(r.get('reason') or '')[:80]} |")
    done = sum(r.get("status") == DONE for r in rows)
    costs = [r["cost"] for r in rows if r.get("cost") is not None and r.get("cost_kind") == "priced"]
    local = any(r.get("cost_kind") == "local" for r in rows)
    total = f"${sum(costs):.4f}" if costs else "local" if local else "—"
    lines.append(f"| **all {len(rows)}** | {done} finished | {sum(r.get('steps', 0) or 0 for r in rows)} | "
                 f"{sum(r.get('tokens', 0) or 0 for r in rows):,} | {total} | "
                 f"{sum(r.get('wall_s', 0) or 0 for r in rows):.0f} s | |")
    return "\n".join(lines)


def cost_text(row: dict[str, Any]) -> str:
    if row.get("cost_kind") == "local":
        return "local"
    return f"${row['cost']:.4f}" if row.get("cost") is not None and row.get("cost_kind") == "priced" else "—"
