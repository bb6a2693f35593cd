"""What every tool gets: the workspace root, how to run a process there, and how to shape output."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import runner

MODEL_OUTPUT_CHARS = 12_000


@dataclass
class Context:
    root: Path
    cancelled: Callable[[], bool] = lambda: False
    project_python: str = field(default_factory=lambda: os.environ.get("OMNI_PROJECT_PYTHON", sys.executable))
    test_command: str = field(default_factory=lambda: os.environ.get("OMNI_TEST_COMMAND", ""))
    base_rev: str = field(default_factory=lambda: os.environ.get("OMNI_BASE_REV", "HEAD"))  # the run's start
    # (message, timeout) -> the host's answer, while this call runs (tools/server.py: the relay); None: no host
    ask_host: Callable[..., dict] | None = None

    def run(self, argv: list[str], timeout: float, cap: int = runner.DEFAULT_CAP) -> runner.Completed:
        return runner.run(argv, str(self.root), timeout, env=self.env(), cap=cap, cancelled=self.cancelled,
                          watch=BUDGET.over if BUDGET.limit else None)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        env["GIT_PAGER"] = "cat"
        env["PAGER"] = "cat"
        env["TERM"] = "dumb"
        src = Path(self.root) / "src"
        if src.is_dir():  # a src layout: tests and commands import the working tree, not an installed copy
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH", "")) if p)
        return env

    @staticmethod
    def has(program: str) -> bool:
        return shutil.which(program) is not None


ENTRY_BYTES = 4096  # a file or folder costs a block beyond its bytes (omni/box/workspace.py counts the same)


def tree_cost(root: Path) -> int:
    """What the tree under root weighs against the growth budget: its bytes and a block for each file or folder,
    everything counted (.git folders at any depth, .omni), no link followed. A walk with a stack, not recursion."""
    total, stack = 0, [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            total += ENTRY_BYTES
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                pass
    return total


class WorkspaceBudget:
    """How much the workspace may grow while this server runs (OMNI_WORKSPACE_LIMIT bytes). A command that writes
    past it is stopped, and so is anything left running (the server's watch); once past it, no tool runs again.
    The host also checks before it commits anything, and then the run stops."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.root: Path | None = None
        self.start = 0
        self.tripped = ""  # what over() said the first time the workspace was past its budget

    def begin(self, root: Path) -> None:
        if self.limit:
            self.root, self.start = root, tree_cost(root)

    def over(self) -> str:
        if self.tripped or not self.limit or self.root is None:
            return self.tripped
        grown = tree_cost(self.root) - self.start
        if grown < self.limit:
            return ""
        self.tripped = (f"stopped: the workspace grew by {grown // 2**20} MiB (its bytes, and {ENTRY_BYTES // 1024} "
                        f"KiB for each file or folder), past its limit of {self.limit // 2**20} MiB; remove what the "
                        "command wrote, and write less")
        return self.tripped


def _limit_from_env() -> int | None:
    value = os.environ.get("OMNI_WORKSPACE_LIMIT", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


BUDGET = WorkspaceBudget(_limit_from_env())


def clip(text: str, limit: int = MODEL_OUTPUT_CHARS) -> tuple[str, bool]:
    """Keep the head and tail of long text for the model; say how much was cut."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}", True


def result(success: bool, output: str = "", error: str = "", failure: str | None = None, **details) -> dict:
    output, cut_out = clip(output)
    error, cut_err = clip(error)
    out = {"success": success, "output": output, "error": error, "failure": None if success else failure}
    for key in ("exit_code", "elided_bytes", "duration_s"):
        if key in details:
            out[key] = details.pop(key)
    out["truncated"] = bool(cut_out or cut_err or out.get("elided_bytes"))
    out["details"] = details
    return out
