"""The channel to the tool server: the server's own stdin and stdout. For the Docker sandbox they are an attached
`docker exec` stream through the Docker API, so the channel works wherever the engine is (this machine, Docker
Desktop's VM, Podman, a remote TCP or SSH engine) and no host folder is shared for it; for --sandbox local, a child
process's pipes. One JSON request per line, one reply per line with the request's id; `{"cancel": id}` asks the
server to kill the running command's process group (Ctrl-C).

No secret travels with a request: only the omni process that holds the stream can write to it. Inside the container
the server makes itself non-dumpable, so the sandbox user can neither open its descriptors nor read its environment
through /proc. Replies are bounded: MAX_REPLY bytes, and the call's timeout plus a grace in all, however the bytes
trickle in. A stream that ends is the tool server gone: a SandboxError, which ends the run with its record kept.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any, Protocol

from omni.errors import SandboxError
from omni.results import ToolResult

MAX_REPLY = 32 * 2**20  # bytes in one reply line; tool outputs are clipped far below this
GRACE = 30.0  # seconds a reply may take beyond the call's own timeout (the server enforces that one)
CANCEL_WAIT = 5.0  # seconds to wait for the reply to a cancelled call
STDERR_KEPT = 8192  # the end of what the server wrote to stderr, for the error that says it stopped


class Transport(Protocol):
    """Bytes to and from the tool server."""

    def send(self, data: bytes) -> None: ...

    def receive(self, timeout: float) -> bytes:
        """The next bytes of the server's stdout; b"" when it has ended; TimeoutError when none came in time."""

    def stderr(self) -> str: ...

    def close(self) -> None: ...


class DockerStream:
    """The server's stdio through `docker exec` with stdin attached: one hijacked connection to the engine, carrying
    stdin raw and stdout and stderr as frames (an 8-byte header: stream, 0, 0, 0, length)."""

    def __init__(self, client, container, argv: list[str], user: tuple[int, int], environment: dict | None = None,
                 workdir: str = "/workspace"):
        made = client.api.exec_create(container.id, argv, stdin=True, stdout=True, stderr=True, tty=False,
                                      user=f"{user[0]}:{user[1]}", environment=environment or {}, workdir=workdir)
        self._wrapper = client.api.exec_start(made["Id"], socket=True)
        self._sock = getattr(self._wrapper, "_sock", self._wrapper)  # a socket (unix or TCP) or the SSH transport's
        self._buffer = bytearray()
        self._err = bytearray()

    def send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise SandboxError(f"the tool server's stream is closed ({exc})") from None

    def receive(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            while len(self._buffer) >= 8:
                kind, size = self._buffer[0], struct.unpack(">I", self._buffer[4:8])[0]
                if len(self._buffer) < 8 + size:
                    break
                payload = bytes(self._buffer[8:8 + size])
                del self._buffer[:8 + size]
                if kind == 2:
                    self._err = (self._err + payload)[-STDERR_KEPT:]
                elif payload:
                    return payload
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._sock], [], [], left)[0]:
                raise TimeoutError
            try:
                chunk = self._sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                return b""
            self._buffer += chunk

    def stderr(self) -> str:
        return self._err.decode("utf-8", "replace")

    def close(self) -> None:
        for thing in (self._sock, self._wrapper):
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - closing what may already be gone
                pass


class PipeStream:
    """The server as a child process of omni, for --sandbox local: its stdin and stdout pipes."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]):
        self._err_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err_file, start_new_session=True)

    def send(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise SandboxError(f"the tool server's stream is closed ({exc})") from None

    def receive(self, timeout: float) -> bytes:
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], max(0.0, timeout))[0]:
            raise TimeoutError
        return os.read(fd, 1 << 20)

    def stderr(self) -> str:
        try:
            self._err_file.seek(0)
            return self._err_file.read()[-STDERR_KEPT:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """The server first (a thread blocked on its pipes then sees them end), then the pipes."""
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass


class ToolStream:
    """Calls over one transport: one at a time, each reply matched to its request by id. While it waits for a reply,
    a question the running tool asks (`{"relay": n, ...}`, tools/server.py) goes to `relay`, whose answer is sent
    back; with no relay set, it is refused."""

    def __init__(self, transport: Transport, grace: float = GRACE, limit: int = MAX_REPLY):
        self.transport, self.grace, self.limit = transport, grace, limit
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()  # a cancel may come from another thread (cancel_running)
        self._line = bytearray()
        self.closed = False
        self.running: int | None = None  # the id of the call being waited on
        self.relay: Callable[[dict], dict] | None = None

    def _send(self, message: dict) -> None:
        with self._send_lock:
            self.transport.send(json.dumps(message).encode() + b"\n")

    def cancel_running(self) -> None:
        """Cancel the call another thread is waiting on (its reply then comes back to that thread)."""
        if self.running is not None:
            self._send({"cancel": self.running})

    def call(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        if self.closed:
            raise SandboxError("the sandbox is closed")
        with self._lock:
            started = time.monotonic()
            call_id = next(self._ids)
            self._send({"id": call_id, "tool": name, "args": args})
            self.running = call_id
            try:
                reply = self._reply(call_id, started + timeout + self.grace)
            except KeyboardInterrupt:  # Ctrl-C: the server kills the command; its reply is read and dropped
                self._send({"cancel": call_id})
                try:
                    self._reply(call_id, time.monotonic() + CANCEL_WAIT)
                except (TimeoutError, SandboxError):
                    pass
                raise
            except TimeoutError:
                self._send({"cancel": call_id})
                return ToolResult.fail("sandbox_error", f"the sandbox did not answer within "
                                       f"{timeout + self.grace:.0f}s; the command was cancelled")
            finally:
                self.running = None
            try:
                result = ToolResult.model_validate(reply)
            except ValueError:
                return ToolResult.fail("sandbox_error", f"the sandbox sent an unreadable reply: {str(reply)[:300]}")
            result.duration_s = result.duration_s or round(time.monotonic() - started, 4)
            return result

    def _reply(self, call_id: int, deadline: float) -> dict:
        """The reply to call_id (replies to earlier, abandoned calls are dropped)."""
        while True:
            line = self._next_line(deadline)
            try:
                reply = json.loads(line)
            except ValueError:
                return {"success": False, "failure": "sandbox_error",
                        "error": f"the sandbox sent an unreadable reply: {line[:300]!r}"}
            if not isinstance(reply, dict):
                return {"success": False, "failure": "sandbox_error", "error": "the sandbox sent a reply that is "
                        "not an object"}
            if "relay" in reply and "id" not in reply:
                self._answer(reply)
            elif reply.pop("id", None) == call_id:
                return reply

    def _answer(self, question: dict) -> None:
        """A running tool's question (the model relay): what `relay` answers, or a refusal."""
        ask_id = question.pop("relay")
        try:
            answer = self.relay(question) if self.relay else {"status": 403, "content_type": "text/plain",
                                                              "body": "this run relays nothing"}
        except Exception as exc:  # noqa: BLE001 - the tool waits for an answer whatever went wrong here
            answer = {"status": 502, "content_type": "text/plain", "body": f"the relay failed: {exc}"}
        self._send({"relay_reply": ask_id, **answer})

    def _next_line(self, deadline: float) -> bytes:
        while (end := self._line.find(b"\n")) == -1:
            if len(self._line) > self.limit:
                raise SandboxError(f"the tool server sent a reply larger than {self.limit // 2**20} MiB; the "
                                   "channel is not trusted any more")
            chunk = self.transport.receive(deadline - time.monotonic())
            if not chunk:
                said = self.transport.stderr().strip()
                raise SandboxError("the tool server stopped (its stream closed)"
                                   + (f"; it said: {said[-1500:]}" if said else ""))
            self._line += chunk
        line = bytes(self._line[:end])
        del self._line[:end + 1]
        if len(line) > self.limit:
            raise SandboxError(f"the tool server sent a reply larger than {self.limit // 2**20} MiB; the channel is "
                               "not trusted any more")
        return line

    def wait_ready(self, limit: float = 30.0) -> None:
        ready = self.call("__ping__", {}, max(1.0, limit - self.grace))
        if not ready.success:
            raise SandboxError(f"the tool server did not start: {ready.error}")

    def close(self) -> None:
        self.closed = True
        self.transport.close()


class OverChannel:
    """What a sandbox does through its tool channel (`self.channel`, a ToolStream), Docker's and --sandbox local's
    alike: one call at a time, the relay of a running tool's questions, cancelling a call another thread waits on."""

    channel: ToolStream

    def run_tool(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        return self.channel.call(name, args, timeout)

    def set_relay(self, relay: Callable[[dict], dict] | None) -> None:
        """Who answers a running tool's model requests (omni/model/relay.py); None refuses them."""
        self.channel.relay = relay

    def busy(self) -> bool:
        """Whether a tool call is being waited on."""
        return self.channel.running is not None

    def cancel_running(self) -> None:
        """Cancel the tool call another thread waits on (the relay of an interactive Aider, when it exits)."""
        self.channel.cancel_running()


RUN_DIR_PREFIX = "omni-run-"


class RunDir:
    """A private folder per run on the host (0700): the sanitized git config the container sees. Its name carries
    omni's pid, so a later start can remove it after a kill -9."""

    def __init__(self):
        self.path = Path(tempfile.mkdtemp(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-"))

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale_run_dirs() -> list[str]:
    """Run folders (and the older omni-ipc-* ones) of omni processes that no longer run."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob("omni-*"):
        name = folder.name
        if name.startswith("omni-ipc-"):  # made before run folders carried a pid: stale after a day
            try:
                stale = time.time() - folder.stat().st_mtime > 24 * 3600
            except FileNotFoundError:  # another omni removed it meanwhile (runs at once)
                continue
        elif name.startswith(RUN_DIR_PREFIX):
            owner = name[len(RUN_DIR_PREFIX):].split("-", 1)[0]
            stale = not (owner.isdigit() and pid_alive(int(owner)))
        else:
            continue
        if stale and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def server_env(test_command: str, base_rev: str, limit_bytes: int | None) -> dict[str, str]:
    return {"OMNI_TEST_COMMAND": test_command, "OMNI_BASE_REV": base_rev,
            "OMNI_WORKSPACE_LIMIT": str(limit_bytes or "")}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
