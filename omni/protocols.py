"""The seams between omni's parts. Declarations only, no logic."""

from __future__ import annotations

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

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 temperature: float | None = None) -> ModelReply: ...

    def text(self, messages: list[dict[str, Any]]) -> ModelReply: ...


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
