"""One run from start to end: check the inputs, set up the record, the worktree and the sandbox, run
the agent, then save the diff and summary and offer to apply. Nothing here prints; the UI does."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from pathlib import Path

from omni.agent import Agent, AgentConfig
from omni.config import resolve_models
from omni.errors import EXIT_CODES, ModelError, SandboxError, UsageError
from omni.prompts import Prompts
from omni.record import EventBus, RunRecord, new_run_id
from omni.sandbox import DockerSandbox, LocalSandbox, SandboxConfig, docker_client
from omni.toolbox import Toolbox
from omni.ui import ConsoleUI, JsonLines, NoUser, TerminalAnswers
from omni.workspace import Workspace, apply_to_user_tree, ensure_omni_dir, find_repo


def sandbox_config(args) -> SandboxConfig:
    config = SandboxConfig(network=args.network)
    image = args.image or os.environ.get("OMNI_SANDBOX_IMAGE")
    base = args.base_image or os.environ.get("OMNI_BASE_IMAGE")
    return config.model_copy(update={k: v for k, v in (("image", image), ("base_image", base)) if v})


def run_goal(args, goal: str) -> int:
    # Everything that can be wrong with the user's input is checked before anything is written.
    repo = find_repo((args.repo or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    if not repo.head.is_valid():
        raise UsageError("the repository has no commits yet; make a first commit, then run omni")
    action_config, planner_config = resolve_models(args)
    prompts, toolbox = Prompts(), Toolbox()
    if args.sandbox == "docker":
        docker_client()  # no engine: a clear message and exit 2, before any file is written

    # The openai package takes ~0.5 s to import: load it while the worktree and container start.
    warm = threading.Thread(target=importlib.import_module, args=("omni.model",), daemon=True)
    warm.start()
    interactive = sys.stdin.isatty() and not args.yes and not args.json
    ui = ConsoleUI(stream=sys.stderr if args.json else sys.stdout, verbose=args.verbose)
    run_id = new_run_id()
    ensure_omni_dir(root)
    record = RunRecord(root / ".omni" / "runs" / run_id)
    events = EventBus(record, ui, *([JsonLines()] if args.json else []))
    answers = TerminalAnswers(ui.console) if interactive else NoUser(prompts.render("no_user"))
    workspace = Workspace(repo, run_id)
    started = time.monotonic()
    status, message, outcome, sandbox = "failed", "", None, None
    try:
        workspace.create()
        if args.sandbox == "docker":
            sandbox = DockerSandbox(run_id, workspace.path, Path(repo.common_dir).resolve(),
                                    sandbox_config(args), events.emit, args.test_command)
        else:
            events.emit("warning", message="--sandbox local: tools run on this machine without a container "
                        "or any isolation (on a copy of the repo in .omni/worktrees)")
            sandbox = LocalSandbox(workspace.path, args.test_command)
        warm.join()
        from omni.model import ChatModel

        model = ChatModel(action_config, on_event=events.emit)
        planner = model if planner_config == action_config else ChatModel(planner_config, on_event=events.emit)
        if model.tool_mode == "auto":
            model.probe_tool_mode(prompts.render("probe"))
        planner.tool_mode = model.tool_mode
        events.emit("run_start", run_id=run_id, goal=goal, model=model.name, planner=planner.name,
                    tool_mode=model.tool_mode, sandbox=sandbox.kind, repo=str(root), branch=workspace.branch)
        files = sandbox.run_tool("list_files", {"max_results": 60}, 60).output.splitlines()
        system = prompts.render("system", workspace="/workspace" if sandbox.kind == "docker" else
                                str(workspace.path), tool_mode=model.tool_mode, tools=toolbox.signatures(),
                                instructions="")
        config = AgentConfig(max_steps=args.max_steps, max_cost=args.max_cost, timeout=args.timeout)
        agent = Agent(goal, model, planner, sandbox, toolbox, prompts, events, answers, config, system, files)
        outcome = agent.run()
        status, message = outcome.status, outcome.message
    except ModelError as exc:
        status, message = "model_error", str(exc)
        events.emit("status", status=status, message=message, steps=0, usage={})
    except SandboxError as exc:
        status, message = "sandbox_error", str(exc)
        events.emit("status", status=status, message=message, steps=0, usage={})
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted by the user"
        events.emit("status", status=status, message=message, steps=0, usage={})
    finally:
        if sandbox is not None:
            sandbox.close()
        finish(workspace, record, events, ui, interactive, args, goal, status, message, outcome,
               time.monotonic() - started, run_id)
        record.close()
    return EXIT_CODES.get(status, 1)


def finish(workspace, record, events, ui, interactive, args, goal, status, message, outcome, wall, run_id):
    diff, rows = "", []
    if workspace.seed:
        diff = workspace.snapshot(f"omni: {goal[:60]}")
        rows = workspace.numstat()
        record.write("diff.patch", diff)
    applied, apply_note = False, ""
    if status == "finished" and diff.strip():
        wants = args.yes or (interactive and ui.console.input(
            f"Apply the changes to {len(rows)} file(s) to your working tree? [y/N] ").strip().lower() in ("y", "yes"))
        if wants:
            result = apply_to_user_tree(workspace.user_root, workspace.seed, diff, [r[0] for r in rows])
            applied, apply_note = result.applied, result.message
    usage = outcome.usage.model_dump() if outcome else {}
    summary = {
        "run_id": run_id, "goal": goal, "status": status, "message": message, "exit_code": EXIT_CODES.get(status, 1),
        "steps": outcome.steps if outcome else 0, "usage": usage, "wall_s": round(wall, 2),
        "changed_files": [{"path": p, "added": a, "removed": r} for p, a, r in rows],
        "branch": workspace.branch, "seed": workspace.seed, "applied": applied, "apply_note": apply_note,
        "assumptions": outcome.assumptions if outcome else [],
        "plan": [s.model_dump() for s in outcome.plan.steps] if outcome and outcome.plan else [],
    }
    record.write("summary.json", summary)
    events.emit("summary", **summary, record=str(record.folder))
    if workspace.seed:
        workspace.remove()
    ui.print(f"\n[bold]Run {run_id}[/]: {status}; {summary['steps']} steps, "
             f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens, "
             f"${usage.get('cost', 0):.4f}, {wall:.1f}s")
    for path, added, removed in rows:
        ui.print(f"  {path}  [green]+{added}[/] [red]-{removed}[/]")
    if applied:
        ui.print(f"[green]{apply_note}[/]. Undo with: git apply -R .omni/runs/{run_id}/diff.patch")
    elif rows:
        if apply_note:
            ui.print(f"[yellow]{apply_note}[/]")
        ui.print(f"The changes are on branch {workspace.branch}. Apply them with: omni apply {run_id}")
    ui.print(f"Run record: {record.folder}")
