"""A run whose change is delegated (`/aider` in the session, a spec's aider step), as the loop's strategy
(omni/protocols.py: Strategy). Its plan is known without the planner; its first action is omni's: the aider_edit
call; once that lands, the finish gate is asked at once, as for any run (tests and lint against the start, the
review). What comes after is the model's: a refinement the gate asks for. A delegated edit that fails ends the run
with what went wrong: there is nothing of the user's to go on with."""

from __future__ import annotations

from omni.errors import StopRun
from omni.results import Action, ToolResult


class DelegatedRun:
    def __init__(self, instruction: str, files: list[str] | None = None):
        self.instruction, self.files = instruction, files
        self.pending = True
        self.failed = ""  # why the delegated edit failed: the run ends at the next step

    def plan(self) -> list[str] | None:
        return [f"Aider makes the change: {self.instruction}", "Check the change (tests, lint, review) and finish"]

    def acts_first(self) -> bool:
        return True

    def own_action(self) -> Action | None:
        if self.failed:
            raise StopRun("failed", f"the delegated edit failed: {self.failed}")
        if not self.pending:
            return None
        self.pending = False
        return Action(name="aider_edit", args={"instruction": self.instruction,
                                               **({"files": self.files} if self.files else {})},
                      call_id="omni_delegated")

    def after_action(self, action: Action, result: ToolResult) -> ToolResult:
        if action.call_id == "omni_delegated" and not result.success:
            self.failed = result.error.strip()[:1500]
        return result

    def propose(self, path: str, symbol: str, note: str = "") -> ToolResult:
        return ToolResult.fail("tool_error", "propose_fixes is off in a delegated run; edit the code.")

    def done(self, action: Action | None, result: ToolResult) -> str | None:
        if action is None or action.call_id != "omni_delegated" or not result.success:
            return None
        changed = ", ".join(f"{c['path']} +{c['added']} -{c['removed']}" for c in result.details.get("changed", []))
        return f"Aider made the change ({changed}). What it said: {result.details.get('summary', '')[-600:]}"

    def check_changed(self) -> None:
        return None  # nothing here was learnt against the check
