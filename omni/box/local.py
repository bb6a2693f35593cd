"""LocalSandbox: the tool server on the host, in the run's worktree. No isolation: an explicit opt-in."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omni.box.channel import OverChannel, PipeStream, ToolStream, server_env
from omni.box.toolbox import server_table
from omni.errors import SandboxError
from omni.resources import data_dir


class LocalSandbox(OverChannel):
    """Tools on the host, in the run's worktree. No isolation: an explicit opt-in."""

    kind = "local"

    def __init__(self, workspace: Path, test_command: str = "", base_rev: str = "HEAD",
                 limit_bytes: int | None = None):
        env = dict(os.environ)
        for key in list(env):  # keys stay out of the tools' reach here too
            if key.endswith(("_API_KEY", "_TOKEN", "_SECRET")):
                env.pop(key)
        env["OMNI_PROJECT_PYTHON"] = shutil.which("python3") or sys.executable
        env.update(server_env(test_command, base_rev, limit_bytes))
        self.channel = ToolStream(PipeStream(
            [sys.executable, str(data_dir("tools") / "server.py"), "--stdio", "--root", str(workspace),
             "--tools", json.dumps(server_table())], str(workspace), env))
        self.channel.wait_ready()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Nothing to hold: without a container there is no isolation to keep (see --sandbox local)."""
        yield

    def attach_tool(self, script: str, args: list[str]) -> int:
        raise SandboxError("an interactive program needs the Docker sandbox; --sandbox local runs nothing in one")

    @property
    def closed(self) -> bool:
        return self.channel.closed

    def close(self) -> None:
        self.channel.close()
