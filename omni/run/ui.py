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
        self.started = time.monotonic()
        self.state = {"step": 0, "max": 0, "tokens": 0, "cost": "", "action": "starting"}
        self.phase_started: float | None = time.monotonic()  # until the first step: how long this phase has taken
        self.live = Live(get_renderable=self.footer, console=self.console, refresh_per_second=4,
                         transient=True, redirect_stdout=False, redirect_stderr=False) if live else None
        if self.live:
            self.live.start()

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
        if self.live:
            self.live.stop()

    def resume(self) -> None:
        if self.live:
            self.live.start()

    def close(self) -> None:
        self.end_stream()
        if self.live:
            self.live.stop()
            self.live = None

    def emit(self, kind: str, **data: Any) -> None:
        handler = getattr(self, f"on_{kind}", None)
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
                     continues="", **_):
        self.print(f"[bold]omni[/] run {run_id}  model [cyan]{safe(model)}[/] at {safe(endpoint)} ({tool_mode} tools, "
                   f"{sandbox} sandbox{', small-model profile' if profile == 'small' else ''})")
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

    def on_check(self, source, tests, result, tried=True, unrelated=(), **_):
        mark = "[green]✓[/]" if source != "none" else "[red]✗[/]" if tried else "[dim]·[/]"
        self.print(f"  {mark} check: {safe(source)}: {safe(result)}"
                   f"{' (' + safe(', '.join(tests[:3])) + ')' if tests else ''}")
        if unrelated:
            self.print(f"  [dim]failing before the run, and not what the goal is about (they do not block): "
                       f"{safe(', '.join(unrelated[:3]))}{' …' if len(unrelated) > 3 else ''}[/]")

    def on_check_passes(self, tests, examples, **_):
        what = ", ".join(p for p in (f"{len(tests)} test(s)" if tests else "", f"{examples} example(s)" if examples
                                     else "") if p)
        self.print(f"  [green]✓ the run's check passes now[/] ({what}): asking the finish gate")

    def on_opening(self, path, symbol, why, **_):
        self.print(f"  [cyan]omni starts by trying rewrites of {safe(symbol)}[/] in {safe(path)} ({safe(why)})")

    def on_rung(self, path, symbol, why, **_):
        self.print(f"  [cyan]omni tries rewrites of {safe(symbol)}[/] in {safe(path)} ({safe(why)})")

    def on_candidate(self, id, target, passes, applied, failing, diff_lines, votes, error="", breaks=(), message="",
                     **_):
        if passes and breaks:
            said = f"[red]✗ passes the check but breaks[/] {safe(', '.join(breaks[:2]))}"
        elif passes:
            said = f"[green]✓ passes the check[/] ({diff_lines} line(s), {votes} vote(s))"
        elif applied and message and not failing:  # an example that does not hold, or why it does not pass
            said = f"[red]✗[/] {safe(message[:100])} ({diff_lines} line(s))"
        elif applied:
            said = f"[red]✗ fails[/] {safe(', '.join(failing[:2]) or 'the examples')} ({diff_lines} line(s))"
        else:
            said = f"[red]✗ not applied[/]: {safe(error[:100])}"
        self.print(f"  candidate {id} for {safe(target)}: {said}")

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
        self.print(f"  [yellow]✎ your guidance goes to the agent: {safe(text[:200])}[/]")

    def on_warning(self, message, **_):
        self.print(f"[yellow]warning:[/] {safe(message)}")

    def on_condensed(self, **_):
        self.print("  [dim]history condensed to fit the context window[/]")

    def on_review(self, verdict, confidence, reasons, **_):
        style = {"approved": "green", "refine": "yellow", "flag": "red"}.get(verdict, "")
        self.print(f"  [{style}]review: {safe(verdict)} ({confidence:.0%})[/] {safe('; '.join(reasons)[:300])}")

    def on_briefing(self, lines, text="", **_):
        """Say what was added, by the heading of each part ("Code the goal names", "Tests that fail ...")."""
        firsts = [part.split("\n", 1)[0] for part in text.split("\n\n") if part]
        heads = [h.split(" (")[0].split(";")[0].rstrip(":") for h in firsts if h[:1].isupper() and h.endswith(":")]
        what = "; ".join(dict.fromkeys(heads)) or "notes"
        self.print(f"[dim]briefing: {lines} line(s) added to the goal: {safe(what[:200])}[/]")

    def on_slots(self, total, **_):
        self.print(f"[dim]llama.cpp server with {total} slots: up to {total} candidates per request[/]")

    def on_baseline(self, tests, lint_problems, **_):
        self.print(f"[dim]baseline: {safe(tests or 'no tests')}; {lint_problems} lint problem(s) before the run[/]")

    def on_gate(self, decision, attempt, reasons, **_):
        style = {"accept": "green", "refine": "yellow"}.get(decision, "red")
        self.print(f"  [{style}]gate: {decision}[/] (check {attempt}) {safe('; '.join(reasons)[:300])}")

    def on_validation(self, new_failures, **_):
        if new_failures:
            self.print(f"  [yellow]validation: {safe('; '.join(new_failures)[:300])}[/]")
        else:
            self.print("  [green]validation: no new test or lint failures[/]")

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

    def on_summary(self, run_id, status, steps, usage, wall_s, changed_files, applied, apply_note, branch,
                   record, tests=None, assumptions=(), first_action_s=None, cached_share=0.0, check=None, **_):
        self.close()
        tokens = f"{usage.get('prompt_tokens', 0):,}+{usage.get('completion_tokens', 0):,} tokens"
        self.print(f"\n[bold]Run {safe(run_id)}[/]: {safe(status)}; {steps} steps, {tokens}, "
                   f"{cost_text(usage)}, {wall_s:.1f}s")
        for row in changed_files:
            self.print(f"  {safe(row['path'])}  [green]+{row['added']}[/] [red]-{row['removed']}[/]")
        if tests:
            self.print(f"  tests: {safe(tests)}")
        self.print(f"  {_check_line(check)}")
        if first_action_s is not None:
            self.print(f"  [dim]first action after {first_action_s:.0f}s; {cached_share:.0%} of prompt tokens "
                       "after the first request came from the server's cache[/]")
        for question in assumptions:
            self.print(f"  [yellow]assumed an answer to:[/] {safe(question)}")
        if applied:
            self.print(f"[green]{safe(apply_note)}[/]. Undo with: omni undo {safe(run_id)}")
        elif changed_files:
            if apply_note:
                self.print(f"[yellow]{safe(apply_note)}[/]")
            self.print(f"The changes are on branch {safe(branch)}. Apply them with: omni apply {safe(run_id)}")
        self.print(f"Run record: {safe(record)}")


def _check_line(check: dict | None) -> str:
    """The summary's line on the run's check: whether the result is verified, and by what."""
    check = check or {"source": "none", "holds": None}
    if check["source"] == "none":
        return "[yellow]unchecked:[/] no check could be settled (no example in the goal, no failing test it is " \
               "about, no reproduction test); the tests that passed before and the review are all that looked at it"
    if check["holds"] is True:
        return f"[green]verified:[/] the run's check holds ({safe(check['source'])})"
    if check["holds"] is False:
        return f"[red]not verified:[/] the run's check still fails: {safe('; '.join(check.get('failing', [])[:3]))}"
    return f"[yellow]not verified:[/] the run ended before its check ({safe(check['source'])}) was run at a finish"


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
