"""The prompts of the loop's steps: the step prompt (the plan step, hint, the user's guidance, the budget)
and, after a failure, the correction prompt (the action, the exact error, what to do next).

Both stay in the history once answered (omni/loop/conversation.py), so the goal and the plan go out only when
the model has not read this version of them in the conversation yet: the first step, and after the plan
changed or the prompt that held it was shortened or condensed. Repeated in every prompt, they were a fifth
of the new tokens of each request, read again at ~57 tokens/s on 2 CPU cores. The goal itself is also the
start of every request (the goal message)."""

from __future__ import annotations

from omni.loop.conversation import Conversation
from omni.loop.failures import describe, exact_error, failure_class
from omni.loop.guard import RepeatGuard
from omni.loop.progress import Progress
from omni.loop.state import RunState
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.results import Action, ToolResult


class StepPrompts:
    def __init__(self, prompts: Prompts, state: RunState, config, meter: UsageMeter, progress: Progress,
                 guard: RepeatGuard, conversation: Conversation, tool_mode: str, install_note: str = ""):
        self.prompts, self.state, self.config, self.meter = prompts, state, config, meter
        self.conversation = conversation
        self.progress, self.guard, self.tool_mode, self.install_note = progress, guard, tool_mode, install_note

    def next(self) -> str:
        """The prompt of the model's next step: the correction of the last failure (written now, when it was put off
        until the plan was read: Agent.correct), else the step prompt."""
        s = self.state
        return self.correction(*s.failed) if s.failed else s.correction or self.step()

    def step(self) -> str:
        s = self.state
        note = self.install_note if s.steps == 0 else ""  # the project's dependencies did not install
        return self.prompts.render("step", note=note, hint=self.hint(), guidance=s.take_guidance(),
                                   **self.in_view(), **self.budget())

    def correction(self, action: Action | None, result: ToolResult) -> str:
        return self.prompts.render(
            "correction", action=describe(action), failure=failure_class(result), error=exact_error(result),
            guidance=self.state.take_guidance(), tool_mode=self.tool_mode, hint=self.hint(),
            withheld=self.guard.withheld_tool, **self.in_view(), **self.budget())

    def in_view(self) -> dict:
        """The goal and the plan when the history holds no prompt with this plan; the plan step (or that every
        step is done), always."""
        s, plan = self.state, self.state.plan.render()
        block = "" if self.conversation.shows(plan) else self.prompts.render("in_view", goal=s.goal, plan=plan)
        if block:
            self.conversation.pin(block)
        current = s.plan.current()
        return {"in_view": block, "all_done": current is None, "step_n": None if current is None else current + 1,
                "step_text": s.plan_step()}

    def hint(self) -> str:
        """What usually comes next, from what has happened so far: small models stall between steps."""
        return self.prompts.render("hint", progress=self.progress.stage)

    def budget(self) -> dict:
        cost_left = self.config.max_cost - (self.meter.total.cost or 0.0) if self.config.max_cost else None
        return {"steps_left": self.config.max_steps - self.state.steps, "cost_left": cost_left}
