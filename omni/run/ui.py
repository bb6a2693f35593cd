"""The terminal: an append-only action/observation log with a small live footer, and the prompts that
ask the user. Core modules emit events; only this module decides how they look."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from omni.errors import OutputClosed
from omni.results import cost_text
from omni.loop.plan import MARKS
from omni.run.checklines import CheckLines
from omni.run.lineinput import read_line
from omni.visible import safe, visible

EXCERPT_LINES = 6


def compact_args(args: dict[str, Any], width: int = 60) -> str:
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:width] + '…' if len(text) > width else text}")
    return ", ".join(parts)


class ConsoleUI:
    """Human-readable log. With live=True (a terminal), a footer shows step, tokens, cost, elapsed and
    the current action; everything else is printed above it and stays in the scrollback."""

    def __init__(self, stream: TextIO | None = None, verbose: bool = False, live: bool = False):
        self.console = Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)
        self.verbose = verbose
        self.streaming = False
        self.paused = 0  # nested pauses of the live footer
        self.started = time.monotonic()
        self.state = {"step": 0, "max": 0, "tokens": 0, "cost": "", "action": "starting"}
        self.phase_started: float | None = time.monotonic()  # until the first step: how long this phase has taken
        self.live = Live(get_renderable=self.footer, console=self.console, refresh_per_second=4,
                         transient=True, redirect_stdout=False, redirect_stderr=False) if live else None
        if self.live:
            self.live.start()
        self.checks = CheckLines(self.print, self.close)  # the check, the gate, the candidates, the summary

    def footer(self) -> Text:
        s = self.state
        elapsed = int(time.monotonic() - self.started)
        cost = f"{s['cost']} · " if s["cost"] else ""
        if self.phase_started is not None:
            took = int(time.monotonic() - self.phase_started)
            return Text(f" {visible(s['action'])} {took // 60}:{took % 60:02d} · {s['tokens']:,} tokens · {cost}"
                        f"{elapsed // 60}:{elapsed % 60:02d} in all  (Ctrl-C to steer)", style="reverse")
        return Text(f" step {s['step']}/{s['max']} · {s['tokens']:,} tokens · {cost}"
                    f"{elapsed // 60}:{elapsed % 60:02d} · {visible(s['action'])}  (Ctrl-C to steer)", style="reverse")

    def pause(self) -> None:
        """Stop drawing the live footer (a prompt, or a program on the terminal); pauses nest."""
        self.paused += 1
        if self.live and self.paused == 1:
            self.live.stop()

    def resume(self) -> None:
        self.paused = max(0, self.paused - 1)
        if self.live and self.paused == 0:
            self.live.start()

    def close(self) -> None:
        self.end_stream()
        if self.live:
            self.live.stop()
            self.live = None

    def emit(self, kind: str, **data: Any) -> None:
        handler = getattr(self, f"on_{kind}", None) or getattr(self.checks, f"on_{kind}", None)
        if handler:
            handler(**data)

    def print(self, text: str, style: str = "") -> None:
        """Rich markup composed here, every model-controlled value in it passed through safe()."""
        self.console.print(text, style=style)

    def show(self, text: str, style: str = "") -> None:
        """Text as it is, no markup read in it, with control and escape bytes made visible (a diff, say)."""
        self.console.print(visible(text), style=style, markup=False, highlight=False)

    # ---- events -------------------------------------------------------------------------------
    def on_run_start(self, run_id, goal, model, tool_mode, sandbox, instructions=(), endpoint="", profile="",
                     continues="", mount="", mount_reason="", **_):
        self.print(f"[bold]omni[/] run {run_id}  model [cyan]{safe(model)}[/] at {safe(endpoint)} ({tool_mode} tools, "
                   f"{sandbox} sandbox{', small-model profile' if profile == 'small' else ''})")
        if mount:
            how = "bind-mounted" if mount == "bind" else "copied in and back"
            self.print(f"[dim]worktree {how}: {safe(mount_reason)}[/]")
        if continues:
            self.print(f"[bold]Continues run[/] {safe(continues)}")
        self.print(f"[bold]Goal:[/] {safe(goal)}")
        if instructions:
            self.print(f"[dim]project instructions: {safe(', '.join(instructions))}[/]")

    def on_plan(self, steps, reason, version, **_):
        title = {"initial": "Plan", "replan": "New plan", "model": "Plan updated",
                 "user": "Plan set by you"}.get(reason, "Plan")
        self.print(f"[bold magenta]{title}[/] (v{version})")
        for n, step in enumerate(steps, 1):
            style = {"done": "green", "in_progress": "bold", "skipped": "dim strike"}.get(step["status"], "")
            self.print(f"  {n}. {safe('[' + MARKS[step['status']] + ']')} {safe(step['text'])}", style)

    def on_phase(self, name, **_):
        """A phase before the first action (planning, the baseline tests, settling the check, ...)."""
        self.state["action"], self.phase_started = name, time.monotonic()
        self.print(f"[dim]· {safe(name)}[/]")

    def on_step(self, n, max, **_):
        self.end_stream()
        self.phase_started = None
        self.state.update(step=n, max=max, action="thinking")
        self.print(f"[dim]── step {n}/{max} ──[/]")

    def on_usage(self, total, **_):
        self.state.update(tokens=total["prompt_tokens"] + total["completion_tokens"], cost=cost_text(total))

    def on_model_delta(self, text, **_):
        if self.verbose:
            self.streaming = True
            self.console.print(safe(text), end="", style="dim italic")

    def end_stream(self):
        if self.streaming:
            self.console.print()
            self.streaming = False

    def on_action(self, tool, args, **_):
        self.end_stream()
        self.state["action"] = f"{tool}({compact_args(args, 20)})"[:60]
        self.print(f"[bold cyan]▶ {safe(tool)}[/]({safe(compact_args(args))})")

    def on_observation(self, success, output, error, failure, truncated, duration_s=0.0, **_):
        body = output if success else (error + ("\n" + output if output else ""))
        lines = body.strip().splitlines()
        head = "[green]✓[/]" if success else f"[red]✗ {safe(failure)}[/]"
        first = safe(lines[0][:150]) if lines else ""
        self.print(f"  {head} {first} [dim]({duration_s:.2f}s)[/]")
        for line in lines[1:EXCERPT_LINES]:
            self.print(f"    {safe(line[:150])}", "dim")
        hidden = max(0, len(lines) - EXCERPT_LINES)
        if hidden or truncated:
            self.print(f"    [dim]… {hidden} more lines{' (output was capped)' if truncated else ''}[/]")

    def on_correction(self, failure, detail="", **_):
        self.print(f"  [yellow]↻ recovering from: {safe(failure.replace('_', ' '))}"
                   f"{': ' + safe(detail[:100]) if detail else ''}[/]")

    def on_replan(self, reason, **_):
        self.print(f"  [yellow]↻ replanning: {safe(reason)}[/]")

    def on_retry(self, attempt, delay, reason, **_):
        self.print(f"  [yellow]… model request failed ({safe(reason[:120])}); retry {attempt} in {delay}s[/]")

    def on_question(self, text, **_):
        self.pause()
        self.print(f"\n[bold yellow]? The agent asks:[/] [bold]{safe(text)}[/]")

    def on_answer(self, text, from_user, **_):
        self.resume()
        if not from_user:
            self.print("  [dim](no user available; told the agent to assume)[/]")

    def on_guidance(self, text, **_):
        shown = text if len(text) <= 200 else text[:200].rsplit(None, 1)[0] + " …"
        self.print(f"  [yellow]✎ your guidance goes to the agent: {safe(shown)}[/]")

    def on_warning(self, message, **_):
        self.print(f"[yellow]warning:[/] {safe(message)}")

    def on_condensed(self, **_):
        self.print("  [dim]history condensed to fit the context window[/]")

    def on_briefing(self, lines, text="", **_):
        """Say what was added, by the heading of each part ("Code the goal names", "Tests that fail ...")."""
        firsts = [part.split("\n", 1)[0] for part in text.split("\n\n") if part]
        heads = [h.split(" (")[0].split(";")[0].rstrip(":") for h in firsts if h[:1].isupper() and h.endswith(":")]
        what = "; ".join(dict.fromkeys(heads)) or "notes"
        self.print(f"[dim]briefing: {lines} line(s) added to the goal: {safe(what[:200])}[/]")

    def on_slots(self, total, **_):
        self.print(f"[dim]llama.cpp server with {total} slots: up to {total} candidates per request[/]")

    def on_image_build(self, line, **_):
        self.state["action"] = f"building the sandbox image: {line[:60]}"
        if line.startswith(("the sandbox image", "built ")):  # the rest is in the record (omni show)
            self.print(f"  [dim]{safe(line[:160])}[/]")

    def on_env_setup(self, line, failed=False, cached=None, **_):
        self.state["action"] = f"setting up the project environment: {line[:60]}"
        if failed or cached is not None:  # its start, its cache hit or its failure; each build line is recorded
            self.print(f"  [{'yellow' if failed else 'dim'}]{safe(line[:400])}[/]")

    def on_sandbox(self, line, **_):
        self.print(f"  [dim]{safe(line[:160])}[/]")

    def on_status(self, status, message, steps, **_):
        self.end_stream()
        style = "bold green" if status == "finished" else "bold red"
        self.print(f"\n[{style}]{safe(status)}[/] after {steps} steps: {safe(message[:500])}")


class JsonLines:
    """--json: the same event objects as events.jsonl, one per line on stdout."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdout
        self.closed = False

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "model_delta" or self.closed:
            return
        try:
            self.stream.write(json.dumps({"kind": kind, **data}, default=str) + "\n")
            self.stream.flush()
        except BrokenPipeError:  # the reader left (`omni --json | head -1`): end the run, quietly
            self.closed = True
            try:  # Python flushes stdout at exit; a closed pipe there would print a traceback
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
            except (OSError, ValueError, AttributeError):
                pass
            raise OutputClosed("stdout was closed (the reader of --json left); the run stopped") from None


class TerminalAnswers:
    def __init__(self, ui: ConsoleUI):
        self.ui = ui

    def ask(self, question: str) -> str:
        return read_line(self.ui.console, "[bold yellow]your answer>[/] ", "answers").strip() or "(no answer)"


class NoUser:
    """With --yes or no terminal: never wait; tell the model to assume, and record that it did."""

    def __init__(self, text: str):
        self.text = text

    def ask(self, question: str) -> str:
        return self.text
