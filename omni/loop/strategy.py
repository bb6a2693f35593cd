"""The loop's plain strategy (omni/protocols.py: Strategy): every action is the model's, nothing is added after one,
propose_fixes is off, and only the model's finish ends the work."""

from __future__ import annotations

from omni.results import Action, ToolResult


class AskTheModel:
    def plan(self) -> list[str] | None:
        return None

    def acts_first(self) -> bool:
        return False

    def own_action(self) -> Action | None:
        return None

    def after_action(self, action: Action, result: ToolResult) -> ToolResult:
        return result

    def propose(self, path: str, symbol: str, note: str = "") -> ToolResult:
        return ToolResult.fail("tool_error", "propose_fixes is off for this run; edit the code.")

    def done(self, action: Action | None, result: ToolResult) -> str | None:
        return None

    def check_changed(self) -> None:
        return None  # nothing here was learnt against the check
