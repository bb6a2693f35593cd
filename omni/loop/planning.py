"""The plan: written by the planner model before the first step, and again after repeated failures.

When the planner is the steps' model, both requests extend the steps' cached prefix (the system prompt, the
tools, the goal message with the code the goal names), and their prompts leave out what that prefix says.
On 2 CPU cores a request with another prefix is read from its first token: the plan's own prompt was read
once for the plan and once more, in another form, for the first step.

The first plan is asked for before anything else, and its request runs beside the work that does not read it
(the baseline, settling the run's check): a PendingPlan. It is taken (waited for, counted, shown) when something
first needs it: the model's first step, a correction prompt, the finish gate's review. On the local server a cold
plan request took 10-65 s, and the first action waited for all of it. When omni's own action comes first (verified
repair's opening round), the request is sent only when something first reads the plan: beside that round it shared
the server's two cores with the round's own requests (prompts are read at 30-40 tokens a second there, and a plan's
900-1,400 new prompt tokens cost the round 25-40 s), and when the round does the work nothing reads it. A plan
asked for and not read by the end is not waited for on a server of the user's own (a run had waited 37 s for one
after a verified fix: bench/README.md, run AL).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from omni.errors import ModelError
from omni.loop.conversation import Conversation
from omni.loop.failures import FailureTracker
from omni.loop.plan import Plan, PlanReply, PlanStep
from omni.loop.state import RunState
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.protocols import Events, Model, ModelReply


class PendingPlan:
    """A plan request running in a thread of its own. The thread only asks; what the reply says is read, counted
    and shown on the loop's thread, when it is taken."""

    def __init__(self, ask):
        self._arrived = threading.Event()
        self._reply: ModelReply | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(ask,), daemon=True, name="omni-plan").start()

    def _run(self, ask) -> None:
        try:
            self._reply = ask()
        except BaseException as exc:  # noqa: BLE001 - raised again on the loop's thread, where it is reported
            self._error = exc
        finally:
            self._arrived.set()

    def arrived(self) -> bool:
        return self._arrived.is_set()

    def reply(self) -> ModelReply:
        """The planner's reply, waiting for it (Ctrl-C still interrupts the wait); its error, if it failed."""
        self._arrived.wait()
        if self._error is not None:
            raise self._error
        return self._reply


class Planning:
    """The run's plan: asked for, kept in the run's state, and shown (a "plan" event) whenever it changes."""

    def __init__(self, planner: Model, prompts: Prompts, events: Events, meter: UsageMeter, task, state: RunState,
                 moved: Callable[[], None], conversation: Conversation | None = None, tools: list[dict] | None = None):
        self.planner, self.prompts, self.events, self.meter, self.task = planner, prompts, events, meter, task
        self.state, self.moved = state, moved  # moved: told of every new plan (the failures on a plan step reset)
        self.conversation, self.tools = conversation, tools  # the steps' own, when the planner is their model
        self.known: Plan | None = None  # a first plan known without the planner, until taken
        self.pending: PendingPlan | None = None  # the first plan's request, until taken
        self.deferred = False  # the first plan's request is to be sent when something first reads the plan

    def start(self, known: list[str] | None = None, now: bool = True) -> None:
        """The first plan: `known` as it is (a delegated run's, omni/delegate/strategy.py), or the planner's request:
        sent now, running beside what comes next, or (now False: omni's own action comes first, and the two would
        share the model server's CPU) when something first reads the plan."""
        if known:
            self.known = Plan.from_texts(known, 1)
        elif now:
            self._ask()
        else:
            self.deferred = True

    def _ask(self) -> None:
        """Send the first plan's request, on the conversation as it is now (its messages are taken now)."""
        t = self.task
        messages = self._messages(self.prompts.render("plan", goal=t.goal, files=t.files, context=t.context,
                                                      code=t.code, in_view=self.conversation is not None))
        self.events.emit("phase", name="planning")
        self.pending, self.deferred = PendingPlan(lambda: self.planner.text(messages, schema=PlanReply,
                                                                            tools=self.tools)), False

    def take(self, wait: bool = True) -> None:
        """The first plan becomes the run's, when something reads it: waiting for its request (a Ctrl-C in the wait
        leaves it pending; a deferred one is sent first), or, with wait False, only if it is there. A plan the user
        set meanwhile stays."""
        plan, self.known = self.known, None
        if plan is None and self.deferred and wait and self.state.plan is None:
            self._ask()
        if plan is None and self.pending is not None and (wait or self.pending.arrived()):
            plan = self._read(self.pending.reply())
            self.pending = None
        if plan is not None and self.state.plan is None:
            self.set(plan, "initial")

    def read(self) -> str:
        """The plan for a reader that can do without one (the finish gate's review): the first plan, waited for if it
        was asked for; one not asked for yet (omni's own round did the work before any step) is not asked now: ""."""
        if not self.deferred:
            self.take()
        return self.state.plan.render() if self.state.plan else ""

    def leave(self) -> None:
        """At the run's end, the first plan if nothing took it (the run ended before the model's first step, and the
        gate did not review the work): shown when it has arrived. It is waited for unless the planner is a server of
        the user's own: elsewhere the request costs either way, and its tokens are counted; there, the run's result
        would wait on a plan for work that is done. A deferred request is not sent: nothing read the plan. A request
        that failed by then is moot."""
        self.deferred = False
        try:
            self.take(wait=self.planner.cost_kind != "local")
        except ModelError:
            self.pending = None

    def set(self, plan: Plan, reason: str) -> None:
        self.state.plan, self.deferred = plan, False  # a plan the user typed at a Ctrl-C needs no first request
        self.moved()
        self.events.emit("plan", reason=reason, version=plan.version, steps=[s.model_dump() for s in plan.steps])

    def user(self, steps: list[str]) -> None:
        """The plan the user typed at a Ctrl-C."""
        self.set(Plan.from_texts(steps, self.state.plan.version + 1 if self.state.plan else 1), "user")

    def replan_if_due(self, failures: FailureTracker) -> None:
        """A new plan after repeated failures on one plan step (the tracker says when)."""
        if failures.wants_replan():
            self.events.emit("replan", reason=f"{failures.on_step} failures on plan step "
                             f"{(self.state.plan.current() or 0) + 1}")
            self.replan(failures.recent)

    def replan(self, failures: list[str]) -> None:
        plan = self.state.plan
        prompt = self.prompts.render("replan", goal=self.task.goal, plan=plan.render(), failures="\n".join(failures),
                                     context=self.task.context, in_view=self.conversation is not None)
        new = self._read(self.planner.text(self._messages(prompt), schema=PlanReply, tools=self.tools))
        new.version = plan.version + 1
        self.set(new, "replan")

    def _messages(self, prompt: str) -> list[dict]:
        return self.conversation.messages(prompt) if self.conversation else [{"role": "user", "content": prompt}]

    def _read(self, reply: ModelReply) -> Plan:
        self.meter.count(reply.usage, "plan")
        plan = Plan.parse(reply.text)
        if not plan.steps:
            self.events.emit("warning", message="the planner's reply held no numbered steps; "
                             "working from the goal as a single step", reply=reply.text[:500])
            plan = Plan(steps=[PlanStep(text=self.task.goal, status="in_progress")])
        return plan
