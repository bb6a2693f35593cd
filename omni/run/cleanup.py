"""What earlier omni processes killed mid-run (kill -9, a crash) left behind, cleaned up at the next start:
their private run folders, their worktrees, and records without a summary, which get one that says so.
(Their containers are removed when the next sandbox starts.)"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

from omni.box import hostgit
from omni.box.channel import pid_alive, remove_stale_run_dirs
from omni.box.workspace import OMNI_DIR
from omni.run.record import OWNER, RunRecord, read_events


def owner_alive(folder: Path) -> bool:
    """Whether the omni process that wrote this record still runs (unknown owners count as alive)."""
    try:
        owner = json.loads((folder / OWNER).read_text())
        pid, host = int(owner["pid"]), owner["host"]
    except (OSError, ValueError, KeyError, TypeError):
        return True
    return host != socket.gethostname() or pid_alive(pid)


def close_abandoned(runs: Path) -> list[str]:
    """Give every record whose omni process died mid-run (kill -9, a crash of the machine) a summary
    that says so; return their ids."""
    closed = []
    for folder in sorted(runs.iterdir()) if runs.is_dir() else []:
        if (folder / "summary.json").exists() or not (folder / OWNER).exists() or owner_alive(folder):
            continue
        RunRecord.write_file(folder / "summary.json", {
            "run_id": folder.name, "goal": first_goal(folder), "status": "killed", "exit_code": 1,
            "message": "the omni process ended mid-run (killed or crashed); a later start cleaned up after it",
            "steps": 0, "applied": False, "changed_files": [], "branch": f"omni/{folder.name}"})
        closed.append(folder.name)
    return closed


def first_goal(folder: Path) -> str:
    return next((event["goal"] for event in read_events(folder) if event.get("goal")), "?")


def remove_abandoned_worktrees(user_root: Path) -> list[str]:
    """Worktrees of runs whose omni process was killed (their record says "killed", or there is none):
    removed, and git's list of worktrees pruned. Their branches stay, with whatever the last checkpoint
    committed. A worktree a finished run kept on purpose (its result could not be saved) stays."""
    removed = []
    folder = user_root / OMNI_DIR / "worktrees"
    for tree in sorted(folder.iterdir()) if folder.is_dir() else []:
        record = user_root / OMNI_DIR / "runs" / tree.name
        if record.is_dir() and (owner_alive(record) or _status(record) != "killed"):
            continue
        hostgit.run(["worktree", "remove", "--force", "--force", str(tree)], user_root, check=False)
        shutil.rmtree(tree, ignore_errors=True)
        removed.append(tree.name)
    if removed:
        hostgit.run(["worktree", "prune"], user_root, check=False)
    return removed


def _status(record: Path) -> str:
    try:
        return json.loads((record / "summary.json").read_text()).get("status", "")
    except (OSError, ValueError, AttributeError):
        return "killed"  # no readable summary and no live owner: it did not end on its own


def cleanup_after_killed_runs(root: Path) -> str:
    """What earlier omni processes killed mid-run left behind: containers (removed when the sandbox
    starts), private run folders, worktrees, and records without a summary."""
    dirs = remove_stale_run_dirs()
    closed = close_abandoned(root / ".omni" / "runs")
    trees = remove_abandoned_worktrees(root)
    parts = [f"{len(closed)} run record(s) marked killed ({', '.join(closed)})" if closed else "",
             f"{len(trees)} worktree(s) removed" if trees else "",
             f"{len(dirs)} private run folder(s) removed" if dirs else ""]
    said = "; ".join(p for p in parts if p)
    return f"cleaned up after runs that were killed: {said}" if said else ""
