"""Failure handling: classify, say the exact error, count failures toward a replan and unreadable replies
toward a stop. (Refusing repeats is the repeat guard's job: omni/loop/guard.py.)"""

from __future__ import annotations

import json

from omni.results import Action, ToolResult

CLASSES = ("format_error", "unknown_tool", "invalid_arguments", "edit_failed", "lint_failed", "tests_failed",
           "timeout", "command_failed", "sandbox_error", "tool_error", "repeated", "refine")
ERROR_CHARS = 6000


def failure_class(result: ToolResult) -> str:
    return result.failure if result.failure in CLASSES else "tool_error"


def exact_error(result: ToolResult) -> str:
    """The error as the tool gave it: message first, then the output that explains it."""
    parts = [p for p in (result.error.strip(), result.output.strip()) if p]
    text = "\n".join(dict.fromkeys(parts)) or "(the tool gave no message)"
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS // 2] + "\n[...]\n" + text[-ERROR_CHARS // 2:]
    return text


class FailureTracker:
    """Failures since the plan step last moved, unreadable replies in a row, and the last few failures
    (for the replan prompt)."""

    def __init__(self, replan_after: int = 3, max_format_errors: int = 3):
        self.replan_after = replan_after
        self.max_format_errors = max_format_errors
        self.on_step = 0
        self.format_errors_in_row = 0
        self.recent: list[str] = []

    def record(self, action: Action | None, result: ToolResult) -> None:
        if result.success:
            self.format_errors_in_row = 0
            return
        kind = failure_class(result)
        self.format_errors_in_row = self.format_errors_in_row + 1 if kind == "format_error" else 0
        self.on_step += 1
        label = action.compact(120) if action else "(no tool call)"
        self.recent = (self.recent + [f"- {label}: {kind}: {exact_error(result).splitlines()[0][:200]}"])[-6:]

    def too_many_format_errors(self) -> bool:
        return self.format_errors_in_row >= self.max_format_errors

    def wants_replan(self) -> bool:
        return self.on_step >= self.replan_after

    def plan_moved(self) -> None:
        self.on_step = 0


def describe(action: Action | None) -> str:
    if action is None:
        return "(no tool call could be read from your reply)"
    return f"{action.name} {json.dumps(action.args, ensure_ascii=False)[:2000]}"


def unreadable(reply) -> ToolResult:
    """The result of a reply no call could be read from. What the model sent stays in the run record (not
    in the prompt): why it did not parse."""
    return ToolResult.fail("format_error", reply.format_error, details={"reply": (reply.text + reply.cut_call)[-4000:]})
