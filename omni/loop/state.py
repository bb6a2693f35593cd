"""What a run knows as it goes, and what it hands back at the end."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from omni.loop.plan import Plan
from omni.results import Usage


@dataclass
class RunState:
    goal: str
    plan: Plan | None = None
    steps: int = 0
    guidance: str = ""  # the user's words for the next step (Ctrl-C)
    correction: str | None = None  # the prompt for the next step after a failure
    failed: tuple | None = None  # (action, result) whose correction is written when the model is next asked
    assumptions: list[str] = field(default_factory=list)  # questions nobody was there to answer
    started: float = field(default_factory=time.monotonic)

    def plan_step(self) -> str:
        """The plan step in progress, as a line for a prompt."""
        current = self.plan.current() if self.plan else None
        return self.plan.steps[current].text if current is not None else "check the work and finish"

    def take_guidance(self) -> str:
        guidance, self.guidance = self.guidance, ""
        return guidance

    def add_guidance(self, text: str) -> None:
        self.guidance = (self.guidance + "\n" if self.guidance else "") + text


@dataclass
class Outcome:
    status: str
    message: str
    steps: int
    usage: Usage
    plan: Plan | None
    assumptions: list[str] = field(default_factory=list)
