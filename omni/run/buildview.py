"""How an image build looks: one condensed line that says the stage and the time so far (a rich status
on a terminal, a line per stage otherwise), while every line of the build goes to a log file that the
error names. Used before a run (the sandbox image) and by `omni sandbox build`."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from omni.errors import SandboxError
from omni.visible import safe

STAGES = (
    (re.compile(r"^Step (\d+/\d+)"), "step {0}"),  # the classic builder
    (re.compile(r"^#\d+ \[(?:\w+ )?(\d+/\d+)\]"), "step {0}"),  # BuildKit
    (re.compile(r"^I: Retrieving"), "debootstrap: downloading packages"),
    (re.compile(r"^I: Validating"), "debootstrap: checking packages"),
    (re.compile(r"^I: (?:Extracting|Unpacking)"), "debootstrap: unpacking"),
    (re.compile(r"^I: (?:Installing|Configuring)"), "debootstrap: installing"),
    (re.compile(r"^pulling "), "pulling the base image"),
    (re.compile(r"^making .* with debootstrap"), "making a base image from Debian packages"),
)


def log_path() -> Path:
    from platformdirs import user_cache_dir

    folder = Path(user_cache_dir("omni", appauthor=False)) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"build-{datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"


class BuildView:
    def __init__(self, console: Console):
        self.console = console
        self.path: Path | None = None
        self.log = None
        self.stage = "starting"
        self.tag = ""
        self.started = time.monotonic()
        self.progress = None  # a rich Progress on a terminal: spinner, stage, time elapsed (ticking by itself)
        self.task = None

    def __call__(self, kind: str, tag: str = "", line: str = "", **_: Any) -> None:
        if self.log is None:  # the first line of a build: open its log and the status line
            self.path = log_path()
            self.log = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
            self.started = time.monotonic()
            self.console.print(f"[bold]Building the sandbox image[/] (once; the full log: {self.path})")
            if self.console.is_terminal:
                from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

                self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                         console=self.console, transient=True)
                self.progress.start()
                self.task = self.progress.add_task("")
        self.log.write(line + "\n")
        self.log.flush()
        self.tag = tag or self.tag
        stage = next((label.format(*m.groups()) for rx, label in STAGES if (m := rx.match(line))), None)
        if stage and stage != self.stage:
            self.stage = stage
            if self.progress is None:
                self.console.print(f"  {safe(self.tag)} · {safe(stage)} · {time.monotonic() - self.started:.0f}s")
        if self.progress is not None:
            self.progress.update(self.task, description=f"{safe(self.tag)} · {safe(self.stage)}")

    def close(self, ok: bool) -> None:
        if self.log is None:
            return
        if self.progress is not None:
            self.progress.stop()
        self.log.close()
        took = time.monotonic() - self.started
        self.console.print(f"  built {safe(self.tag)} in {took:.0f}s" if ok else
                           f"  [red]the build failed after {took:.0f}s; the full log: {self.path}[/]")


@contextmanager
def building(console: Console) -> Iterator[BuildView]:
    """A build shown by a BuildView: closed however it ends (Ctrl-C too); a failure names the full log."""
    view, ok = BuildView(console), False
    try:
        yield view
        ok = True
    except SandboxError as exc:
        raise SandboxError(f"{exc}\nThe full build log: {view.path}" if view.path else str(exc)) from None
    finally:
        view.close(ok)
