"""The adaptive loop: plan, then one tool call per step; every failure becomes a correction prompt.

    plan -> choose one action -> guard -> execute -> observe -> correct (retry, switch tool, replan, ask)
    -> finish gate

Control flow is by exceptions that carry a status (StopRun): finish, limits, repeated format errors,
interrupts. The outcome is reported in one place, whatever ended the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from pydantic import BaseModel, Field

from omni.box.toolbox import Toolbox
from omni.errors import ForceQuit, ModelError, SandboxError, StopRun
from omni.loop.conversation import Conversation, observation_text
from omni.loop.failures import FailureTracker, failure_class, unreadable
from omni.loop.guard import RepeatGuard
from omni.loop.host_tools import HostTools
from omni.loop.planning import Planning
from omni.loop.progress import Progress
from omni.loop.prompting import StepPrompts
from omni.loop.requests import ask, chosen_by_omni
from omni.loop.state import Outcome, RunState
from omni.loop.strategy import AskTheModel
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.protocols import AfterAction, AnswerSource, Delegate, Events, Gate, Model, Sandbox, Steering, Strategy
from omni.results import Action, ToolResult


class AgentConfig(BaseModel):
    """Limits and knobs of the loop. The limits come from the run's Settings (no defaults here)."""

    max_steps: int = Field(ge=1, description="tool calls before the run stops (status limit_steps)")
    max_cost: float | None = Field(gt=0, description="USD before the run stops (limit_cost)")
    timeout: float | None = Field(gt=0, description="wall-clock seconds before the run stops (limit_time)")
    tool_timeout: float = Field(300, gt=0, description="default seconds for one tool call")
    history_chars: int = Field(40_000, ge=2000, description="older observations are shortened past this")
    replan_after: int = Field(3, ge=1, description="failures on one plan step before replanning")
    max_format_errors: int = Field(3, ge=1, description="unreadable replies in a row before stopping")
    unstick_temperature: float = Field(0.8, ge=0, le=2, description="temperature of the requests after a "
                                       "refused repeat, an edit that changed nothing, or a reply cut at the cap")


@dataclass
class Task:
    """What to do, and what is known before the first step."""

    goal: str
    system: str
    files: list[str]
    context: str = ""  # project instructions and earlier goals, for the planner too
    code: str = ""  # the code the goal names, looked up before planning
    briefing: Callable[[], str] | None = None  # looked up once before the first step: failing tests


@dataclass
class Parts:
    model: Model
    planner: Model
    sandbox: Sandbox
    toolbox: Toolbox
    prompts: Prompts
    events: Events
    answers: AnswerSource


@dataclass
class Hooks:
    """Where the session steps in."""

    gate: Gate | None = None
    steering: Steering | None = None
    after_action: list[AfterAction] = field(default_factory=list)  # each sandbox action's result passes
    ready: Callable[[], None] = lambda: None  # waited for before the first action (the gate's baseline)
    strategy: Strategy = field(default_factory=AskTheModel)  # the one door of verified repair (omni/repair/)
    delegate: Delegate | None = None  # the aider_edit tool's agent (omni/delegate/); None: the tool is off


class Agent:
    def __init__(self, task: Task, parts: Parts, hooks: Hooks, config: AgentConfig, meter: UsageMeter):
        self.task, self.parts, self.hooks, self.config, self.meter = task, parts, hooks, config, meter
        self.state = RunState(task.goal)
        self.guard = RepeatGuard(parts.toolbox, config.unstick_temperature)
        self.progress = Progress(parts.toolbox, shown_code=bool(task.code))
        self.failures = FailureTracker(config.replan_after, config.max_format_errors)
        self.conversation = Conversation(parts.prompts, task.system, task.goal,
                                         native=parts.model.tool_mode == "native", files=task.files)
        shared = (self.conversation, parts.toolbox.schemas()) if parts.planner is parts.model else ()
        self.planning = Planning(parts.planner, parts.prompts, parts.events, meter, task, self.state,
                                 self.failures.plan_moved, *shared)  # on the steps' prefix, if the planner is theirs
        self.host = HostTools(self.state, parts.prompts, parts.events, parts.answers, hooks, self.planning.set,
                              self.planning.read)
        self.prompting = StepPrompts(parts.prompts, self.state, config, meter, self.progress, self.guard,
                                     self.conversation, parts.model.tool_mode,
                                     getattr(parts.sandbox, "install_note", ""))

    # ---- the run ----------------------------------------------------------------------------------
    def run(self) -> Outcome:
        status, message = "failed", ""
        try:
            self.brief(self.task.code)  # before the plan, which then shares the steps' prefix up to the code
            strategy = self.hooks.strategy  # the plan is asked now, to run beside what follows, unless omni acts first
            self.planning.start(strategy.plan(), now=not strategy.acts_first())
            while not self.interruptible(self.hooks.ready):  # after a Ctrl-C in it, the pause; then it goes on
                continue
            self.brief(self.task.briefing() if self.task.briefing else "")
            while True:
                check_limits(self.config, self.state, self.meter)
                self.interruptible(partial(self.step, self.hooks.strategy.own_action()))
        except (StopRun, ModelError, SandboxError) as exc:
            status, message = exc.status, exc.message if isinstance(exc, StopRun) else str(exc)
        except ForceQuit as exc:
            status, message = "interrupted", str(exc) or "stopped: Ctrl-C twice, or SIGTERM"
        except Exception as exc:  # a bug in omni: the record says what it was, then the CLI reports it
            status, message = "failed", f"internal error: {type(exc).__name__}: {exc}"
            raise
        finally:
            if status != "interrupted":  # a user who stops the run is not kept waiting for its plan
                self.planning.leave()
            self.parts.events.emit("status", status=status, message=message, steps=self.state.steps,
                                   usage=self.meter.total.model_dump())
        return Outcome(status, message, self.state.steps, self.meter.total, self.state.plan, self.state.assumptions)

    def interruptible(self, work: Callable[[], None]) -> bool:  # whether it was done; a Ctrl-C in it: the pause
        try:
            work()
            return True
        except KeyboardInterrupt:
            self.parts.events.emit("interrupt", step=self.state.steps)
            if self.hooks.steering is None:
                raise StopRun("interrupted", "interrupted by the user") from None
            guidance = self.hooks.steering(self.state.plan.render() if self.state.plan else "", self.planning.user)
            if guidance:
                self.state.add_guidance(guidance)
                self.parts.events.emit("guidance", text=guidance)
            return False

    def brief(self, text: str) -> None:  # before the plan, the code the goal names; after it, the failing tests
        if text:
            self.conversation.brief(text)
            self.parts.events.emit("briefing", text=text, lines=len(text.splitlines()))

    def make_plan(self) -> None:  # a plan-only run's
        self.planning.start(self.hooks.strategy.plan(), now=True)
        self.planning.take()

    # ---- one step ---------------------------------------------------------------------------------
    def step(self, chosen: Action | None = None) -> None:
        """One action: the model's choice, or omni's own (`chosen`)."""
        s, events = self.state, self.parts.events
        self.planning.take(wait=chosen is None)  # the model's steps read the plan; omni's own actions do not wait
        prompt, s.correction, s.failed = "" if chosen else self.prompting.next(), None, None
        s.steps += 1
        events.emit("step", n=s.steps, max=self.config.max_steps, plan_step=s.plan.current() if s.plan else None)
        reply = chosen_by_omni(chosen, self.parts.model.tool_mode) if chosen else ask(
            self.parts.model, self.conversation, prompt, self.parts.toolbox, self.guard.request_options(), events)
        self.meter.count(reply.usage, "step", text=reply.text)
        self.guard.replied(reply.finish_reason)
        action = None if reply.format_error else reply.actions[0]
        result, interrupted = self.act(action, reply)
        self.observe(action, result, reply, interrupted, prompt)
        if interrupted:
            raise KeyboardInterrupt
        if not result.success:
            self.correct(action, result)
        elif summary := self.hooks.strategy.done(action, result):  # the work is done: the gate is asked now
            self.correct(Action(name="finish", args={"summary": summary}), self.host.finish(summary))
        if shortened := self.conversation.fit(self.config.history_chars):
            events.emit("history_shortened", turns=shortened)

    def act(self, action: Action | None, reply) -> tuple[ToolResult, bool]:
        """Run the chosen action: (its result, whether the user interrupted it)."""
        if action is None:
            return unreadable(reply), False
        self.parts.events.emit("action", n=self.state.steps, tool=action.name, args=action.args, text=reply.text)
        began = time.monotonic()
        try:
            (ran, result), interrupted = self.execute(action), False
        except KeyboardInterrupt:  # record what happened, then let the user steer
            ran, interrupted = None, True
            result = ToolResult.fail("command_failed", "interrupted by the user before it finished",
                                     duration_s=round(time.monotonic() - began, 3))
        if action.name not in self.parts.toolbox.host or action.name in self.parts.toolbox.editing:
            for hook in (self.hooks.strategy.after_action, *self.hooks.after_action):
                result = hook(action, result)
            result = self.guard.after(action, ran, result, self.state.steps) if ran else result
        return result, interrupted

    def execute(self, action: Action) -> tuple[Action | None, ToolResult]:
        """(the call that ran, or None if none did; its result)."""
        checked = self.guard.before(action, self.state.steps, self.state.plan_step())
        if isinstance(checked, ToolResult):
            return None, checked
        args = self.parts.toolbox.validate(checked)
        if isinstance(args, ToolResult):
            return None, args
        if checked.name in self.parts.toolbox.host:
            return checked, self.host.run(checked.name, args)
        return checked, run_in_sandbox(self.parts.sandbox, self.parts.toolbox, checked.name, args, self.config,
                                       self.state.started)

    def observe(self, action: Action | None, result: ToolResult, reply, interrupted: bool, prompt: str) -> None:
        """The result joins the history with the prompt that asked for it (a refused repeat does not: a small
        model would copy it)."""
        observation = observation_text(self.parts.prompts, action, result, reply.actions, interrupted)
        self.conversation.record(reply.text, action, observation, result, prompt)
        self.parts.events.emit("observation", n=self.state.steps, tool=action.name if action else None,
                               **result.model_dump(exclude={"details"}), details=result.details)
        self.failures.record(action, result)
        self.guard.observe(action, result)
        self.progress.observe(action, result)

    def correct(self, action: Action | None, result: ToolResult) -> None:
        """Build the next step's prompt from the goal, the plan, the action and the exact error; replan first
        after repeated failures on one plan step. Before any plan was asked for, the prompt is written at the
        model's next step (StepPrompts.next): the next action may be omni's own, which reads neither."""
        kind, s = failure_class(result), self.state
        if self.failures.too_many_format_errors():
            raise StopRun("format_errors", f"{self.failures.format_errors_in_row} unreadable replies in a row; "
                          f"last: {result.error[:300]}")
        if self.planning.deferred:  # a cold plan request there held omni's next round back 87 s on a CPU server
            s.failed = (action, result)
        else:
            self.planning.take()  # the correction prompt shows it
            self.planning.replan_if_due(self.failures)
            s.correction = self.prompting.correction(action, result)
        detail = (result.error.strip().splitlines() or [""])[0][:160]
        self.parts.events.emit("correction", n=s.steps, failure=kind, detail=detail, prompt=s.correction or "")


def check_limits(config: AgentConfig, state: RunState, meter: UsageMeter) -> None:
    if state.steps >= config.max_steps:
        raise StopRun("limit_steps", f"reached the step limit ({config.max_steps})")
    if config.max_cost is not None and (meter.total.cost or 0.0) >= config.max_cost:
        raise StopRun("limit_cost", f"reached the cost limit (${config.max_cost:.2f})")
    if config.timeout is not None and time.monotonic() - state.started >= config.timeout:
        raise StopRun("limit_time", f"reached the time limit ({config.timeout:.0f}s)")


def run_in_sandbox(sandbox: Sandbox, toolbox: Toolbox, name: str, args: dict, config: AgentConfig,
                   started: float) -> ToolResult:
    """One sandbox call; no command outlives the run's wall-clock limit, and no exception from a tool
    escapes into the loop."""
    timeout = float(args.get("timeout", config.tool_timeout))
    if config.timeout is not None:
        timeout = max(1.0, min(timeout, config.timeout - (time.monotonic() - started)))
    if "timeout" in toolbox.models[name].model_fields:
        args["timeout"] = max(1, int(timeout + 0.999))
    try:
        return sandbox.run_tool(name, args, timeout)
    except (KeyboardInterrupt, StopRun, SandboxError):  # a SandboxError is the sandbox gone: the run ends
        raise
    except Exception as exc:
        return ToolResult.fail("sandbox_error", f"{type(exc).__name__}: {exc}")
