"""`omni --last [GOAL]` / `--resume RUN [GOAL]`: a new run that continues an earlier one. The earlier run's
goal (when no new one is given), plan, steps (one line each), outcome and diff, read from its record, open the
new run's context, so the model goes on from where that run stopped. Its changes come along: applied, they are in
the user's files already; not applied, they are the new worktree's first commit (omni/box/workspace.py: carry),
so the new run's diff holds both runs' work."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from omni.prompts import Prompts
from omni.run.record import read_events

DIFF_CHARS = 4000
STEP_CHARS = 160


def _steps(folder: Path) -> list[str]:
    steps, pending = [], None
    for event in read_events(folder):
        if event.get("kind") == "action":
            pending = f"{event['tool']} {json.dumps(event.get('args', {}))[:100]}"
        elif event.get("kind") == "observation" and pending:
            said = (event.get("error") or event.get("output") or "").strip().splitlines()
            steps.append(f"{pending} -> {'ok' if event.get('success') else 'FAILED'}: {(said or [''])[0]}"
                         [:STEP_CHARS])
            pending = None
    return steps


def earlier_run(folder: Path, prompts: Prompts | None = None) -> str:
    """The context that carries an earlier run (its record folder) into a new one."""
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        summary = {"status": "incomplete (no summary: it was killed or crashed)"}
    patch = folder / "diff.patch"
    diff = patch.read_text(encoding="utf-8", errors="replace") if patch.exists() else ""
    if len(diff) > DIFF_CHARS:
        diff = diff[:DIFF_CHARS] + f"\n[diff cut: {len(diff) - DIFF_CHARS} more characters; `omni diff` shows it]"
    return (prompts or Prompts()).render(
        "earlier_run", goal=summary.get("goal", "?"), status=summary.get("status", "?"),
        message=(summary.get("message") or "")[:600], plan=[s.get("text", "") for s in summary.get("plan", [])],
        steps=_steps(folder), diff=diff.strip(),
        applied=summary.get("applied", False))


@dataclass(frozen=True)
class Earlier:
    """What a new run takes from the run it continues."""

    run_id: str
    goal: str
    context: str
    patch: bytes  # its changes when they were not applied ("" when applied, or it changed nothing)


def earlier(folder: Path) -> Earlier:
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        summary = {}
    patch = folder / "diff.patch"
    unapplied = patch.read_bytes() if patch.exists() and not summary.get("applied") else b""
    goal = summary.get("goal") or next((e["goal"] for e in read_events(folder) if e.get("goal")), "")
    return Earlier(folder.name, goal, earlier_run(folder), unapplied)
