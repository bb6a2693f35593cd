"""One run from start to end: check the inputs, set up the record, the worktree and the sandbox, run
the agent, then save the diff and summary and offer to apply. Nothing here prints; the UI does."""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from omni import trust
from omni.run import instructions
from omni.loop.agent import Agent, AgentConfig, Outcome
from omni.check.briefing import failing_tests, named_code
from omni.model.endpoint import resolve_models
from omni.errors import EXIT_CODES, ForceQuit, ModelError, SandboxError, StopRun, UsageError
from omni.check.examples import GoalExamples
from omni.check.gate import FinishGate
from omni.prompts import Prompts
from omni.box.hostgit import GitError
from omni.run.cleanup import cleanup_after_killed_runs
from omni.run.record import EventBus, RunRecord, new_run_id
from omni.box.sandbox import DockerSandbox, LocalSandbox, SandboxConfig, docker_client
from omni.settings import Settings
from omni.run.steering import InterruptHandler, TerminalSteering
from omni.box.toolbox import Toolbox
from omni.run.ui import ConsoleUI, JsonLines, NoUser, TerminalAnswers
from omni.box.workspace import Workspace, WorkspaceTooLarge, apply_to_user_tree, ensure_omni_dir, find_repo


@dataclass
class RunRequest:
    goal: str
    settings: Settings
    repo: Path | None = None
    json: bool = False
    plan_only: bool = False
    history: list[str] = field(default_factory=list)  # earlier goals of an interactive session
    criteria: list[str] = field(default_factory=list)  # a spec step's validation criteria


def sandbox_config(s: Settings) -> SandboxConfig:
    config = SandboxConfig(network=s.network, workspace_limit_mb=s.max_workspace_mb)
    return config.model_copy(update={k: v for k, v in (("image", s.image), ("base_image", s.base_image)) if v})


def run_goal(request: RunRequest) -> tuple[int, dict]:
    s = request.settings
    # Everything that can be wrong with the user's input is checked before anything is written.
    repo = find_repo((request.repo or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    if not repo.head.is_valid():
        raise UsageError("the repository has no commits yet; make a first commit, then run omni")
    action_config, planner_config = resolve_models(s)
    prompts, toolbox = Prompts(), Toolbox(s.tools)
    # No engine: a clear message and exit 2, before any file is written. The sandbox reuses this client.
    engine = docker_client() if s.sandbox == "docker" else None
    # The openai package takes ~0.5 s to import: load it while the worktree and container start.
    warm = threading.Thread(target=importlib.import_module, args=("omni.model.client",), daemon=True)
    warm.start()

    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not s.yes and not request.json
    ui = ConsoleUI(stream=sys.stderr if request.json else sys.stdout, verbose=s.verbose, live=interactive)
    run_id = new_run_id()
    ensure_omni_dir(root)
    left_behind = cleanup_after_killed_runs(root)  # before this run's own record exists
    record = RunRecord(root / ".omni" / "runs" / run_id)
    events = EventBus(record, ui, *([JsonLines()] if request.json else []))
    if left_behind:
        events.emit("sandbox", line=left_behind)
    answers = TerminalAnswers(ui) if interactive else NoUser(prompts.render("no_user"))
    text, loaded = instructions.load(root, Path.cwd())
    if request.history:
        text += ("\n\n" if text else "") + "Earlier goals in this session:\n" + "\n".join(request.history)
    workspace = Workspace(repo, run_id, s.max_workspace_mb * 2**20)
    started = time.monotonic()
    status, message, outcome, sandbox = "failed", "", None, None
    handler = InterruptHandler() if interactive else None
    try:
        if handler:
            handler.__enter__()
        workspace.create()
        if s.sandbox == "docker":
            sandbox = DockerSandbox(run_id, workspace.path, Path(repo.common_dir).resolve(),
                                    sandbox_config(s), events.emit, s.test_command, workspace.seed, engine)
        else:
            events.emit("warning", message="--sandbox local: tools run on this machine without a container "
                        "or any isolation (on a copy of the repo in .omni/worktrees)")
            sandbox = LocalSandbox(workspace.path, s.test_command, workspace.seed, s.max_workspace_mb * 2**20)
        warm.join()
        from omni.model.client import ChatModel

        model = ChatModel(action_config, on_event=events.emit)
        planner = model if planner_config == action_config else ChatModel(planner_config, on_event=events.emit)
        if model.tool_mode == "auto":
            model.probe_tool_mode(prompts.render("probe"))
        planner.tool_mode = model.tool_mode
        events.emit("run_start", run_id=run_id, goal=request.goal, model=model.name, planner=planner.name,
                    tool_mode=model.tool_mode, sandbox=sandbox.kind, repo=str(root), branch=workspace.branch,
                    instructions=loaded)
        files = sandbox.run_tool("list_files", {"max_results": 60}, 60).output.splitlines()
        system = prompts.render("system", workspace="/workspace" if sandbox.kind == "docker" else
                                str(workspace.path), tool_mode=model.tool_mode, tools=toolbox.signatures(),
                                instructions=text)
        config = AgentConfig(max_steps=s.max_steps, max_cost=s.max_cost, timeout=s.timeout)

        def checkpoint(action, result):
            try:
                left_out = workspace.checkpoint(action.compact(70))
            except GitError as exc:  # what the model wrote cannot be committed: the run ends, said plainly
                raise StopRun("failed", f"the step's changes could not be recorded: {exc}") from None
            except WorkspaceTooLarge:  # the record keeps what the step itself said before the run stops
                events.emit("warning", message=f"{action.name}: {result.error or result.output[:300]}",
                            failure=result.failure)
                raise
            if left_out:  # the model is told in this step's observation, the user in the log
                note = nested_repos_note(left_out)
                if result.success:
                    result.output += "\n\n" + note
                else:
                    result.error += "\n\n" + note
                events.emit("warning", message=note)

        def undo() -> str:
            said = workspace.undo_last()
            if hasattr(sandbox, "give_back"):
                sandbox.give_back()
            return said

        steering = TerminalSteering(ui, workspace.diff_so_far, undo) if interactive else None
        examples = GoalExamples(request.goal)
        gate = FinishGate(sandbox, planner, prompts, events, workspace.diff_so_far, review=s.review,
                          max_refinements=s.max_refinements, criteria=request.criteria, examples=examples)
        # before the baseline: one sandbox call at a time
        code = "\n\n".join(part for part in (examples.start(sandbox), named_code(sandbox, request.goal, files))
                            if part)
        if not request.plan_only:
            gate.start_baseline()  # tests and lint of the untouched copy: only new failures will count
        agent = Agent(request.goal, model, planner, sandbox, toolbox, prompts, events, answers, config, system,
                      files, gate=gate, after_action=checkpoint, context=text, ready=gate.wait_baseline,
                      briefing=lambda: failing_tests(sorted(gate.base_tests.failing), gate.base_tests.report),
                      code=code, examples=examples,
                      **({"steering": steering} if steering else {}))
        if request.plan_only:
            agent.interruptible(agent.make_plan)
            status, message = "planned", agent.plan.render() if agent.plan else ""
        else:
            outcome = agent.run()
            status, message = outcome.status, outcome.message
    except ModelError as exc:
        status, message = "model_error", str(exc)
    except SandboxError as exc:
        status, message = "sandbox_error", str(exc)
    except GitError as exc:  # the worktree could not be made or committed: said, not a traceback
        status, message = "failed", str(exc)
    except (KeyboardInterrupt, ForceQuit):
        status, message = "interrupted", "interrupted by the user"
    except Exception as exc:  # a bug in omni: recorded, the workspace cleaned up, then reported by the CLI
        status, message = "failed", f"internal error: {type(exc).__name__}: {exc}"
        raise
    finally:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # cleanup must finish
        try:
            if outcome is None and status != "planned":
                events.emit("status", status=status, message=message, steps=0, usage={})
            if sandbox is not None:
                sandbox.close()
            summary = finish(workspace, record, events, ui, interactive, s, request.goal, status, message,
                             outcome, time.monotonic() - started, run_id)
        finally:
            ui.close()
            record.close()
            if handler:
                handler.__exit__()
            signal.signal(signal.SIGINT, previous)
    status = summary.get("status", status)  # saving the result can still fail the run
    return EXIT_CODES.get(status, 0 if status == "planned" else 1), summary


def nested_repos_note(paths: list[str]) -> str:
    return (f"note: {', '.join(p + '/' for p in paths)} became a git repository of its own (it has a .git); "
            "omni leaves such folders out of the run's result, so nothing in them will be applied. Do not "
            "create repositories inside the workspace.")


def _save(workspace: Workspace, record: RunRecord, goal: str) -> tuple[str, list, str]:
    """Commit the run's result and write diff.patch: (diff, numstat rows, why it could not be saved)."""
    try:
        diff = workspace.snapshot(f"omni: {goal[:60]}")
        rows = workspace.numstat()
    except WorkspaceTooLarge as exc:
        return "", [], str(exc)
    except GitError as exc:  # the worktree stays, so its files can still be looked at
        workspace.keep = True
        return "", [], (f"the run's result could not be saved: {exc}. Its files are left in {workspace.path}; "
                        f"remove it with `git worktree remove --force {workspace.path}`")
    record.write("diff.patch", diff)
    return diff, rows, ""


def _apply(workspace, ui, interactive, s, diff, rows) -> tuple[bool, str]:
    """Offer the diff (or apply it under --yes); a diff that changes instruction or config files is
    called out, and --yes alone does not apply it."""
    steering = trust.steering_files([r[0] for r in rows])
    if s.yes and steering and not s.yes_all:
        return False, (f"held back: the diff changes {', '.join(steering)}, which later runs or your tools read "
                       "as instructions or config; --yes does not apply that (review it with `omni diff`, then "
                       "`omni apply`, or pass --yes-all)")
    wants = s.yes or s.yes_all
    if not wants and interactive:
        ui.pause()
        ui.print(escape(_change_list(rows, steering)))
        wants = ui.console.input("Apply these changes to your working tree? \\[y/N] ").strip().lower() in ("y", "yes")
    if not wants:
        return False, ""
    result = apply_to_user_tree(workspace.user_root, workspace.seed, diff, [r[0] for r in rows])
    return result.applied, result.message


def _change_list(rows, steering: list[str]) -> str:
    lines = [f"  {name}  +{added} -{removed}" for name, added, removed in rows]
    if steering:
        lines.append(f"  note: {', '.join(steering)} steer later runs or your tools (instructions, config); "
                     "check them before you apply")
    return f"The run changed {len(rows)} file(s):\n" + "\n".join(lines)


def finish(workspace, record, events, ui, interactive, s, goal, status, message, outcome: Outcome | None,
           wall, run_id) -> dict:
    diff, rows, not_saved = ("", [], "") if not workspace.seed else _save(workspace, record, goal)
    if not_saved:
        status, message = ("sandbox_error" if "workspace grew" in not_saved else "failed"), not_saved
    applied, apply_note = False, ""
    if status == "finished" and diff.strip():
        applied, apply_note = _apply(workspace, ui, interactive, s, diff, rows)
    summary = {
        "run_id": run_id, "goal": goal, "status": status, "message": message,
        "exit_code": EXIT_CODES.get(status, 1), "steps": outcome.steps if outcome else 0,
        "usage": outcome.usage.model_dump() if outcome else {}, "wall_s": round(wall, 2),
        "changed_files": [{"path": p, "added": a, "removed": r} for p, a, r in rows],
        "branch": workspace.branch, "seed": workspace.seed, "applied": applied, "apply_note": apply_note,
        "steering_files": trust.steering_files([r[0] for r in rows]),
        "left_out": [p + "/" for p in workspace.left_out],
        "assumptions": outcome.assumptions if outcome else [], "tests": outcome.tests if outcome else "",
        "plan": [st.model_dump() for st in outcome.plan.steps] if outcome and outcome.plan else [],
    }
    record.write("summary.json", summary)
    if workspace.seed and workspace.path.exists() and not workspace.keep:
        try:
            workspace.remove()
        except GitError as exc:
            events.emit("warning", message=f"the worktree {workspace.path} could not be removed: {exc}")
    events.emit("summary", **summary, record=str(record.folder))
    return summary
