"""The tools that run in omni itself, never in the sandbox: update_plan, ask_user, finish, propose_fixes (the
strategy's) and aider_edit (the delegate's, which runs Aider in the sandbox)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omni.errors import StopRun
from omni.loop.plan import Plan
from omni.loop.state import RunState
from omni.prompts import Prompts
from omni.protocols import AnswerSource, Delegate, Events, Gate, Strategy
from omni.results import ToolResult


class HostTools:
    def __init__(self, state: RunState, prompts: Prompts, events: Events, answers: AnswerSource, hooks,
                 set_plan: Callable[[Plan, str], None], read_plan: Callable[[], str]):
        """hooks: the Agent's Hooks; the gate, the strategy and the delegate are read from it. read_plan: the plan
        as the gate reads it, waited for only then."""
        self.state, self.prompts, self.events, self.answers = state, prompts, events, answers
        self.set_plan, self.read_plan = set_plan, read_plan
        self.gate: Gate | None = hooks.gate
        self.strategy: Strategy = hooks.strategy
        self.delegate: Delegate | None = hooks.delegate

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

    def aider_edit(self, instruction: str, files: list[str] | None = None) -> ToolResult:
        if self.delegate is None:
            return ToolResult.fail("tool_error", "aider_edit is off for this run (omni --aider turns it on); edit "
                                   "the code with the other tools.")
        return self.delegate.edit(instruction, files)

    def finish(self, summary: str) -> ToolResult:
        """The gate decides what finishing means: None accepts; feedback sends the work back."""
        feedback = self.gate(self.state.goal, self.read_plan, summary) if self.gate else None
        if feedback is None:
            raise StopRun("finished", summary)
        return ToolResult.fail("refine", feedback)
