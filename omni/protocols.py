"""The seams between omni's parts. Declarations only, no logic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from omni.results import Action, ToolResult, Usage


class ModelReply(Protocol):
    text: str
    actions: list[Action]
    usage: Usage
    format_error: str | None


class Model(Protocol):
    """A chat model behind an OpenAI-compatible endpoint."""

    name: str
    tool_mode: str  # "native" | "text"
    cost_kind: str  # how its requests are costed: "priced", "local" (a server of the user's own) or "unknown"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 temperature: float | None = None) -> ModelReply: ...

    def text(self, messages: list[dict[str, Any]], schema: Any = None,
             tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None) -> ModelReply: ...

    def samples(self, messages: list[dict[str, Any]], k: int, temperature: float,
                tools: list[dict[str, Any]] | None = None, schema: Any = None,
                max_tokens: int | None = None) -> tuple[list[ModelReply], str]: ...

    def infill(self) -> Any: ...  # fill in the middle (omni/model/infill.py: Infill), or None where it cannot


class Sandbox(Protocol):
    """Where tools run: a Docker container (default) or the host (explicit opt-in)."""

    kind: str  # "docker" | "local"

    def run_tool(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult: ...

    def close(self) -> None: ...


class Events(Protocol):
    """Receives every event of a run: the UI renders them, the run record stores them."""

    def emit(self, kind: str, **data: Any) -> None: ...


class AnswerSource(Protocol):
    """Answers the model's clarification questions (a terminal, or a policy when nobody is there)."""

    def ask(self, question: str) -> str: ...


class Gate(Protocol):
    """Decides what `finish` means: None accepts the work; a string is feedback that sends it back.
    (It may also stop the run, flagging it for a human, by raising StopRun.) plan() gives the run's plan, waiting
    for it while the planner still writes it: a gate calls it only if it reads the plan."""

    def __call__(self, goal: str, plan: Callable[[], str], summary: str) -> str | None: ...


class Steering(Protocol):
    """Runs on Ctrl-C with the plan as it stands and a way to replace it (with step texts): returns
    guidance for the next step ('' for none), or raises StopRun."""

    def __call__(self, plan: str, replace_plan: Callable[[list[str]], None]) -> str: ...


class AfterAction(Protocol):
    """Called after each sandbox action with its result; returns the result, with anything it adds."""

    def __call__(self, action: Action, result: ToolResult) -> ToolResult: ...


class Strategy(Protocol):
    """How the run works beyond asking the model for each action, at the loop's named moments. The loop knows a
    strategy only by this (omni/loop/strategy.py has the plain one; verified repair is omni/repair/strategy.py)."""

    def plan(self) -> list[str] | None:
        """The run's first plan when the strategy knows it without the planner (a delegated run); None: ask."""

    def acts_first(self) -> bool:
        """Whether omni's own action may come before the model's first step (verified repair's opening round): the
        planner is then asked only when something reads the plan, not beside that action on the same server."""

    def own_action(self) -> Action | None:
        """omni's own next action, taken instead of asking the model; None: ask the model."""

    def after_action(self, action: Action, result: ToolResult) -> ToolResult:
        """After a sandbox action or an edit: its result, with anything the strategy did or adds."""

    def propose(self, path: str, symbol: str, note: str) -> ToolResult:
        """The propose_fixes tool: candidate rewrites of one definition, the one that passes applied."""

    def done(self, action: Action | None, result: ToolResult) -> str | None:
        """After a step that succeeded: a summary for the finish gate when the work is done now, else None."""

    def check_changed(self) -> None:
        """The run's check was settled again after the first step (the user's examples at a pause)."""


class Delegate(Protocol):
    """Another agent that makes a change in the sandbox, returned as an edit's result (Aider: the aider_edit tool,
    /aider in the session and at a pause, a spec's aider step; omni/delegate/)."""

    def edit(self, instruction: str, files: list[str] | None = None) -> ToolResult: ...
