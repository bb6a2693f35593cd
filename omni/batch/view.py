"""What a batch shows: one line per finished task, a live line with done, running, failed and lost, the time so far
and an estimate (in a terminal; elsewhere the counts follow each task's line), and the summary table at the end.
--json: one JSON object per task transition on stdout instead."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from omni.batch.runner import DONE, BatchState, cost_text, summary_table
from omni.visible import safe


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def counts_line(state: BatchState) -> str:
    c = state.counts()
    left = state.estimate_s()
    return (f"done {c['done']} · running {c['running']} · failed {c['failed']} · lost {c['lost']} · "
            f"{len(state.results)}/{c['total']} · {clock(time.monotonic() - state.started)}"
            + (f" · about {clock(left)} left" if left is not None else ""))


class BatchView:
    def __init__(self, json_lines: bool = False):
        self.json, self.closed = json_lines, False
        self.console = Console(file=sys.stderr if json_lines else sys.stdout, highlight=False)
        self.live: Live | None = None
        if not json_lines and self.console.is_terminal:
            self.live = Live("", console=self.console, refresh_per_second=2, transient=True)
            self.live.start()

    def __call__(self, kind: str, state: BatchState, id: str, **fields: Any) -> None:
        if self.json:
            self._line(json.dumps({"event": kind, "id": id, **fields, **state.counts()}, default=str))
            return
        result = fields.get("result") or {}
        line = {
            "skipped": f"[dim]· {safe(id)}: {safe(result.get('status', ''))} before; skipped (--redo runs it again)[/]",
            "retry": f"[yellow]↻ {safe(id)}: {safe(fields.get('reason', ''))}; trying again[/]",
            "lost": f"[red]⚠ {safe(id)} lost: {safe(fields.get('reason', ''))}[/]",
            "done": self._finished(id, result),
        }.get(kind)
        if line:
            self.console.print(line)
            if self.live is None and kind != "skipped":
                self.console.print(f"[dim]  {counts_line(state)}[/]")
        if self.live is not None:
            self.live.update(counts_line(state))

    def _line(self, text: str) -> None:
        """A JSON line; once the reader has left (`omni batch --json | head -1`), the batch runs on quietly."""
        if self.closed:
            return
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            self.closed = True
            try:  # Python flushes stdout at exit; a closed pipe there would print a traceback
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass

    @staticmethod
    def _finished(task_id: str, r: dict[str, Any]) -> str:
        status = r.get("status", "")
        mark = "[green]✓[/]" if status == DONE else "[red]✗[/]"
        said = f" {safe(' '.join((r.get('reason') or '').split()))[:200]}" if status != DONE else ""
        return (f"{mark} {safe(task_id)} {safe(status)}: {r.get('steps', 0) or 0} steps, {r.get('tokens', 0) or 0:,} "
                f"tokens, {cost_text(r)}, {r.get('wall_s', 0) or 0:.0f} s{said}")

    def close(self, rows: list[dict[str, Any]], out) -> None:
        if self.live is not None:
            self.live.stop()
        if self.json:
            return
        self.console.print(Markdown(summary_table(rows)))
        self.console.print(f"Records: {out}/<task>/ (result.json, summary.json, events.jsonl, diff.patch, "
                           f"branch.bundle); the table: {out}/summary.md")
