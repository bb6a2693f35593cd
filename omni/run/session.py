"""One run from start to end: check the inputs, set up the record, the worktree and the sandbox, run
the agent, then save the diff and summary and offer to apply. Nothing here prints; the UI does."""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import time
from pathlib import Path

from rich.console import Console

from omni.box.hostgit import GitError
from omni.box.engine import docker_client
from omni.box.toolbox import Toolbox, details
from omni.box.workspace import Workspace, ensure_omni_dir, find_repo
from omni.errors import EXIT_CODES, ForceQuit, ModelError, SandboxError, UsageError
from omni.loop.agent import Parts
from omni.model.usage import UsageMeter
from omni.model.endpoint import resolve_models
from omni.model.pricing import check_max_cost
from omni.prompts import Prompts
from omni.protocols import Model
from omni.run import instructions, wiring
from omni.run.cleanup import cleanup_after_killed_runs
from omni.run.finish import finish
from omni.run.frame import Run, RunRequest
from omni.run.record import EventBus, RunRecord, RunFacts, new_run_id
from omni.run.steering import InterruptHandler
from omni.run.ui import ConsoleUI, JsonLines, NoUser, TerminalAnswers


def run_goal(request: RunRequest) -> tuple[int, dict]:
    if request.delegate is not None and not request.settings.aider:  # the change is Aider's: the image has it
        request.settings = request.settings.model_copy(update={"aider": True})
    s = request.settings
    # Everything that can be wrong with the user's input is checked before anything is written.
    if s.aider and s.sandbox != "docker":
        raise UsageError("Aider runs only inside the Docker sandbox; --aider and /aider need --sandbox docker")
    repo = find_repo((request.repo or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    if not repo.head.is_valid():
        raise UsageError("the repository has no commits yet; make a first commit, then run omni")
    models = resolve_models(s)
    check_max_cost(models, s.max_cost)
    # No engine: a clear message and exit 2, before any file is written. The sandbox reuses this client.
    engine = docker_client() if s.sandbox == "docker" else None
    if engine is not None:  # a missing sandbox image is built now, or the run stops (exit 2) with what to install
        wiring.prepare_image(engine, s, Console(file=sys.stderr if request.json else sys.stdout, highlight=False))
    # The openai package takes ~0.5 s to import: load it while the worktree and container start.
    warm = threading.Thread(target=importlib.import_module, args=("omni.model.client",), daemon=True)
    warm.start()
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not (s.yes or s.yes_all) and not request.json
    ui = ConsoleUI(stream=sys.stderr if request.json else sys.stdout, verbose=s.verbose, live=interactive)
    run_id = new_run_id()
    ensure_omni_dir(root)
    left_behind = cleanup_after_killed_runs(root)  # before this run's own record exists
    record = RunRecord(root / ".omni" / "runs" / run_id)
    facts = RunFacts()
    events = EventBus(record, facts, ui, *([JsonLines()] if request.json else []))
    if left_behind:
        events.emit("sandbox", line=left_behind)
    if models[0].note:
        events.emit("warning", message=models[0].note)
    run = Run(request, run_id, repo, Workspace(repo, run_id, s.max_workspace_mb * 2**20), record, events, ui,
              interactive, facts)
    started = time.monotonic()
    handler = InterruptHandler() if interactive else None
    try:
        if handler:
            handler.__enter__()
        _run(run, models, engine, warm)
    except (ModelError, SandboxError) as exc:
        run.status, run.message = exc.status, str(exc)
    except GitError as exc:  # the worktree could not be made or committed: said, not a traceback
        run.status, run.message = "failed", str(exc)
    except (KeyboardInterrupt, ForceQuit) as exc:
        run.status, run.message = "interrupted", str(exc) or "interrupted by the user"
    except Exception as exc:  # a bug in omni: recorded, the workspace cleaned up, then reported by the CLI
        run.status, run.message = "failed", f"internal error: {type(exc).__name__}: {exc}"
        raise
    finally:
        summary = _close(run, handler, time.monotonic() - started)
    status = summary.get("status", run.status)  # saving the result can still fail the run
    return EXIT_CODES.get(status, 0 if status == "planned" else 1), summary


def _run(run: Run, models, engine, warm: threading.Thread) -> None:
    request, s, events, workspace = run.request, run.request.settings, run.events, run.workspace
    prompts, toolbox = Prompts(), Toolbox(s.tools, repair=s.samples > 1 and not request.delegate, aider=s.aider)
    root = Path(run.repo.working_tree_dir)
    context, loaded = instructions.load(root, Path.cwd())
    if request.history:
        context += ("\n\n" if context else "") + "Earlier goals in this session:\n" + "\n".join(request.history)
    if request.continued:
        context += ("\n\n" if context else "") + request.continued.context
    workspace.create()
    run.sandbox = wiring.start_sandbox(s, run.run_id, workspace, Path(run.repo.common_dir).resolve(), events,
                                       engine)
    workspace.hold = run.sandbox.hold  # host git reads and writes the worktree only while the sandbox is held
    warm.join()
    from omni.model.client import ChatModel

    action_config, planner_config = models
    model = ChatModel(action_config, on_event=events.emit)
    planner = model if planner_config == action_config else ChatModel(planner_config, on_event=events.emit)
    if model.tool_mode == "auto":
        model.probe_tool_mode(prompts.render("probe"))
    planner.tool_mode = model.tool_mode
    events.emit("run_start", run_id=run.run_id, goal=request.goal, model=model.name, planner=planner.name,
                tool_mode=model.tool_mode, sandbox=run.sandbox.kind, repo=str(root), branch=workspace.branch,
                instructions=loaded, endpoint=action_config.base_url, profile=s.profile,
                mount=getattr(getattr(run.sandbox, "mount", None), "kind", ""),
                mount_reason=getattr(getattr(run.sandbox, "mount", None), "reason", ""),
                continues=request.continued.run_id if request.continued else "")
    files = details("list_files", run.sandbox.run_tool("list_files", {"max_results": 60}, 60)).files
    system = wiring.system_prompt(prompts, run.sandbox, workspace, model.tool_mode, toolbox, context)
    answers = TerminalAnswers(run.ui) if run.interactive else NoUser(prompts.render("no_user"))
    parts = Parts(model, planner, run.sandbox, toolbox, prompts, events, answers)
    agent = wiring.build_agent(request, s, parts, workspace, events, run.ui, run.interactive, system, files,
                               context, UsageMeter(events, _cost_kind(model, planner)))
    if request.plan_only:
        agent.interruptible(agent.make_plan)
        run.status, run.message = "planned", agent.state.plan.render() if agent.state.plan else ""
    else:
        run.outcome = agent.run()
        run.status, run.message = run.outcome.status, run.outcome.message


def _close(run: Run, handler, wall: float) -> dict:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # cleanup must finish
    try:
        if run.outcome is None and run.status != "planned":
            run.events.emit("status", status=run.status, message=run.message, steps=0, usage={})
        if run.sandbox is not None:
            run.sandbox.close()
        return finish(run, wall)
    finally:
        run.ui.close()
        run.record.close()
        if handler:
            handler.__exit__()
        signal.signal(signal.SIGINT, previous)


def _cost_kind(*models: Model) -> str:
    """The run's cost kind before any request: "local" when every model is a server of the user's own (nothing
    is spent whatever happens); otherwise none yet, as a priced or unknown kind comes with its first request."""
    return "local" if all(m.cost_kind == "local" for m in models) else ""
