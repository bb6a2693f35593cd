"""The terminal: renders events as an append-only action/observation log, and asks the user."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from omni.plan import MARKS

EXCERPT_LINES = 6


class ConsoleUI:
    """Human-readable log. Core modules emit events; only this class decides how they look."""

    def __init__(self, stream: TextIO | None = None, verbose: bool = False):
        self.console = Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)
        self.verbose = verbose
        self.streaming = False

    def emit(self, kind: str, **data: Any) -> None:
        handler = getattr(self, f"on_{kind}", None)
        if handler:
            handler(**data)

    def print(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style)

    def on_run_start(self, run_id, goal, model, tool_mode, sandbox, **_):
        self.print(f"[bold]omni[/] run {run_id}  model [cyan]{escape(model)}[/] ({tool_mode} tools, "
                   f"{sandbox} sandbox)")
        self.print(f"[bold]Goal:[/] {escape(goal)}")

    def on_plan(self, steps, reason, version, **_):
        title = {"initial": "Plan", "replan": "New plan", "model": "Plan updated"}.get(reason, "Plan")
        self.print(f"[bold magenta]{title}[/] (v{version})")
        for n, step in enumerate(steps, 1):
            style = {"done": "green", "in_progress": "bold", "skipped": "dim strike"}.get(step["status"], "")
            self.print(f"  {n}. [{MARKS[step['status']]}] {escape(step['text'])}", style)

    def on_step(self, n, max, **_):
        self.end_stream()
        self.print(f"[dim]── step {n}/{max} ──[/]")

    def on_model_delta(self, text, **_):
        if self.verbose:
            self.streaming = True
            self.console.print(escape(text), end="", style="dim italic")

    def end_stream(self):
        if self.streaming:
            self.console.print()
            self.streaming = False

    def on_action(self, tool, args, **_):
        self.end_stream()
        parts = []
        for key, value in args.items():
            text = value if isinstance(value, str) else json.dumps(value)
            text = text.replace("\n", "⏎")
            parts.append(f"{key}={text[:60] + '…' if len(text) > 60 else text}")
        self.print(f"[bold cyan]▶ {tool}[/]({escape(', '.join(parts))})")

    def on_observation(self, success, output, error, failure, truncated, duration_s=0.0, **_):
        body = output if success else (error + ("\n" + output if output else ""))
        lines = body.strip().splitlines()
        head = "[green]✓[/]" if success else f"[red]✗ {failure}[/]"
        first = escape(lines[0][:150]) if lines else ""
        self.print(f"  {head} {first} [dim]({duration_s:.2f}s)[/]")
        for line in lines[1:EXCERPT_LINES]:
            self.print(f"    {escape(line[:150])}", "dim")
        hidden = max(0, len(lines) - EXCERPT_LINES)
        if hidden or truncated:
            self.print(f"    [dim]… {hidden} more lines{' (output was capped)' if truncated else ''}[/]")

    def on_correction(self, failure, **_):
        self.print(f"  [yellow]↻ recovering from: {failure}[/]")

    def on_replan(self, reason, **_):
        self.print(f"  [yellow]↻ replanning: {escape(reason)}[/]")

    def on_retry(self, attempt, delay, reason, **_):
        self.print(f"  [yellow]… model request failed ({escape(reason[:120])}); retry {attempt} in {delay}s[/]")

    def on_question(self, text, **_):
        self.print(f"\n[bold yellow]? The agent asks:[/] {escape(text)}")

    def on_answer(self, text, from_user, **_):
        if not from_user:
            self.print("  [dim](no user available; told the agent to assume)[/]")

    def on_warning(self, message, **_):
        self.print(f"[yellow]warning:[/] {escape(message)}")

    def on_condensed(self, **_):
        self.print("  [dim]history condensed to fit the context window[/]")

    def on_image_build(self, line, **_):
        self.print(f"  [dim]{escape(line[:160])}[/]")

    on_env_setup = on_image_build
    on_sandbox = on_image_build

    def on_status(self, status, message, steps, usage, **_):
        self.end_stream()
        style = "bold green" if status == "finished" else "bold red"
        self.print(f"\n[{style}]{status}[/] after {steps} steps: {escape(message[:500])}")


class JsonLines:
    """--json: the same events as events.jsonl, one JSON object per line on stdout."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdout

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "model_delta":
            return
        self.stream.write(json.dumps({"kind": kind, **data}, default=str) + "\n")
        self.stream.flush()


class TerminalAnswers:
    def __init__(self, console: Console):
        self.console = console

    def ask(self, question: str) -> str:
        return self.console.input("[bold yellow]your answer>[/] ").strip() or "(no answer)"


class NoUser:
    """With --yes or no terminal: never wait; tell the model to assume, and record that it did."""

    def __init__(self, text: str):
        self.text = text

    def ask(self, question: str) -> str:
        return self.text
