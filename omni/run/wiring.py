"""The parts of one run, put together: the sandbox over the worktree, the models, the hooks by which the
session steps into the loop (checkpoints, the goal's examples, Ctrl-C, the finish gate), and the agent."""

from __future__ import annotations

import contextlib
import json
from functools import partial
from pathlib import Path

from omni.box.hostgit import GitError
from omni.box.local import LocalSandbox
from omni.box.sandbox import DockerSandbox, SandboxConfig, ensure_image
from omni.box.toolbox import Toolbox, details
from omni.box.workspace import Workspace, WorkspaceTooLarge
from omni.check.examples import GoalExamples
from omni.check.environment import not_installed, note, unbound_note
from omni.check.gate import FinishGate, TestState
from omni.check.guided import GuidedExamples
from omni.check.reproduction_file import PATH as REPRODUCTION_PATH, Placed
from omni.check.reproduction import Reproduction
from omni.check.settled import Check, CheckNow
from omni.delegate.aider import AiderDelegate, AiderOptions, INTERACTIVE
from omni.delegate.strategy import DelegatedRun
from omni.errors import StopRun
from omni.goal.reading import GoalReading, GoalTests, read_goal
from omni.loop.agent import Agent, AgentConfig, Hooks, Parts, Task
from omni.model.relay import ChatRelay
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.repair.infilled import Infilling
from omni.repair.strategy import RepairStrategy
from omni.repair.verified import VerifiedRepair
from omni.results import Action, ToolResult
from omni.run.briefing import failing_tests, named_code
from omni.run.buildview import building
from omni.run.steering import TerminalSteering
from omni.settings import Settings


def sandbox_config(s: Settings) -> SandboxConfig:
    config = SandboxConfig(network=s.network, workspace_limit_mb=s.max_workspace_mb, mount=s.mount, aider=s.aider)
    return config.model_copy(update={k: v for k, v in (("image", s.image), ("base_image", s.base_image)) if v})


def prepare_image(engine, s: Settings, console) -> None:
    """Build the sandbox image if it is missing, showing one progress line; the error names the log."""
    with building(console) as view:
        ensure_image(engine, sandbox_config(s), view)


def start_sandbox(s: Settings, run_id: str, workspace: Workspace, git_dir: Path, events, engine):
    if s.sandbox == "docker":
        return DockerSandbox(run_id, workspace.path, git_dir, sandbox_config(s), events.emit, s.test_command,
                             workspace.seed, engine)
    events.emit("warning", message="--sandbox local: tools run on this machine without a container "
                "or any isolation (on a copy of the repo in .omni/worktrees)")
    return LocalSandbox(workspace.path, s.test_command, workspace.seed, s.max_workspace_mb * 2**20)


def nested_repos_note(paths: list[str]) -> str:
    return (f"note: {', '.join(p + '/' for p in paths)} became a git repository of its own (it has a .git); "
            "omni leaves such folders out of the run's result, so nothing in them will be applied. Do not "
            "create repositories inside the workspace.")


def checkpoint_hook(workspace: Workspace, events):
    """After each sandbox action: commit its changes (for /undo), and tell the model about a nested
    repository that was left out. A commit git refuses ends the run with a message."""

    def checkpoint(action: Action, result: ToolResult) -> ToolResult:
        try:
            left_out = workspace.checkpoint(action.compact(70))
        except GitError as exc:
            raise StopRun("failed", f"the step's changes could not be recorded: {exc}") from None
        except WorkspaceTooLarge:  # the record keeps what the step itself said before the run stops
            events.emit("warning", message=f"{action.name}: {result.error or result.output[:300]}",
                        failure=result.failure)
            raise
        if not left_out:
            return result
        note = nested_repos_note(left_out)
        events.emit("warning", message=note)
        field = "output" if result.success else "error"
        return result.model_copy(update={field: getattr(result, field) + "\n\n" + note})

    return checkpoint


def examples_hook(examples: GoalExamples, sandbox, toolbox: Toolbox):
    """After an edit: what it did to the goal's examples; after one that changed nothing, that the code is
    still not right."""

    def after_edit(action: Action, result: ToolResult) -> ToolResult:
        unchanged = action.name in toolbox.editing and details(action.name, result).unchanged
        if not examples.examples or action.name not in toolbox.editing or not (result.success or unchanged):
            return result
        now = examples.now(sandbox, unchanged=not result.success)
        field = "output" if result.success else "error"
        return result.model_copy(update={field: f"{getattr(result, field)}\n\n{now}"}) if now else result

    return after_edit


def guided_steering(ui, workspace: Workspace, sandbox, aider, guided: GuidedExamples):
    """The Ctrl-C pause, with the examples in the user's guidance made part of the run's check
    (omni/check/guided.py); what omni did with them follows the user's words to the model."""
    steering = TerminalSteering(ui, workspace.diff_so_far, undo_hook(workspace, sandbox), aider)

    def pause(plan: str, replace_plan) -> str:
        guidance = steering(plan, replace_plan)
        taken = guided.take(guidance) if guidance else None
        note = taken.note() if taken else ""
        return f"{guidance}\n\n{note}" if note else guidance

    return pause


def undo_hook(workspace: Workspace, sandbox):
    def undo() -> str:
        said = workspace.undo_last()
        if hasattr(sandbox, "give_back"):
            sandbox.give_back()
        return said

    return undo


def build_agent(request, s: Settings, parts: Parts, workspace: Workspace, events, ui, interactive: bool,
                system: str, files: list[str], context: str, meter: UsageMeter) -> Agent:
    sandbox, prompts = parts.sandbox, parts.prompts
    reading = read_goal(request.goal)  # the goal's English, read once, for everything that needs it
    examples = GoalExamples(reading.examples)
    gate = FinishGate(sandbox, parts.planner, prompts, events, workspace.diff_so_far, review=s.review,
                      max_refinements=s.max_refinements, criteria=request.criteria, check=lambda: check(), meter=meter)
    # before the baseline: one sandbox call at a time
    events.emit("phase", name="reading the code the goal names")
    code = "\n\n".join(p for p in (examples.start(sandbox), named_code(sandbox, reading, files)) if p)
    if not request.plan_only:
        gate.start_baseline()  # tests and lint of the untouched copy: only new failures will count
    reproduction = Reproduction(parts.model, sandbox, prompts, events, meter, reading.text, examples,
                                example_samples=s.samples)

    def about() -> list[str]:  # the tests failing at the start that the goal is about (settled in ready())
        return [t for t in gate.base_tests.in_order() if t not in gate.unrelated]  # the suite's order: see in_order

    def check() -> Check:  # settled before the first step (read when used); grows with what the gate finds broken
        return Check(about() + sorted(gate.broken) + reproduction.tests, [vars(e) for e in examples.examples],
                     sorted(gate.base_tests.failing) if gate.base_tests.ran else None, gate.base_tests.seconds)

    delegated = request.delegate
    delegate = aider_delegate(request, s, parts, events, ui if interactive else None, meter,
                              lambda: [*reading.files, *(t.split("::")[0] for t in about())])
    if delegated:
        strategy = DelegatedRun(INTERACTIVE if delegated.interactive else delegated.instruction, delegated.files)
    else:
        repair = verified_repair(s, parts, events, meter, check, reading)
        strategy = RepairStrategy(repair, parts.toolbox, CheckNow(sandbox, check), reading, events,
                                  opening=s.opening_repair, finish_on_check=s.finish_on_check)
    task = Task(request.goal, system, files, context=context, code=code, briefing=lambda: "\n\n".join(p for p in (
        failing_tests(about(), gate.base_tests.report, gate.unrelated), reproduced(reproduction)) if p))
    checkpoint = checkpoint_hook(workspace, events)
    steering = guided_steering(ui, workspace, sandbox, aider_at_pause(delegate, checkpoint), GuidedExamples(
        sandbox, examples, reproduction, events, check, strategy.check_changed)) if interactive else None
    after = [examples_hook(examples, sandbox, parts.toolbox), *([delegate.saw] if delegate else []), checkpoint]

    waited: list[bool] = []  # baseline waited for, changes carried: after a Ctrl-C in ready() it goes on from there

    def ready() -> None:  # before the first step, beside the plan's request: the baseline, then the run's check
        if not waited:
            events.emit("phase", name="waiting for the baseline tests")
            gate.wait_baseline()
            waited.append(True)
            carry_earlier(request.continued, workspace, sandbox, events)  # after the baseline: the user's state
        events.emit("phase", name="settling the run's check")
        scope = goal_scope(reading, gate.base_tests, events)
        gate.unrelated = scope.unrelated
        # a goal asking for something new has no failing behaviour yet; a delegated change is checked by the gate
        reproduce = s.reproduce and reading.fault and not delegated
        reproduction.establish(scope.about, len(examples.examples),
                               partial(reproduction_place, agent, parts.toolbox.schemas()), reproduce, scope.unrelated)

    hooks = Hooks(gate=gate, steering=steering, ready=ready, after_action=after, strategy=strategy,
                  delegate=delegate)
    config = AgentConfig(max_steps=s.max_steps, max_cost=s.max_cost, timeout=s.timeout)
    agent = Agent(task, parts, hooks, config, meter)
    return agent


def verified_repair(s: Settings, parts: Parts, events, meter: UsageMeter, check, reading: GoalReading):
    """Verified repair (omni/repair/verified.py) as the settings have it; None with --samples 1."""
    if s.samples < 2:
        return None
    model, sandbox = parts.model, parts.sandbox
    return VerifiedRepair(model, sandbox, parts.prompts, events, meter, check, s.samples, reading, s.mechanical,
                          s.block_from if s.block_rewrites else None, s.missing_lines,
                          Infilling(model, sandbox, meter, reading.plain) if s.infill else None)


def goal_scope(reading: GoalReading, base: TestState, events) -> GoalTests:
    """The tests failing at the start that the goal is about, and the rest. One that cannot import a module the
    sandbox lacks, or whose own code misses a name the project defines, is never the goal's (no fix makes it pass),
    and the user is told why (omni/check/environment.py)."""
    missing = not_installed(base.missing, reading)
    if missing:
        events.emit("warning", message=note(missing))
    if base.unbound:
        events.emit("warning", message=unbound_note(base.unbound))
    left_out = set(missing) | set(base.unbound)
    scope = reading.tests([t for t in base.in_order() if t not in left_out])
    return GoalTests(scope.about, scope.unrelated + sorted(left_out))


def reproduction_place(agent: Agent, tools: list[dict], prompt: str) -> Placed:
    """Where a reproduction request goes. When the plan was asked for (the model's step comes first), after it, on
    the steps' conversation and with their tools: the server then reads only what is new, where beside the plan two
    slots would each read the whole prefix. When the plan is put off until something reads it (omni's own round
    comes first, and needs the reproduction, not the plan), on the steps' messages without their tool list: the
    request is the run's first, read cold, and the list is about 1,600 tokens of it (2,400 with every tool: 30 to 45
    s of reading on a CPU server) that no step may ever read, as none does when omni's own round does the work."""
    if agent.planning.deferred:
        return Placed(agent.conversation.messages(prompt))
    agent.planning.take()
    return Placed(agent.conversation.messages(prompt), tools)


def aider_delegate(request, s: Settings, parts: Parts, events, ui, meter: UsageMeter, hints):
    """Aider as the run's delegate, with the relay of its model requests set on the sandbox; None when the run
    neither offers aider_edit (--aider) nor delegates its change (/aider, a spec's aider step)."""
    if not (s.aider or request.delegate):
        return None
    parts.sandbox.set_relay(ChatRelay(parts.model.config, meter, events, s.max_cost))
    timeout = min(AgentConfig.model_fields["tool_timeout"].default, s.timeout or float("inf"))
    options = AiderOptions(parts.model.name, s.aider_edit_format, s.aider_map_tokens, timeout,
                           interactive=bool(request.delegate and request.delegate.interactive),
                           terminal=(lambda: handed_over(ui)) if ui is not None else None)
    session = request.delegate.hints if request.delegate else []
    return AiderDelegate(parts.sandbox, events, options, hints=lambda: [*hints(), *session])


@contextlib.contextmanager
def handed_over(ui):
    """The terminal is the program's while it runs: the live log stops drawing, and draws again after."""
    ui.pause()
    try:
        yield
    finally:
        ui.resume()


def aider_at_pause(delegate, checkpoint):
    """`/aider TEXT` (automatic) or `/aider` (on the terminal) at the Ctrl-C pause: a step of its own, kept by the
    checkpoint (so /undo takes it back). None when the run has no delegate."""
    if delegate is None:
        return None

    def run(text: str) -> ToolResult:
        action = Action(name="aider_edit", args={"instruction": text or INTERACTIVE})
        result = delegate.automatic(text) if text else delegate.session()
        return checkpoint(action, result)

    return run


def carry_earlier(continued, workspace: Workspace, sandbox, events) -> None:
    """The unapplied changes of the run this one continues, as the worktree's first commit after its start."""
    if continued is None or not continued.patch.strip():
        return
    if workspace.carry(continued.patch, f"the changes of run {continued.run_id}, which this run continues"):
        if hasattr(sandbox, "give_back"):
            sandbox.give_back()  # written by host git: the container user's again
        events.emit("sandbox", line=f"carried over the changes of run {continued.run_id} (not applied before)")
    else:
        events.emit("warning", message=f"the changes of run {continued.run_id} do not apply to your files as they "
                    f"are now; this run starts without them (omni diff {continued.run_id} shows them)")


def reproduced(reproduction: Reproduction) -> str:
    if reproduction.example:  # checked after every edit with the goal's examples
        return (f"An example that shows the problem (omni had it written; it does not hold on the starting code; "
                f"finishing is checked against it):\n- {reproduction.example.describe()}")
    tests = reproduction.tests
    if not tests:
        return ""
    return (f"A test that shows the problem (omni had it written; it fails on the starting code):\n{', '.join(tests)} "
            f"in {REPRODUCTION_PATH}; leave it as it is. Make it pass. To run it: run_tests with "
            f"selection={json.dumps([REPRODUCTION_PATH])}")


def system_prompt(prompts: Prompts, sandbox, workspace: Workspace, tool_mode: str, toolbox: Toolbox,
                  instructions: str) -> str:
    return prompts.render("system", workspace="/workspace" if sandbox.kind == "docker" else str(workspace.path),
                          tool_mode=tool_mode, tools=toolbox.signatures(), instructions=instructions)
