"""Aider as omni's delegate: automatic mode (aider_edit, `/aider TEXT`, a spec's aider step) and Aider on the
terminal (`/aider`). Aider itself runs in the run's container (tools/aider.py); its model requests come back over
the tool channel to the relay the wiring set on the sandbox (omni/model/relay.py). Where the caller names no files,
the container picks them from the instruction and the hints given here: the files of recent steps, newest first,
then those the run's briefing or the session's history name."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from omni.protocols import Events, Sandbox
from omni.results import Action, ToolResult

RECENT = 12  # paths of recent steps kept as hints
PATH_ARGS = ("path", "paths", "selection", "files")
INTERACTIVE = "(an interactive Aider session on the terminal)"  # the instruction of a terminal session's step


@dataclass
class AiderOptions:
    model: str
    edit_format: str = "diff"
    map_tokens: int = 1024
    timeout: float = 300.0  # seconds one automatic edit may take, model requests included
    interactive: bool = False  # this run's aider_edit opens Aider on the terminal (`/aider` with no text)
    terminal: Callable[[], contextlib.AbstractContextManager] | None = None  # hands the terminal over; None: none


@dataclass
class AiderDelegate:
    sandbox: Sandbox
    events: Events
    options: AiderOptions
    hints: Callable[[], list[str]] = list  # the briefing's files and the session's, looked up at each edit
    recent: list[str] = field(default_factory=list)

    def saw(self, action: Action, result: ToolResult) -> ToolResult:
        """After each action (an after-action hook): the paths it named become hints, newest last."""
        for key in PATH_ARGS:
            value = action.args.get(key)
            for item in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
                if isinstance(item, str) and item:
                    path = item.split("::")[0]
                    self.recent = [p for p in self.recent if p != path][-(RECENT - 1):] + [path]
        return result

    def edit(self, instruction: str, files: list[str] | None = None) -> ToolResult:
        """The aider_edit tool: Aider on the terminal in a run that asked for it (`/aider`), else automatic mode."""
        return self.session(files) if self.options.interactive else self.automatic(instruction, files)

    def automatic(self, instruction: str, files: list[str] | None = None) -> ToolResult:
        """One instruction: Aider edits the files given, or those picked from the instruction and the hints."""
        o = self.options
        args = {"instruction": instruction, "hints": [*reversed(self.recent), *self.hints()], "model": o.model,
                "edit_format": o.edit_format, "map_tokens": o.map_tokens, "timeout": max(1, int(o.timeout))}
        if files:
            args["files"] = files
        result = self.sandbox.run_tool("aider_edit", args, o.timeout + 60)
        self.events.emit("delegate", tool="aider", mode="automatic", files=result.details.get("files", []),
                         picked_by=result.details.get("picked_by", ""))
        return result

    def session(self, files: list[str] | None = None) -> ToolResult:
        """Aider on the terminal until the user leaves it (/exit); what changed, as an edit's result."""
        o = self.options
        if o.terminal is None:
            return ToolResult.fail("tool_error", "an interactive Aider needs a terminal; give an instruction "
                                   "for automatic mode instead")
        port, ended = random.randint(20000, 60000), []
        relay = threading.Thread(target=lambda: ended.append(self.sandbox.run_tool(
            "aider_edit", {"port": port, "files": files or [], "timeout": 86400}, 86400)), daemon=True)
        self.events.emit("delegate", tool="aider", mode="interactive", files=files or [], picked_by="the user")
        relay.start()
        deadline = time.monotonic() + 10
        while not ended and not self.sandbox.busy() and time.monotonic() < deadline:  # the relay's call is out
            time.sleep(0.05)
        if ended:  # the relay could not start (no Aider in the image, the port taken): said, nothing attached
            return ended[0]
        try:
            with o.terminal():
                code = self.sandbox.attach_tool("aider.py", ["--interactive", str(port), o.model, o.edit_format,
                                                             str(o.map_tokens), *(files or [])])
        finally:
            self.sandbox.cancel_running()
            relay.join(120)
        if not ended:
            return ToolResult.fail("sandbox_error", "the relay of the Aider session did not stop")
        result = ended[0]
        note = f" (Aider exited with code {code})" if code not in (0, None) else ""
        return result.model_copy(update={"error": result.error + note} if not result.success else {})
