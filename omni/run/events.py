"""The event stream's schema: every event has seq, time, kind and type (the same name: `type` is what Codex
and Claude Code call it, `kind` is omni's own), plus the fields listed for its kind.
The same objects go to .omni/runs/<id>/events.jsonl and, with --json, to stdout (README: "Events")."""

from __future__ import annotations

from typing import Any

COMMON = ("seq", "time", "kind", "type")
FIELDS: dict[str, tuple[str, ...]] = {
    "run_start": ("run_id", "goal", "model", "planner", "tool_mode", "sandbox", "repo", "branch", "instructions",
                  "endpoint", "profile", "continues", "mount", "mount_reason"),
    "phase": ("name",),
    "plan": ("reason", "version", "steps"),
    "step": ("n", "max", "plan_step"),
    "model_text": ("text",),
    "action": ("n", "tool", "args", "text"),
    "observation": ("n", "tool", "success", "output", "error", "failure", "exit_code", "truncated", "duration_s",
                    "details"),
    "correction": ("n", "failure", "detail", "prompt"),
    "replan": ("reason",),
    "usage": ("purpose", "call", "total"),
    "retry": ("attempt", "delay", "reason"),
    "question": ("text",),
    "answer": ("text", "from_user"),
    "interrupt": ("step",),
    "guidance": ("text",),
    "condensed": ("turns",),
    "history_shortened": ("turns",),
    "warning": ("message",),
    "structured_output": ("supported", "base_url"),
    "slots": ("total",),
    "infill": ("available", "format"),
    "candidate": ("id", "target", "asked", "parsed", "applied", "passes", "failing", "diff_lines", "votes", "error",
                  "code", "breaks", "message", "lint"),
    "image_build": ("tag", "line"),
    "relay": ("path", "status", "forwarded", "reason"),
    "delegate": ("tool", "mode", "files", "picked_by"),
    "env_setup": ("line",),
    "sandbox": ("line",),
    "baseline": ("tests", "failing", "lint_problems"),
    "check": ("source", "tests", "result", "tried", "unrelated", "asserts"),
    "reproduction_try": ("attempt", "form", "code", "fails_as_it_should", "outcome"),
    "verification": ("holds", "failing", "unrelated"),
    "briefing": ("text", "lines"),
    "check_passes": ("tests", "examples"),
    "spectrum": ("side", "error", "suspects"),
    "opening": ("path", "symbol", "why"),
    "rung": ("path", "symbol", "why"),
    "step_applied": ("target", "candidate", "still_failing"),
    "validation": ("new_failures", "tests", "lint"),
    "review": ("verdict", "confidence", "reasons"),
    "gate": ("decision", "attempt", "reasons", "confidence", "validation"),
    "status": ("status", "message", "steps", "usage"),
    "summary": ("run_id", "goal", "status", "message", "exit_code", "steps", "usage", "wall_s", "changed_files",
                "branch", "seed", "applied", "apply_note", "steering_files", "links_out", "assumptions", "plan",
                "tests", "tests_at_start", "check", "profile", "first_action_s", "cached_share", "record"),
}


def problems(event: dict[str, Any]) -> list[str]:
    """What is wrong with one event object against the schema (empty when valid)."""
    missing = [k for k in COMMON if k not in event]
    if missing:
        return [f"missing {', '.join(missing)}"]
    if event["kind"] not in FIELDS:
        return [f"unknown kind {event['kind']!r}"]
    absent = [f for f in FIELDS[event["kind"]] if f not in event]
    return [f"{event['kind']} lacks {', '.join(absent)}"] if absent else []
