"""Run one process for a tool: argv (no shell unless asked), stdin closed, its own process group,
killed as a group at the timeout or on cancel, output capped while reading (head and tail kept)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_CAP = 256 * 1024  # bytes kept per command: half head, half tail
EXIT_GRACE = 0.5  # seconds to keep reading after exit, for a background child holding the pipe


@dataclass
class Completed:
    exit_code: int | None
    output: str
    elided_bytes: int
    timed_out: bool
    cancelled: bool
    duration_s: float


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the whole group, again until it is empty: a process mid-fork can add a member."""
    for _ in range(100):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        proc.poll()  # reap the leader: an unreaped zombie keeps the group alive
        time.sleep(0.005)


def run(
    argv: list[str],
    cwd: str,
    timeout: float,
    env: dict[str, str] | None = None,
    cap: int = DEFAULT_CAP,
    cancelled: Callable[[], bool] = lambda: False,
) -> Completed:
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    head = bytearray()
    tail = bytearray()
    half = cap // 2
    elided = 0
    timed_out = was_cancelled = False
    exited_at: float | None = None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout:
                timed_out = True
                break
            if cancelled():
                was_cancelled = True
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                break
            if not sel.select(timeout=0.05):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            if len(head) < half:
                take = half - len(head)
                head += chunk[:take]
                chunk = chunk[take:]
            if chunk:
                tail += chunk
                if len(tail) > half:
                    elided += len(tail) - half
                    del tail[: len(tail) - half]
    finally:
        sel.close()
        _kill_group(proc)  # whatever is left of the group: a timeout, a cancel, a background child
        proc.stdout.close()
        proc.wait()
    body = head.decode("utf-8", "replace")
    if elided:
        body += f"\n[... {elided} bytes elided ...]\n"
    body += tail.decode("utf-8", "replace")
    code = None if (timed_out or was_cancelled) else proc.returncode
    return Completed(code, body, elided, timed_out, was_cancelled, time.monotonic() - start)
