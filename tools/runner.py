"""Run one process for a tool: argv (no shell unless asked), stdin closed, its own process group,
killed as a group at the timeout or on cancel, output capped while reading (head and tail kept).

The end of output is not the end of the process: a command closes its pipe and exits a moment later,
and on a busy machine that moment can be long. So after end of output the runner waits for the exit
(bounded by the timeout), and kills only what is still alive. `killed_by` says when omni killed it."""

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
POLL_S = 0.05


@dataclass
class Completed:
    exit_code: int | None
    output: str
    elided_bytes: int
    timed_out: bool
    cancelled: bool
    duration_s: float
    killed_by: str | None = None  # "timeout", "cancel" or "watch" when omni killed the command
    watch_note: str = ""  # what the watch callback said when it stopped the command


class _Output:
    """Head and tail of a stream, with the count of bytes dropped between them."""

    def __init__(self, cap: int):
        self.half = cap // 2
        self.head, self.tail, self.elided = bytearray(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                self.elided += len(self.tail) - self.half
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        body = self.head.decode("utf-8", "replace")
        if self.elided:
            body += f"\n[... {self.elided} bytes elided ...]\n"
        return body + self.tail.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the whole group, again until it is empty: a process mid-fork can add a member."""
    for _ in range(100):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        proc.poll()  # reap the leader: an unreaped zombie keeps the group alive
        time.sleep(0.005)


def run(argv: list[str], cwd: str, timeout: float, env: dict[str, str] | None = None, cap: int = DEFAULT_CAP,
        cancelled: Callable[[], bool] = lambda: False, watch: Callable[[], str] | None = None) -> Completed:
    """`watch`, if given, is asked about once a second while the command runs; a non-empty answer stops
    the command (the workspace grew past its limit, for example) and is kept as `watch_note`."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    out = _Output(cap)
    killed_by, note = None, ""
    exited_at: float | None = None
    open_pipe = True
    next_watch = start + 1.0
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout:
                killed_by = "timeout"
                break
            if cancelled():
                killed_by = "cancel"
                break
            if watch is not None and now >= next_watch:
                next_watch = now + 1.0
                note = watch()
                if note:
                    killed_by = "watch"
                    break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and (not open_pipe or now - exited_at > EXIT_GRACE):
                break  # exited, and its output is read (or a background child still holds the pipe)
            if not open_pipe:
                time.sleep(POLL_S)  # output ended; the process has not exited yet: wait for it
                continue
            if not sel.select(timeout=POLL_S):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                open_pipe = False
                sel.unregister(proc.stdout)
                continue
            out.add(chunk)
    finally:
        sel.close()
        _kill_group(proc)  # only what is left of the group: a timeout, a cancel, a background child
        proc.stdout.close()
        proc.wait()
    # The leader's own status stands when it exited before omni killed anything.
    code = None if killed_by in ("timeout", "cancel") else proc.returncode
    return Completed(code, out.text(), out.elided, killed_by == "timeout", killed_by == "cancel",
                     time.monotonic() - start, killed_by, note)
