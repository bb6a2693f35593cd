"""Where the work stands, for the hint that follows each step: small models stall between steps, and a
line saying what usually comes next keeps them moving. start -> looked -> edited -> tested | passed."""

from __future__ import annotations

from omni.box.toolbox import Toolbox
from omni.results import Action, ToolResult


class Progress:
    def __init__(self, toolbox: Toolbox, shown_code: bool = False):
        self.toolbox = toolbox
        self.stage = "looked" if shown_code else "start"  # the briefing shows the code the goal names

    def observe(self, action: Action | None, result: ToolResult) -> None:
        if action is None:
            return
        if action.name == "run_tests" and self.stage in ("edited", "tested", "passed") \
                and result.failure != "timeout":  # passed or not, the model has seen what the change did
            self.stage = "passed" if result.success else "tested"
        elif not result.success:
            return
        elif action.name in self.toolbox.editing:
            self.stage = "edited"
        elif action.name in self.toolbox.read_only and self.stage == "start":
            self.stage = "looked"
