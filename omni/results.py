"""The data that crosses the loop: actions the model asks for and the one result shape of every tool."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field


class ToolResult(BaseModel):
    """What every tool returns, host-side or in the sandbox. No tool raises into the loop."""

    success: bool
    output: str = ""
    error: str = ""
    failure: str | None = Field(default=None, description="failure class when success is false")
    exit_code: int | None = None
    truncated: bool = False
    elided_bytes: int = 0
    duration_s: float = 0.0
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def ok(cls, output: str = "", **kw: Any) -> ToolResult:
        return cls(success=True, output=output, **kw)

    @classmethod
    def fail(cls, failure: str, error: str, output: str = "", **kw: Any) -> ToolResult:
        return cls(success=False, failure=failure, error=error, output=output, **kw)


class Action(BaseModel):
    """One tool call chosen by the model."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str = ""

    def signature(self) -> str:
        return self.name + json.dumps(self.args, sort_keys=True, default=str)

    def compact(self, width: int = 80) -> str:
        parts = []
        for key, value in self.args.items():
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            text = text.replace("\n", "⏎")
            parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
        line = f"{self.name}({', '.join(parts)})"
        return line if len(line) <= width else line[: width - 1] + "…"


class Usage(BaseModel):
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = Field(0.0, description="USD; None when a request's price is unknown")
    cost_kind: str = Field("", description='"priced", "local" (a server of the user\'s own: free) or "unknown"; '
                           '"" before any request (omni/model/pricing.py)')

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.cached_tokens += other.cached_tokens
        self.completion_tokens += other.completion_tokens
        kinds = {self.cost_kind, other.cost_kind} - {""}  # one unknown price makes the total unknown
        self.cost_kind = next((k for k in ("unknown", "priced", "local") if k in kinds), "")
        self.cost = None if self.cost_kind == "unknown" else (self.cost or 0.0) + (other.cost or 0.0)


def cost_text(usage: dict) -> str:
    """A usage's cost as the user reads it: dollars, "local" or "cost unknown", never a made-up $0.0000."""
    kind, cost = usage.get("cost_kind", ""), usage.get("cost")
    if kind == "unknown" or (cost is None and kind):
        return "cost unknown"
    if kind == "local":
        return "local"
    return f"${cost or 0:.4f}"
