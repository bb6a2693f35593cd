"""The end of a run: commit and save its diff, offer to apply it (or apply it under --yes, unless it
changes files that steer later runs), write summary.json, and remove the worktree."""

from __future__ import annotations

from omni import trust
from omni.box.hostgit import GitError
from omni.box.workspace import Workspace, WorkspaceTooLarge, apply_to_user_tree
from omni.check.reproduction import MODEL_WRITTEN
from omni.errors import EXIT_CODES
from omni.run.frame import Run
from omni.run.lineinput import ask_choice, show_paged
from omni.run.record import RunRecord


def _save(workspace: Workspace, record: RunRecord, goal: str) -> tuple[bytes, list, str]:
    """Commit the run's result and write diff.patch: (diff, numstat rows, why it could not be saved)."""
    try:
        diff = workspace.snapshot(f"omni: {goal[:60]}")
        rows = workspace.numstat()
    except WorkspaceTooLarge as exc:
        return b"", [], str(exc)
    except GitError as exc:  # the worktree stays, so its files can still be looked at
        workspace.keep = True
        return b"", [], (f"the run's result could not be saved: {exc}. Its files are left in {workspace.path}; "
                        f"remove it with `git worktree remove --force {workspace.path}`")
    record.write("diff.patch", diff)
    return diff, rows, ""


def held_back(steering: list[str], links: list[str]) -> str:
    """Why --yes does not apply a diff ('' when it may): it changes files that steer later runs or tools, or
    adds links that point out of the repository."""
    parts = [f"the diff changes {', '.join(steering)}, which later runs or your tools read as instructions or "
             "config" if steering else "",
             f"it adds symbolic links out of the repository ({', '.join(links)})" if links else ""]
    said = "; ".join(p for p in parts if p)
    return (f"held back: {said}; --yes does not apply that (review it with `omni diff`, then `omni apply`, or "
            "pass --yes-all)") if said else ""


def _apply(workspace, ui, interactive, s, diff, rows, steering: list[str], links: list[str],
           check: dict) -> tuple[bool, str]:
    """Offer the diff (or apply it under --yes); a diff that changes instruction or config files, or adds a
    link out of the repository, is called out, and --yes alone does not apply it; a check the model wrote (check:
    the summary's) is said with what it asserts, so the user judges what "verified" means here."""
    if s.yes and not s.yes_all and (why := held_back(steering, links)):
        return False, why
    wants = s.yes or s.yes_all
    if not wants and interactive:
        ui.pause()
        ui.show(_change_list(rows, steering, links, check))
        wants = ask_apply(ui.console, diff)
    if not wants:
        return False, ""
    result = apply_to_user_tree(workspace.user_root, workspace.seed, diff, [r[0] for r in rows])
    return result.applied, result.message


APPLY_ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "d": "diff", "diff": "diff"}


def ask_apply(console, diff: bytes, question: str = "Apply these changes to your working tree?") -> bool:
    """[y/N/d]: d shows the diff (paged on a terminal) and asks again; no answer is No."""
    while (said := ask_choice(console, f"{question} \\[y/N/d] ", APPLY_ANSWERS, "no")) == "diff":
        show_paged(console, diff.decode("utf-8", "backslashreplace"))
    return said == "yes"


def _change_list(rows, steering: list[str], links: list[str], check: dict) -> str:
    lines = [f"  {name}  +{added} -{removed}" for name, added, removed in rows]
    if check["source"] in MODEL_WRITTEN and check["holds"] and check["asserts"]:
        lines.append(f"  note: the check these changes pass is a {check['source']} the model wrote, not a test of "
                     f"yours; it asserts: {'; '.join(check['asserts'])}. If that is not what the code should do, "
                     "answer n (at a Ctrl-C pause, an example you type becomes the check)")
    if steering:
        lines.append(f"  note: {', '.join(steering)} steer later runs or your tools (instructions, config); "
                     "check them before you apply")
    if links:
        lines.append(f"  note: symbolic links out of the repository: {', '.join(links)}")
    return f"The run changed {len(rows)} file(s):\n" + "\n".join(lines)


def finish(run: Run, wall: float) -> dict:
    """Save the run's result, offer or apply it, and write summary.json (run: omni/run/session.py's Run). Whatever
    goes wrong on the way, the run ends with a summary: a bug here is said in it, and the worktree is kept."""
    try:
        return _finish(run, wall)
    except Exception as exc:  # noqa: BLE001 - omni's own failure: recorded, never a missing summary
        run.workspace.keep = True
        return _write(run, wall, {
            "status": "failed", "changed_files": [], "applied": False, "apply_note": "", "steering_files": [],
            "links_out": [], "message": f"internal error while saving the run's result: {type(exc).__name__}: {exc}. "
            f"The run's files are left in {run.workspace.path} (branch {run.workspace.branch})"})


def _finish(run: Run, wall: float) -> dict:
    workspace, record, events, s, goal = run.workspace, run.record, run.events, run.request.settings, run.request.goal
    status, message = run.status, run.message
    diff, rows, not_saved = (b"", [], "") if not workspace.seed else _save(workspace, record, goal)
    if not_saved:
        status, message = ("sandbox_error" if "workspace grew" in not_saved else "failed"), not_saved
    steering = trust.steering_files([r[0] for r in rows], run.request.steering)
    links = trust.links_out(workspace.links()) if rows else []
    applied, apply_note = False, ""
    if status == "finished" and diff.strip():
        applied, apply_note = _apply(workspace, run.ui, run.interactive, s, diff, rows, steering, links,
                                     run.facts.check())
    if workspace.seed and workspace.path.exists() and not workspace.keep:
        try:
            workspace.remove(drop_branch=not diff.strip())
        except GitError as exc:
            events.emit("warning", message=f"the worktree {workspace.path} could not be removed: {exc}")
    return _write(run, wall, {
        "status": status, "message": message,
        "changed_files": [{"path": p, "added": a, "removed": r} for p, a, r in rows],
        "applied": applied, "apply_note": apply_note, "steering_files": steering, "links_out": links})


def _write(run: Run, wall: float, result: dict) -> dict:
    """summary.json: what the end of the run found (result), with what the run knows of itself."""
    outcome, workspace = run.outcome, run.workspace
    summary = {
        "run_id": run.run_id, "goal": run.request.goal, **result, "exit_code": EXIT_CODES.get(result["status"], 1),
        "steps": outcome.steps if outcome else 0, "usage": outcome.usage.model_dump() if outcome else {},
        "wall_s": round(wall, 2), "branch": workspace.branch, "seed": workspace.seed,
        "left_out": [p + "/" for p in workspace.left_out],
        "assumptions": outcome.assumptions if outcome else [],
        "tests": run.facts.last, "tests_at_start": run.facts.at_start, "check": run.facts.check(),
        "profile": run.request.settings.profile,
        "first_action_s": run.facts.first_action_s, "cached_share": run.facts.cached_share(),
        "plan": [st.model_dump() for st in outcome.plan.steps] if outcome and outcome.plan else [],
    }
    run.record.write("summary.json", summary)
    run.events.emit("summary", **summary, record=str(run.record.folder))
    return summary
