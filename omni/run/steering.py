"""Ctrl-C while a run is live: once pauses at a safe point and takes the user's input; twice within
two seconds quits (exit 130) after the record is saved and the sandbox removed."""

from __future__ import annotations

import signal
import time
from typing import Callable

from omni.errors import ForceQuit, StopRun
from omni.results import ToolResult
from omni.run.lineinput import read_line

DOUBLE_PRESS = 2.0
HELP = ("Paused. Type guidance for the agent and press Enter, or a command:\n"
        "  /diff   show the changes so far      /undo  undo the last step's file changes\n"
        "  /plan   replace the plan             /quit  stop the run\n"
        "  /aider TEXT  Aider makes the change  /aider  Aider on this terminal (/exit returns)\n"
        "  (empty line: resume; Ctrl-C again: quit)")


class InterruptHandler:
    def __init__(self):
        self.last = 0.0
        self.previous = None

    def __enter__(self) -> InterruptHandler:
        self.previous = signal.signal(signal.SIGINT, self.handle)
        return self

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGINT, self.previous or signal.default_int_handler)

    def handle(self, signum, frame) -> None:
        now = time.monotonic()
        if now - self.last < DOUBLE_PRESS:
            raise ForceQuit()
        self.last = now
        raise KeyboardInterrupt


class TerminalSteering:
    """What one Ctrl-C opens: guidance, /diff, /undo, /plan, /aider, /quit."""

    def __init__(self, ui, diff: Callable[[], str], undo: Callable[[], str],
                 aider: Callable[[str], ToolResult] | None = None):
        self.ui, self.diff, self.undo, self.aider = ui, diff, undo, aider

    def __call__(self, plan: str, replace_plan: Callable[[list[str]], None]) -> str:
        """Guidance for the next step ('' for none); /plan replaces the plan at once."""
        self.ui.pause()
        self.ui.print(HELP, "yellow")
        notes: list[str] = []
        try:
            while True:
                try:
                    line = read_line(self.ui.console, "[bold yellow]omni paused>[/] ", "pause").strip()
                except (KeyboardInterrupt, EOFError):
                    raise StopRun("interrupted", "stopped by the user") from None
                if not line or not line.startswith("/"):
                    return "\n".join(notes + ([line] if line else []))
                if line == "/quit":
                    raise StopRun("interrupted", "stopped by the user")
                if line == "/diff":
                    self.ui.show(self.diff() or "(no changes yet)")
                elif line == "/undo":
                    message = self.undo()
                    self.ui.show(message)
                    notes.append(f"The user ran /undo: {message}")
                elif line == "/plan":
                    self.ui.print("New plan, one step per line; an empty line ends it:")
                    entered = []
                    while (entry := read_line(self.ui.console, "  step> ", "plan").strip()):
                        entered.append(entry)
                    if entered:
                        replace_plan(entered)
                        notes.append("The user replaced the plan; follow the new plan.")
                elif line == "/aider" or line.startswith("/aider "):
                    notes += self.delegate(line[len("/aider"):].strip())
                else:
                    self.ui.print(f"unknown command {line}", "red")
        finally:
            self.ui.resume()

    def delegate(self, text: str) -> list[str]:
        """/aider at the pause: the change as a step of its own; what the model is told of it."""
        if self.aider is None:
            self.ui.print("/aider needs a run started with --aider (Aider is then added to the sandbox image)", "red")
            return []
        result = self.aider(text)
        self.ui.show(result.output if result.success else result.error)
        said = "made this change" if result.success else "changed nothing that was kept"
        changed = ", ".join(c["path"] for c in result.details.get("changed", []))
        return [f"The user had Aider work on the code ({text or 'interactively'}); Aider {said}"
                + (f": {changed}." if changed and result.success else ".")]
