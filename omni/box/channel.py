"""The channel to the tool server: a Unix socket in a private run folder, one JSON request per connection,
each carrying the run's secret. Closing a connection early (Ctrl-C) tells the server to kill the command."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omni.errors import SandboxError
from omni.results import ToolResult

SOCKET = "tools.sock"


class ToolClient:
    """Talks to a tool server over its Unix socket: one request per connection, each carrying the run's
    secret (the server refuses a request without it)."""

    def __init__(self, socket_path: Path, token: str):
        self.socket_path = socket_path
        self.token = token

    def call(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        started = time.monotonic()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(timeout + 30)  # the server enforces the command timeout itself
            conn.connect(str(self.socket_path))
            conn.sendall(json.dumps({"token": self.token, "tool": name, "args": args}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, OSError) as exc:
            return ToolResult.fail("sandbox_error", f"the sandbox did not answer: {exc}")
        finally:
            conn.close()  # closing early (Ctrl-C) tells the server to kill the running command
        try:
            reply = ToolResult.model_validate_json(data)
        except ValueError:
            return ToolResult.fail("sandbox_error", f"the sandbox sent an unreadable reply: {data[:300]!r}")
        reply.duration_s = reply.duration_s or round(time.monotonic() - started, 4)
        return reply

    def wait_ready(self, alive: Callable[[], bool], limit: float = 30.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.socket_path.exists():
                probe = self.call("__ping__", {}, timeout=5)
                if probe.success:
                    return
            if not alive():
                raise SandboxError("the tool server stopped while starting")
            time.sleep(0.02)
        raise SandboxError(f"the tool server did not start within {limit:.0f}s")


RUN_DIR_PREFIX = "omni-run-"


class RunDir:
    """A private folder per run on the host: the tool socket's folder (ipc/, 0700, owned by the user
    the tool server runs as), the secret that every request must carry, and the sanitized git config
    the container sees. Its name carries omni's pid, so a later start can remove it after a kill -9."""

    def __init__(self, owner: tuple[int, int] | None = None):
        self.path = Path(tempfile.mkdtemp(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-"))  # 0700
        self.ipc = self.path / "ipc"
        self.ipc.mkdir(mode=0o700)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            os.chown(self.ipc, *owner)
        self.token = secrets.token_hex(16)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale_run_dirs() -> list[str]:
    """Run folders (and the older omni-ipc-* ones) of omni processes that no longer run."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob("omni-*"):
        name = folder.name
        if name.startswith("omni-ipc-"):  # made before run folders carried a pid: stale after a day
            stale = time.time() - folder.stat().st_mtime > 24 * 3600
        elif name.startswith(RUN_DIR_PREFIX):
            owner = name[len(RUN_DIR_PREFIX):].split("-", 1)[0]
            stale = not (owner.isdigit() and pid_alive(int(owner)))
        else:
            continue
        if stale and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def server_env(token: str, test_command: str, base_rev: str, limit_bytes: int | None) -> dict[str, str]:
    return {"OMNI_TOOL_TOKEN": token, "OMNI_TEST_COMMAND": test_command, "OMNI_BASE_REV": base_rev,
            "OMNI_WORKSPACE_LIMIT": str(limit_bytes or "")}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


