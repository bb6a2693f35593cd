"""The plan: written by the planner model before the first step, and again after repeated failures."""

from __future__ import annotations

from omni.loop.plan import Plan, PlanReply, PlanStep
from omni.loop.state import UsageMeter
from omni.prompts import Prompts
from omni.protocols import Events, Model


class Planning:
    def __init__(self, planner: Model, prompts: Prompts, events: Events, meter: UsageMeter, task):
        self.planner, self.prompts, self.events, self.meter, self.task = planner, prompts, events, meter, task

    def first(self) -> Plan:
        t = self.task
        return self._ask(self.prompts.render("plan", goal=t.goal, files=t.files, context=t.context, code=t.code))

    def again(self, plan: Plan, failures: list[str]) -> Plan:
        prompt = self.prompts.render("replan", goal=self.task.goal, plan=plan.render(), failures="\n".join(failures),
                                     context=self.task.context)
        new = self._ask(prompt)
        new.version = plan.version + 1
        return new

    def _ask(self, prompt: str) -> Plan:
        reply = self.planner.text([{"role": "user", "content": prompt}], schema=PlanReply)
        self.meter.count(reply.usage, "plan")
        plan = Plan.parse(reply.text)
        if not plan.steps:
            self.events.emit("warning", message="the planner's reply held no numbered steps; "
                             "working from the goal as a single step", reply=reply.text[:500])
            plan = Plan(steps=[PlanStep(text=self.task.goal, status="in_progress")])
        return plan
