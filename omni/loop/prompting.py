"""The prompts of the loop's steps: the step prompt (goal, plan, hint, the user's guidance, the budget)
and, after a failure, the correction prompt (goal, plan, the action, the exact error, what to do next)."""

from __future__ import annotations

from omni.loop.failures import describe, exact_error, failure_class
from omni.loop.guard import RepeatGuard
from omni.loop.progress import Progress
from omni.loop.state import RunState, UsageMeter
from omni.prompts import Prompts
from omni.results import Action, ToolResult


class StepPrompts:
    def __init__(self, prompts: Prompts, state: RunState, config, meter: UsageMeter, progress: Progress,
                 guard: RepeatGuard, tool_mode: str, install_note: str = ""):
        self.prompts, self.state, self.config, self.meter = prompts, state, config, meter
        self.progress, self.guard, self.tool_mode, self.install_note = progress, guard, tool_mode, install_note

    def step(self) -> str:
        s = self.state
        note = self.install_note if s.steps == 0 else ""  # the project's dependencies did not install
        return self.prompts.render("step", goal=s.goal, plan=s.plan.render(), note=note, hint=self.hint(),
                                   guidance=s.take_guidance(), all_done=s.plan.current() is None, **self.budget())

    def correction(self, action: Action | None, result: ToolResult) -> str:
        s = self.state
        return self.prompts.render(
            "correction", goal=s.goal, plan=s.plan.render(), action=describe(action), failure=failure_class(result),
            error=exact_error(result), guidance=s.take_guidance(), tool_mode=self.tool_mode, hint=self.hint(),
            withheld=self.guard.withheld_tool, **self.budget())

    def hint(self) -> str:
        """What usually comes next, from what has happened so far: small models stall between steps."""
        return self.prompts.render("hint", progress=self.progress.stage)

    def budget(self) -> dict:
        cost_left = self.config.max_cost - self.meter.total.cost if self.config.max_cost else None
        return {"steps_left": self.config.max_steps - self.state.steps, "cost_left": cost_left}
