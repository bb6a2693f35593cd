"""LocalSandbox: the tool server on the host, in the run's worktree. No isolation: an explicit opt-in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from omni.box.channel import SOCKET, RunDir, ToolClient, server_env
from omni.box.toolbox import server_table
from omni.resources import data_dir
from omni.results import ToolResult


class LocalSandbox:
    """Tools on the host, in the run's worktree. No isolation: an explicit opt-in."""

    kind = "local"

    def __init__(self, workspace: Path, test_command: str = "", base_rev: str = "HEAD",
                 limit_bytes: int | None = None):
        self.run_dir = RunDir()
        env = dict(os.environ)
        for key in list(env):  # keys stay out of the tools' reach here too
            if key.endswith(("_API_KEY", "_TOKEN", "_SECRET")):
                env.pop(key)
        env["OMNI_PROJECT_PYTHON"] = shutil.which("python3") or sys.executable
        env.update(server_env(self.run_dir.token, test_command, base_rev, limit_bytes))
        self.proc = subprocess.Popen(
            [sys.executable, str(data_dir("tools") / "server.py"), "--socket", str(self.run_dir.ipc / SOCKET),
             "--root", str(workspace), "--tools", json.dumps(server_table())],
            cwd=workspace, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        self.client = ToolClient(self.run_dir.ipc / SOCKET, self.run_dir.token)
        self.client.wait_ready(lambda: self.proc.poll() is None)

    def run_tool(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        return self.client.call(name, args, timeout)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.run_dir.remove()
