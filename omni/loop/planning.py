"""The plan: written by the planner model before the first step, and again after repeated failures.

When the planner is the steps' model, both requests extend the steps' cached prefix (the system prompt, the
tools, the goal message with the code the goal names), and their prompts leave out what that prefix says.
On 2 CPU cores a request with another prefix is read from its first token: the plan's own prompt was read
once for the plan and once more, in another form, for the first step.
"""

from __future__ import annotations

from omni.loop.conversation import Conversation
from omni.loop.plan import Plan, PlanReply, PlanStep
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.protocols import Events, Model


class Planning:
    def __init__(self, planner: Model, prompts: Prompts, events: Events, meter: UsageMeter, task,
                 conversation: Conversation | None = None, tools: list[dict] | None = None):
        self.planner, self.prompts, self.events, self.meter, self.task = planner, prompts, events, meter, task
        self.conversation, self.tools = conversation, tools  # the steps' own, when the planner is their model

    def first(self, known: list[str] | None = None) -> Plan:
        """The first plan: the planner's, or `known` as it is (a delegated run's, omni/delegate/strategy.py)."""
        if known:
            return Plan.from_texts(known, 1)
        t = self.task
        return self._ask(self.prompts.render("plan", goal=t.goal, files=t.files, context=t.context, code=t.code,
                                             in_view=self.conversation is not None))

    def again(self, plan: Plan, failures: list[str]) -> Plan:
        prompt = self.prompts.render("replan", goal=self.task.goal, plan=plan.render(), failures="\n".join(failures),
                                     context=self.task.context, in_view=self.conversation is not None)
        new = self._ask(prompt)
        new.version = plan.version + 1
        return new

    def _ask(self, prompt: str) -> Plan:
        messages = self.conversation.messages(prompt) if self.conversation else [{"role": "user", "content": prompt}]
        reply = self.planner.text(messages, schema=PlanReply, tools=self.tools)
        self.meter.count(reply.usage, "plan")
        plan = Plan.parse(reply.text)
        if not plan.steps:
            self.events.emit("warning", message="the planner's reply held no numbered steps; "
                             "working from the goal as a single step", reply=reply.text[:500])
            plan = Plan(steps=[PlanStep(text=self.task.goal, status="in_progress")])
        return plan
