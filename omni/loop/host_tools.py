"""The tools that run in omni itself, never in the sandbox: update_plan, ask_user, finish, and propose_fixes (the
strategy's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omni.errors import StopRun
from omni.loop.plan import Plan
from omni.loop.state import RunState
from omni.prompts import Prompts
from omni.protocols import AnswerSource, Events, Gate, Strategy
from omni.results import ToolResult


class HostTools:
    def __init__(self, state: RunState, prompts: Prompts, events: Events, answers: AnswerSource,
                 gate: Gate | None, set_plan: Callable[[Plan, str], None], strategy: Strategy):
        self.state, self.prompts, self.events, self.answers = state, prompts, events, answers
        self.gate, self.set_plan, self.strategy = gate, set_plan, strategy

    def run(self, name: str, args: dict[str, Any]) -> ToolResult:
        return getattr(self, name)(**args)

    def update_plan(self, steps: list[dict]) -> ToolResult:
        self.set_plan(self.state.plan.replaced(steps), "model")
        return ToolResult.ok("plan updated:\n" + self.state.plan.render())

    def ask_user(self, question: str) -> ToolResult:
        self.events.emit("question", text=question)
        answer = self.answers.ask(question)
        no_user = self.prompts.render("no_user")
        if answer == no_user:
            self.state.assumptions.append(question)
        self.events.emit("answer", text=answer, from_user=answer != no_user)
        return ToolResult.ok(answer)

    def propose_fixes(self, path: str, symbol: str, note: str = "") -> ToolResult:
        return self.strategy.propose(path, symbol, note)

    def finish(self, summary: str) -> ToolResult:
        """The gate decides what finishing means: None accepts; feedback sends the work back."""
        feedback = self.gate(self.state.goal, self.state.plan.render(), summary) if self.gate else None
        if feedback is None:
            raise StopRun("finished", summary)
        return ToolResult.fail("refine", feedback)
