"""Past runs: `omni runs` (newest first, with status and whether each was applied; --prune removes what
unapplied runs left), and show, diff, apply, undo of one run, named by its id, a unique prefix of it, or
`last`; with no name, the last run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from omni import trust
from omni.box import hostgit
from omni.box.workspace import ApplyOutcome, apply_to_user_tree, find_repo
from omni.errors import UsageError
from omni.run.cleanup import first_goal, owner_alive
from omni.run.record import OWNER, RunRecord, read_events
from omni.visible import visible

LAST = "last"


def runs_dir(repo_arg: Path | None) -> tuple[Path, Path]:
    repo = find_repo((repo_arg or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    return root, root / ".omni" / "runs"


def run_folders(runs: Path) -> list[Path]:
    """Oldest first (run ids start with their date and time)."""
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []


def run_folder(repo_arg: Path | None, run: str | None) -> tuple[Path, Path]:
    root, runs = runs_dir(repo_arg)
    folders = run_folders(runs)
    if not folders:
        raise UsageError("there are no runs in this repository yet")
    if run in (None, LAST):
        return root, folders[-1]
    matches = [p for p in folders if p.name.startswith(run)]
    if len(matches) != 1:
        raise UsageError(f"no run matches {run!r}; `omni runs` lists them" if not matches else
                         f"{run!r} matches several runs; give more of the id")
    return root, matches[0]


def summary(folder: Path) -> dict:
    try:
        return json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        running = (folder / OWNER).exists() and owner_alive(folder)  # else killed, or from an older omni
        return {"status": "running" if running else "incomplete", "goal": first_goal(folder), "steps": "?"}


def _mark(folder: Path, applied: bool, note: str) -> None:
    data = summary(folder)
    if "run_id" in data:
        RunRecord.write_file(folder / "summary.json", {**data, "applied": applied, "apply_note": note})


def list_runs(runs: Path) -> int:
    folders = run_folders(runs)
    if not folders:
        print("no runs yet")
    for folder in reversed(folders):
        s = summary(folder)
        applied = "applied" if s.get("applied") else ""
        print(visible(f"{folder.name}  {s['status']:<13} {applied:<8} {str(s['steps']):>3} steps  {s['goal'][:64]}"))
    return 0


def _unapplied(root: Path, runs: Path) -> list[tuple[str, str, Path | None]]:
    """(run id, its branch if it still exists, its worktree if it still exists) of finished runs never applied."""
    found = []
    for folder in run_folders(runs):
        s = summary(folder)
        if s.get("applied") or ("run_id" not in s and owner_alive(folder)):
            continue  # applied, or still running (or of an owner omni cannot tell is gone)
        branch = f"omni/{folder.name}"
        exists = hostgit.text(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], root, check=False).strip()
        worktree = root / ".omni" / "worktrees" / folder.name
        if exists or worktree.exists():
            found.append((folder.name, branch if exists else "", worktree if worktree.exists() else None))
    return found


def prune(root: Path, runs: Path, yes: bool) -> int:
    """Remove the branches and worktrees of runs never applied (their records stay), asking first."""
    found = _unapplied(root, runs)
    if not found:
        print("nothing to prune: every run's branch is either applied or already gone")
        return 0
    print(f"{len(found)} run(s) never applied; their branches and worktrees go (the records in .omni/runs stay):")
    for run_id, branch, worktree in found:
        print(f"  {run_id}  {branch or '(no branch)'}{'  + worktree' if worktree else ''}")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("omni runs --prune asks before it deletes; without a terminal, pass --yes")
        if input("Delete them? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing was deleted")
            return 1
    for _, branch, worktree in found:
        if worktree:
            hostgit.run(["worktree", "remove", "--force", str(worktree)], root, check=False)
        if branch:
            hostgit.run(["branch", "--quiet", "-D", branch], root, check=False)
    hostgit.run(["worktree", "prune"], root, check=False)
    print(f"pruned {len(found)} run(s)")
    return 0


def show(folder: Path) -> int:
    from omni.run.ui import ConsoleUI

    ui = ConsoleUI()
    for event in read_events(folder):
        kind = event.pop("kind")
        event.pop("type", None)
        ui.emit(kind, **event)
    if not (folder / "summary.json").exists():
        ui.print("(the run ended without a summary: it was killed or crashed)", "yellow")
    return 0


def _already_applied(root: Path, patch: bytes) -> bool:
    """Whether the user's tree already holds the run's changes: the patch taken back would apply cleanly."""
    check = hostgit.run(["apply", "--check", "-R", "--binary", "-"], root, input=patch, check=False)
    return check.returncode == 0


def show_diff(folder: Path, raw: bool) -> int:
    """The run's diff: its exact bytes with --raw (for a pipe into git apply); else as text with every control,
    escape and bidi character written out, so that what the user reads is what would be applied."""
    patch_path = folder / "diff.patch"
    patch = patch_path.read_bytes() if patch_path.exists() else b""
    if raw:
        sys.stdout.buffer.write(patch)
        sys.stdout.flush()
    else:
        sys.stdout.write(visible(patch.decode("utf-8", "backslashreplace")) if patch else "(no changes)\n")
    return 0


def _unfinished(folder: Path, s: dict, patch: bytes, yes: bool) -> bool:
    """Whether to go on with applying a run that did not finish verified (interrupted, killed, flagged, unverified,
    at a limit): said first, then asked; without a terminal only --yes goes on."""
    status = s.get("status", "incomplete")
    if status == "finished":
        return True
    print(visible(f"run {folder.name} ended {status}, not finished: {s.get('message') or 'no summary'}. "
                  "Its result was not verified."), file=sys.stderr)
    if yes:
        return True
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(f"run {folder.name} did not finish ({status}); to apply it anyway, pass --yes")
    from rich.console import Console

    from omni.run.finish import ask_apply

    return ask_apply(Console(highlight=False), patch, "Apply it anyway?")


def apply_or_undo(command: str, root: Path, folder: Path, yes: bool = False) -> int:
    patch_path = folder / "diff.patch"
    patch = patch_path.read_bytes() if patch_path.exists() else b""
    if not patch.strip():
        print(f"run {folder.name} changed nothing; nothing to {command}")
        return 1
    s = summary(folder)
    files = [f["path"] for f in s.get("changed_files", [])]
    applied = _already_applied(root, patch)
    if command == "apply":
        if applied:
            _mark(folder, True, "applied")
            print(f"already applied: your working tree has the changes of run {folder.name}")
            return 0
        if not _unfinished(folder, s, patch, yes):
            print("nothing was applied")
            return 1
        steering = trust.steering_files(files)
        if steering:
            print(visible(f"note: this diff changes {', '.join(steering)}, which later runs or your tools read as "
                          "instructions or config"), file=sys.stderr)
        if s.get("links_out"):
            print(visible(f"note: this diff adds symbolic links out of the repository: {', '.join(s['links_out'])}"),
                  file=sys.stderr)
        result = apply_to_user_tree(root, s.get("seed", ""), patch, files, patch_path=str(patch_path))
    else:
        if not applied:
            if s.get("applied"):
                _mark(folder, False, "taken back outside omni")
            print(f"run {folder.name} is not applied: your working tree does not hold its changes, so there is "
                  "nothing to undo")
            return 1
        result = _undo(root, s, patch, files, patch_path)
    if result.applied:
        _mark(folder, command == "apply", f"{command} with `omni {command}`")
    print(visible(result.message))
    return 0 if result.applied else 1


def _undo(root: Path, s: dict, patch: bytes, files: list[str], patch_path: Path) -> ApplyOutcome:
    """Take an applied run back: the files must be exactly as the run left them (its branch's tip); with the
    branch gone (omni runs --prune), taking the diff back must apply cleanly instead."""
    tip = hostgit.text(["rev-parse", "--verify", "--quiet", s.get("branch") or "-"], root, check=False).strip()
    if tip:
        return apply_to_user_tree(root, tip, patch, files, reverse=True, patch_path=str(patch_path))
    done = hostgit.run(["apply", "-R", "--binary", "--whitespace=nowarn", "-"], root, input=patch, check=False)
    if done.returncode != 0:
        return ApplyOutcome(False, f"git apply -R refused: {done.stderr.decode(errors='replace')}", [])
    return ApplyOutcome(True, f"undid changes to {len(files)} file(s)", [])
