"""What a run is asked to do (RunRequest) and what it has set up so far (Run): the frame that
omni/run/session.py fills and omni/run/finish.py closes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omni.box.workspace import Workspace
from omni.run.record import EventBus, RunRecord, RunFacts
from omni.run.resume import Earlier
from omni.run.ui import ConsoleUI
from omni.settings import Settings


@dataclass
class Delegation:
    """The run's change is handed to Aider (/aider in the session, a spec's aider step): omni/delegate/."""

    instruction: str  # what Aider is asked; for Aider on the terminal, the run's goal line
    files: list[str] = field(default_factory=list)  # the files Aider gets; none: picked from the instruction, hints
    interactive: bool = False  # Aider on the terminal instead of one automatic instruction
    hints: list[str] = field(default_factory=list)  # the session's files: those its goals, plans and runs touched


@dataclass
class RunRequest:
    goal: str
    settings: Settings
    repo: Path | None = None
    json: bool = False
    plan_only: bool = False
    history: list[str] = field(default_factory=list)  # earlier goals of an interactive session
    continued: Earlier | None = None  # the earlier run this one continues (--last / --resume)
    criteria: list[str] = field(default_factory=list)  # a spec step's validation criteria
    steering: list[str] = field(default_factory=list)  # more paths that steer later runs (a spec run's own files)
    delegate: Delegation | None = None  # the change is Aider's


@dataclass
class Run:
    """What one run has set up so far (the frame that run_goal cleans up whatever happens)."""

    request: RunRequest
    run_id: str
    repo: object
    workspace: Workspace
    record: RunRecord
    events: EventBus
    ui: ConsoleUI
    interactive: bool
    facts: RunFacts  # tests, first action, cache share: for the summary
    sandbox: object = None
    outcome: object = None
    status: str = "failed"
    message: str = ""
