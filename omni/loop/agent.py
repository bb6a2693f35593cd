"""The adaptive loop: plan, then one tool call per step; every failure becomes a correction prompt.

Control flow is by exceptions that carry a status (StopRun): finish, limits, repeated format errors,
interrupts. The outcome is reported in one place, whatever ended the run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from omni.loop.conversation import Conversation
from omni.errors import ContextLengthExceeded, ForceQuit, ModelError, SandboxError, StopRun
from omni.check.examples import GoalExamples
from omni.loop.failures import FailureTracker, describe, exact_error, failure_class
from omni.loop.plan import Plan, PlanStep
from omni.prompts import Prompts
from omni.protocols import AnswerSource, Events, Model, Sandbox
from omni.results import Action, ToolResult, Usage
from omni.box.toolbox import Toolbox


class AgentConfig(BaseModel):
    """Limits and knobs of the loop."""

    max_steps: int = Field(40, ge=1, description="tool calls before the run stops (status limit_steps)")
    max_cost: float | None = Field(None, gt=0, description="USD before the run stops (limit_cost)")
    timeout: float | None = Field(None, gt=0, description="wall-clock seconds before the run stops (limit_time)")
    tool_timeout: float = Field(300, gt=0, description="default seconds for one tool call")
    history_chars: int = Field(40_000, ge=2000, description="older observations are shortened past this")
    replan_after: int = Field(3, ge=1, description="failures on one plan step before replanning")
    max_format_errors: int = Field(3, ge=1, description="unreadable replies in a row before stopping")
    unstick_temperature: float = Field(0.8, ge=0, le=2, description="temperature of the requests after a refused repeat, an edit that changed nothing, or a reply cut off at the token cap")


@dataclass
class Outcome:
    status: str
    message: str
    steps: int
    usage: Usage
    plan: Plan | None
    assumptions: list[str] = field(default_factory=list)
    tests: str = ""


_READ_ON = re.compile(r"read on with start_line=(\d+)\]$")

# A gate decides what `finish` means: None accepts; a string is feedback that sends the work back.
Gate = Callable[["Agent", str], "str | None"]
# Steering runs on Ctrl-C: returns guidance for the next step, or raises StopRun.
Steering = Callable[["Agent"], "str | None"]
# Called after each sandbox action (the session commits a checkpoint there, for /undo).
AfterAction = Callable[[Action, ToolResult], None]


def _no_steering(agent: Agent) -> str | None:
    raise StopRun("interrupted", "interrupted by the user")


class Agent:
    def __init__(self, goal: str, model: Model, planner: Model, sandbox: Sandbox, toolbox: Toolbox,
                 prompts: Prompts, events: Events, answers: AnswerSource, config: AgentConfig,
                 system: str, files: list[str], gate: Gate | None = None, steering: Steering = _no_steering,
                 after_action: AfterAction | None = None, context: str = "",
                 ready: Callable[[], None] | None = None, briefing: Callable[[], str] | None = None,
                 code: str = "", examples: GoalExamples | None = None):
        self.goal, self.model, self.planner, self.sandbox = goal, model, planner, sandbox
        self.toolbox, self.prompts, self.events, self.answers = toolbox, prompts, events, answers
        self.config, self.files, self.gate, self.steering = config, files, gate, steering
        self.after_action = after_action
        self.ready = ready  # waited for after planning, before the first action (the gate's baseline)
        self.briefing = briefing  # looked up once before the first step: the tests failing at the start
        self.code = code  # the code the goal names, looked up before planning: for the plan and every step
        self.context = context  # project instructions and earlier goals, for the planner too
        self.examples = examples  # the goal's examples: every edit's result says what it did to them
        self.tests = ""
        self.last_tool = self.previous_tool = ""
        self.changes = 0  # bumped by every action that may change the workspace
        # read-only or check call -> (step, changes at the time, the line a paged read_file goes on from or 0)
        self.looked: dict[str, tuple[int, int, int]] = {}
        self.progress = "start"  # start -> looked -> edited -> tested: drives the next-step hint
        self.withheld: str | None = None  # a tool not offered for one step, after a refused repeat of a call to it
        self.copied = False  # an edit re-sent the code as it already reads, and no edit has landed since
        self.cut_off = False  # the last reply hit the token cap before its call was complete
        self.conversation = Conversation(prompts, system, goal, native=model.tool_mode == "native", files=files)
        self.failures = FailureTracker(config.replan_after, config.max_format_errors)
        self.usage = Usage()
        self.plan: Plan | None = None
        self.steps = 0
        self.guidance = ""
        self.assumptions: list[str] = []
        self.correction: str | None = None
        self.started = time.monotonic()

    # ---- the run ----------------------------------------------------------------------------------
    def run(self) -> Outcome:
        status, message = "failed", ""
        try:
            self.interruptible(self.make_plan)
            if self.ready:
                self.ready()
            self.brief("\n\n".join(part for part in (self.briefing() if self.briefing else "", self.code) if part))
            if self.code:  # the model has the code in view already
                self.progress = "looked"
            while True:
                self.check_limits()
                self.interruptible(self.step)
        except StopRun as stop:
            status, message = stop.status, stop.message
        except ModelError as exc:
            status, message = "model_error", str(exc)
        except SandboxError as exc:
            status, message = "sandbox_error", str(exc)
        except ForceQuit:
            status, message = "interrupted", "stopped: Ctrl-C twice, or SIGTERM"
        except Exception as exc:  # a bug in omni: the record says what it was, then the CLI reports it
            status, message = "failed", f"internal error: {type(exc).__name__}: {exc}"
            raise
        finally:
            self.events.emit("status", status=status, message=message, steps=self.steps,
                             usage=self.usage.model_dump())
        return Outcome(status, message, self.steps, self.usage, self.plan, self.assumptions, self.tests)

    def interruptible(self, work: Callable[[], None]) -> None:
        try:
            work()
        except KeyboardInterrupt:
            self.events.emit("interrupt", step=self.steps)
            guidance = self.steering(self)
            if guidance:
                self.guidance = guidance
                self.events.emit("guidance", text=guidance)

    def check_limits(self) -> None:
        cfg = self.config
        if self.steps >= cfg.max_steps:
            raise StopRun("limit_steps", f"reached the step limit ({cfg.max_steps})")
        if cfg.max_cost is not None and self.usage.cost >= cfg.max_cost:
            raise StopRun("limit_cost", f"reached the cost limit (${cfg.max_cost:.2f})")
        if cfg.timeout is not None and time.monotonic() - self.started >= cfg.timeout:
            raise StopRun("limit_time", f"reached the time limit ({cfg.timeout:.0f}s)")

    def brief(self, text: str) -> None:
        if text:
            self.conversation.brief(text)
            self.events.emit("briefing", text=text, lines=len(text.splitlines()))

    # ---- planning ---------------------------------------------------------------------------------
    def make_plan(self, replan: bool = False) -> None:
        if replan:
            prompt = self.prompts.render("replan", goal=self.goal, plan=self.plan.render(),
                                         failures="\n".join(self.failures.recent), context=self.context)
        else:
            prompt = self.prompts.render("plan", goal=self.goal, files=self.files, context=self.context, code=self.code)
        reply = self.planner.text([{"role": "user", "content": prompt}])
        self.count(reply.usage, "plan")
        plan = Plan.parse(reply.text)
        if not plan.steps:
            self.events.emit("warning", message="the planner's reply held no numbered steps; "
                             "working from the goal as a single step", reply=reply.text[:500])
            plan = Plan(steps=[PlanStep(text=self.goal, status="in_progress")])
        if self.plan is not None:
            plan.version = self.plan.version + 1
        self.set_plan(plan, "replan" if replan else "initial")

    def set_plan(self, plan: Plan, reason: str) -> None:
        self.plan = plan
        self.failures.plan_moved()
        self.events.emit("plan", reason=reason, version=plan.version, steps=[s.model_dump() for s in plan.steps])

    # ---- one step ---------------------------------------------------------------------------------
    def step(self) -> None:
        prompt = self.correction or self.step_prompt()  # budget counts this step as still available
        self.correction = None
        self.steps += 1
        self.events.emit("step", n=self.steps, max=self.config.max_steps, plan_step=self.plan.current())
        reply = self.ask(prompt)
        self.cut_off = reply.finish_reason == "length"
        action = None if reply.format_error else reply.actions[0]
        interrupted = False
        if action is None:
            # What the model sent stays in the run record (not in the prompt): why a reply did not parse.
            result = ToolResult.fail("format_error", reply.format_error,
                                     details={"reply": (reply.text + reply.cut_call)[-4000:]})
        else:
            self.events.emit("action", n=self.steps, tool=action.name, args=action.args, text=reply.text)
            try:
                result = self.execute(action)
            except KeyboardInterrupt:  # record what happened, then let the user steer
                interrupted = True
                result = ToolResult.fail("command_failed", "interrupted by the user before it finished")
            if action.name == "run_tests" and result.output.startswith("pytest:"):
                self.tests = result.output.splitlines()[0]
            if self.after_action and action.name not in self.toolbox.host:
                self.after_action(action, result)
        if result.success or interrupted:
            body = (result.output if result.success else exact_error(result)) or "(no output)"
        else:  # the correction prompt that follows quotes the whole error: once is enough tokens
            body = (result.error.strip().splitlines() or ["(no message)"])[0][:200] + \
                "\n(the exact error follows below)"
        # The tool's name only: the call is in the history already, and a shortened copy of its arguments
        # ("bytearr…") is what a small model copied back into its next call.
        observation = self.prompts.render(
            "observation", action=action.name if action else "your reply", success=result.success, body=body)
        if len(reply.actions) > 1:
            observation += "\n\n" + self.prompts.render(
                "extra_calls", count=len(reply.actions), first=action.name,
                skipped=", ".join(a.compact(60) for a in reply.actions[1:]))
        if result.failure == "repeated" and action is not None:
            # A refused repeat is not added to the history, where a small model would copy it, and after
            # repeated failures neither are the call's failed attempts. The correction names it and why.
            if result.details.get("failed_before"):
                self.conversation.forget(action.signature())
        else:
            self.conversation.add(reply.text, action, observation, result.success)
        self.events.emit("observation", n=self.steps, tool=action.name if action else None,
                         **result.model_dump(exclude={"details"}), details=result.details)
        self.failures.record(action, result)
        self.track(action, result)
        self.withheld = None
        if interrupted:
            raise KeyboardInterrupt
        if not result.success:
            self.on_failure(action, result)
        shortened = self.conversation.fit(self.config.history_chars)
        if shortened:
            self.events.emit("history_shortened", turns=shortened)

    def track(self, action: Action | None, result: ToolResult) -> None:
        if action is None:
            return
        if action.name in self.toolbox.editing:
            self.copied = bool(result.details.get("unchanged")) or (self.copied and not result.success)
        if action.name == "run_tests" and self.progress in ("edited", "tested", "passed") \
                and result.failure != "timeout":  # passed or not, the model has seen what the change did
            self.progress = "passed" if result.success else "tested"
        elif not result.success:
            return
        elif action.name in self.toolbox.editing:
            self.progress = "edited"
        elif action.name in self.toolbox.read_only and self.progress == "start":
            self.progress = "looked"

    def hint(self) -> str:
        """What usually comes next, from what has happened so far: small models stall between steps."""
        return self.prompts.render("hint", progress=self.progress)

    def ask(self, prompt: str):
        messages = self.conversation.messages(prompt)
        # After a refused repeat, sample warmer: at temperature 0 a small model answers the same
        # context with the same call, however the correction is worded. So too after an edit that
        # re-sent the code it was shown, until an edit lands: read again, it writes the same code again.
        # And after a reply cut off at the token cap: at temperature 0 that is mostly a loop of copied lines.
        stuck = self.failures.last_refused or self.copied or self.cut_off
        warmer = self.config.unstick_temperature if stuck else None
        # A small model can answer the same context with the same call however warm it samples: the tool
        # it keeps repeating is not offered for the next step at all.
        tools = [schema for schema in self.toolbox.schemas() if schema["function"]["name"] != self.withheld]
        while True:
            try:
                reply = self.model.complete(messages, tools, temperature=warmer)
                break
            except ContextLengthExceeded as exc:
                if not self.conversation.condense():
                    raise ModelError(f"the request does not fit the model's context window: {exc}") from exc
                condensed = self.conversation.messages(prompt)
                if condensed == messages:  # never send the same request twice
                    raise ModelError("the context window is too small even after condensing") from exc
                self.events.emit("condensed", turns=len(self.conversation.turns))
                messages = condensed
        self.count(reply.usage, "step", text=reply.text)
        return reply

    def count(self, usage: Usage, purpose: str, text: str = "") -> None:
        self.usage.add(usage)
        self.events.emit("usage", purpose=purpose, call=usage.model_dump(), total=self.usage.model_dump())
        if text:
            self.events.emit("model_text", text=text)

    def step_prompt(self) -> str:
        note = getattr(self.sandbox, "install_note", "") if self.steps == 0 else ""
        guidance, self.guidance = self.guidance, ""
        return self.prompts.render("step", goal=self.goal, plan=self.plan.render(), note=note, hint=self.hint(),
                                   guidance=guidance, all_done=self.plan.current() is None, **self.budget())

    def budget(self) -> dict[str, Any]:
        cost_left = self.config.max_cost - self.usage.cost if self.config.max_cost else None
        return {"steps_left": self.config.max_steps - self.steps, "cost_left": cost_left}

    # ---- acting -----------------------------------------------------------------------------------
    def execute(self, action: Action) -> ToolResult:
        if action.name == self.withheld:  # (text mode lists every tool in the system prompt)
            return ToolResult.fail("tool_error", f"not run: {action.name} is not offered for this step, after the "
                                   "same call was repeated. Use another tool now.")
        refused = self.failures.refusal(action)
        if refused:
            return refused
        self.previous_tool, self.last_tool = self.last_tool, action.name
        args = self.toolbox.validate(action)
        if isinstance(args, ToolResult):
            return args
        if action.name in self.toolbox.host:
            return getattr(self, f"tool_{action.name}")(**args)
        asked = action.signature()
        seen = self.looked.get(asked)
        read_on = ""
        if seen and seen[1] == self.changes:  # small models re-read; on a slow model that costs minutes
            if not seen[2]:
                return ToolResult.fail("repeated", f"not run: {action.compact(100)} already ran at step {seen[0]} "
                                       "and nothing has changed since; its output is above. Act on it instead.")
            # the same paged read again: a model that asks twice wants what it has not seen yet
            action = Action(name=action.name, args={**action.args, "start_line": seen[2]}, call_id=action.call_id)
            args["start_line"] = seen[2]
            read_on = f"(that read ran at step {seen[0]}; its output is above. Reading on from line {seen[2]}.)\n"
        unchanging = self.toolbox.read_only | self.toolbox.checks
        if action.name in unchanging:
            self.looked[action.signature()] = (self.steps, self.changes, 0)
        timeout = float(args.get("timeout", self.config.tool_timeout))
        if self.config.timeout is not None:  # no command outlives the run's wall-clock limit
            timeout = max(1.0, min(timeout, self.config.timeout - (time.monotonic() - self.started)))
        if "timeout" in self.toolbox.models[action.name].model_fields:
            args["timeout"] = max(1, int(timeout + 0.999))
        try:
            result = self.sandbox.run_tool(action.name, args, timeout)
        except (KeyboardInterrupt, StopRun):
            raise
        except Exception as exc:  # no exception from a tool escapes into the loop
            result = ToolResult.fail("sandbox_error", f"{type(exc).__name__}: {exc}")
        if action.name not in unchanging and (result.success or action.name not in self.toolbox.editing):
            self.changes += 1  # a refused edit wrote nothing; anything else may have changed the workspace
        if action.name == "read_file" and result.success:
            paged = _READ_ON.search(result.output)
            self.looked[asked] = self.looked[action.signature()] = (
                self.steps, self.changes, int(paged.group(1)) if paged else 0)
        if read_on:
            result = result.model_copy(update={"output": read_on + result.output})
        if self.examples and action.name in self.toolbox.editing and (result.success or result.details.get("unchanged")):
            # what the edit did to them; after an edit that changed nothing, that the code is still wrong
            now = self.examples.now(self.sandbox, unchanged=not result.success)
            field = "output" if result.success else "error"
            result = result.model_copy(update={field: f"{getattr(result, field)}\n\n{now}" if now
                                               else getattr(result, field)})
        return result

    def on_failure(self, action: Action | None, result: ToolResult) -> None:
        kind = failure_class(result)
        if self.failures.too_many_format_errors():
            raise StopRun("format_errors", f"{self.failures.format_errors_in_row} unreadable replies in a row; "
                          f"last: {result.error[:300]}")
        if self.failures.wants_replan():
            self.events.emit("replan", reason=f"{self.failures.on_step} failures on plan step "
                             f"{(self.plan.current() or 0) + 1}")
            self.make_plan(replan=True)
        guidance, self.guidance = self.guidance, ""
        if kind == "repeated" and action is not None and action.name != "finish":
            self.withheld = action.name
        self.correction = self.prompts.render(
            "correction", goal=self.goal, plan=self.plan.render(), action=describe(action), failure=kind,
            error=exact_error(result), guidance=guidance, tool_mode=self.model.tool_mode, hint=self.hint(),
            withheld=self.withheld, **self.budget())
        detail = (result.error.strip().splitlines() or [""])[0][:160]
        self.events.emit("correction", n=self.steps, failure=kind, detail=detail, prompt=self.correction)

    # ---- host tools -------------------------------------------------------------------------------
    def tool_update_plan(self, steps: list[dict]) -> ToolResult:
        if self.previous_tool == "update_plan":  # small models loop on plan edits instead of acting
            current = self.plan.current()
            target = self.plan.steps[current].text if current is not None else "check the work and finish"
            return ToolResult.fail("tool_error", "not run: you just updated the plan. Act on it now with a tool "
                                   f"such as read_file, search or replace_in_file, for the step: {target}")
        self.set_plan(self.plan.replaced(steps), "model")
        return ToolResult.ok("plan updated:\n" + self.plan.render())

    def tool_ask_user(self, question: str) -> ToolResult:
        self.events.emit("question", text=question)
        answer = self.answers.ask(question)
        no_user = self.prompts.render("no_user")
        if answer == no_user:
            self.assumptions.append(question)
        self.events.emit("answer", text=answer, from_user=answer != no_user)
        return ToolResult.ok(answer)

    def tool_finish(self, summary: str) -> ToolResult:
        feedback = self.gate(self, summary) if self.gate else None
        if feedback is None:
            raise StopRun("finished", summary)
        return ToolResult.fail("refine", feedback)
