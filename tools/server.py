"""The tool server: runs inside the sandbox and answers requests on its own stdin and stdout, which the host reaches
through an attached `docker exec` stream (or, for --sandbox local, a child process's pipes). A tool call costs a
round trip on that stream instead of a `docker exec`.

Request:  {"id": 7, "tool": "read_file", "args": {...}}\\n      Cancel: {"cancel": 7}\\n
Response: {"id": 7, "success": ..., "output": ..., "error": ..., "failure": ..., ...}\\n
The host validates arguments against the schemas before sending; this side still never lets an exception escape as
anything but a result. Requests run one after another; a cancel kills the running command's process group.

While a call runs, its tool may ask the host something (the model relay of tools/aider.py):
Ask:      {"relay": 3, "method": "POST", "path": "/v1/chat/completions", "body": "..."}\\n
Answer:   {"relay_reply": 3, "status": 200, "content_type": "...", "body": "..."}\\n
The host answers only while it waits for that call's reply, and decides what it forwards (omni/model/relay.py).

Only the host reaches it: the stream is the host's, and the server makes itself non-dumpable, so the sandbox user
(the same uid) can neither open its descriptors nor read its memory or environment through /proc. Its protocol
descriptors are private copies; fd 0 reads /dev/null and fd 1 writes to stderr, so nothing a tool prints can pass
for a reply.

`--idle` is the container's PID 1 instead: it reaps orphans and does nothing else.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import itertools
import json
import os
import queue
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from context import BUDGET, Context, result
from workspace import ToolError

PING, LIST = "__ping__", "__list__"  # the host's readiness probe and install check, not tools
PULL, PUSH = "__pull__", "__push__"  # the copied workspace's exchanges with the host (tools/mirror.py)
TOOLS: dict = {}  # name -> function, from the table the host passes at start (made from specs.py)
MIRROR: list = []  # with --mirror: the Mirror of the copied workspace
WATCH_S = 1.0  # how often the budget watch looks while anything but the server runs


def load_tools(table: dict[str, list[str]]) -> dict:
    """{module: [tool names]} -> {name: the function of that name in tools/<module>.py}. The table comes
    from the declarations in specs.py, which need pydantic; the sandbox's tool runtime does not have it."""
    return {name: getattr(importlib.import_module(module), name) for module, names in table.items()
            for name in names}


def call(root: Path, name: str, args: dict, cancelled=lambda: False, ask_host=None) -> dict:
    started = time.monotonic()
    if name == PING:
        return result(True, "")
    if name == LIST:
        return result(True, "\n".join(sorted(TOOLS)))
    if name in (PULL, PUSH):
        if not MIRROR:
            return result(False, error="this workspace is not a copy", failure="sandbox_error")
        if name == PULL and (over := BUDGET.over()):  # nothing of an overgrown tree goes to the host
            return result(False, error=over, failure="workspace_full")
        return result(True, **(MIRROR[0].pull() if name == PULL else MIRROR[0].push(args.get("entries", []))))
    tool = TOOLS.get(name)
    if tool is None:
        return result(False, error=f"unknown tool {name!r}; known: {', '.join(sorted(TOOLS))}",
                      failure="unknown_tool")
    if over := BUDGET.tripped:
        return result(False, error=over, failure="workspace_full")
    try:
        out = tool(Context(root=root, cancelled=cancelled, ask_host=ask_host), **args)
    except ToolError as exc:
        out = result(False, error=str(exc), failure=exc.failure)
    except TypeError as exc:
        out = result(False, error=f"bad arguments for {name}: {exc}", failure="invalid_arguments")
    except Exception as exc:  # a tool bug must still come back as a result
        out = result(False, error=f"{name} crashed: {type(exc).__name__}: {exc}\n"
                     + traceback.format_exc(limit=4), failure="tool_error")
    out.setdefault("duration_s", round(time.monotonic() - started, 4))
    return out


def _printable(value):
    """Strings with lone surrogates (a file name that is not UTF-8) cannot be sent as JSON text:
    show their bytes as \\xNN instead of failing the whole reply."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def not_dumpable() -> None:
    """PR_SET_DUMPABLE 0: /proc/<pid>/fd, /environ and /mem of this process are closed to its own uid, and it
    cannot be traced. Children get their own dumpable flag when they exec."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux (--sandbox local elsewhere): nothing to close
        pass


def others_alive() -> bool:
    """Whether any process but this server and PID 1 is in the sandbox (a command, or one it left behind)."""
    me = os.getpid()
    try:
        return any(p.isdigit() and int(p) not in (1, me) for p in os.listdir("/proc"))
    except OSError:
        return True


def kill_the_rest() -> None:
    """Every process of the sandbox user but this one (and PID 1, which the kernel spares)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass


class Server:
    """Requests from the stream, run one after another by a worker; cancels from the stream, at once."""

    def __init__(self, root: Path, proto_in, proto_out: int, contained: bool):
        self.root, self.proto_in, self.proto_out, self.contained = root, proto_in, proto_out, contained
        self.requests: queue.Queue = queue.Queue()
        self.cancels: dict = {}
        self.out_lock = threading.Lock()
        self.busy = False
        self.asked: dict[int, queue.Queue] = {}  # relay id -> where the host's answer goes
        self.ask_ids = itertools.count(1)

    def reply(self, message: dict) -> None:
        data = json.dumps(_printable(message)).encode() + b"\n"
        with self.out_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.proto_out, view):]

    def ask_host(self, message: dict, timeout: float, cancelled=lambda: False) -> dict:
        """Ask the host (only while a call runs, which the host is waiting on): its answer, or a 504 after
        timeout seconds or when the call is cancelled."""
        ask_id = next(self.ask_ids)
        answer: queue.Queue = queue.Queue(maxsize=1)
        self.asked[ask_id] = answer
        try:
            self.reply({**message, "relay": ask_id})
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and not cancelled():
                try:
                    return answer.get(timeout=0.2)
                except queue.Empty:
                    continue
            return {"status": 504, "content_type": "text/plain", "body": "the host did not answer the relay"}
        finally:
            self.asked.pop(ask_id, None)

    def work(self) -> None:
        while True:
            request = self.requests.get()
            call_id = request.get("id")
            cancel = self.cancels.setdefault(call_id, threading.Event())
            self.busy = True
            try:
                out = call(self.root, request["tool"], request.get("args") or {}, cancelled=cancel.is_set,
                           ask_host=self.ask_host)
            except Exception as exc:  # noqa: BLE001 - a malformed request still gets an answer
                out = result(False, error=f"bad request: {exc}", failure="sandbox_error")
            finally:
                self.busy = False
                self.cancels.pop(call_id, None)
            if BUDGET.tripped and self.contained:
                kill_the_rest()  # what the command left running may be what grew
            self.reply({**out, "id": call_id})

    def watch(self) -> None:
        """The growth budget, also between calls: a command's background child (even one that left its group with
        setsid) may go on writing after the command returned. Past the budget, every other process is killed."""
        while True:
            time.sleep(WATCH_S)
            # while a call runs, its own watch stops its command and says why; the rest is killed when it returns
            if BUDGET.limit and not BUDGET.tripped and not self.busy and others_alive() and BUDGET.over():
                kill_the_rest()

    def serve(self) -> None:
        threading.Thread(target=self.work, daemon=True).start()
        if self.contained:
            threading.Thread(target=self.watch, daemon=True).start()
        for line in self.proto_in:
            try:
                message = json.loads(line)
                if not isinstance(message, dict):
                    raise ValueError("not an object")
            except ValueError as exc:
                self.reply({"id": None, **result(False, error=f"bad request: {exc}", failure="sandbox_error")})
                continue
            if "cancel" in message:
                self.cancels.setdefault(message["cancel"], threading.Event()).set()
            elif "relay_reply" in message:
                waiting = self.asked.get(message["relay_reply"])
                if waiting is not None and waiting.empty():
                    waiting.put(message)
            else:
                self.cancels.setdefault(message.get("id"), threading.Event())
                self.requests.put(message)
        for event in list(self.cancels.values()):  # the host is gone: nothing it started goes on
            event.set()
        if self.contained:
            kill_the_rest()
        os._exit(0)


def serve_stdio(root: Path, contained: bool) -> None:
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # whatever a tool prints goes to stderr, never into the protocol
    Server(root, proto_in, proto_out, contained).serve()


def idle_init() -> None:
    """PID 1 of the container: reap every orphan, do nothing else (the tool server is started by `docker exec`)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        signal.sigwait({signal.SIGCHLD})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle", action="store_true", help="be the container's PID 1: reap orphans")
    parser.add_argument("--stdio", action="store_true", help="serve requests on stdin and stdout")
    parser.add_argument("--contained", action="store_true", help="in a container of its own: past the budget, "
                        "kill every other process of the sandbox user")
    parser.add_argument("--mirror", action="store_true", help="the workspace is a copy: answer the host's "
                        "__pull__ and __push__ (tools/mirror.py)")
    parser.add_argument("--root")
    parser.add_argument("--tools", help="JSON {module: [tool names]}")
    opts = parser.parse_args()
    if opts.idle:
        idle_init()
    if not (opts.stdio and opts.root and opts.tools):
        sys.exit("usage: server.py --stdio --root DIR --tools JSON [--contained], or server.py --idle")
    not_dumpable()
    TOOLS.update(load_tools(json.loads(opts.tools)))
    root = Path(opts.root).resolve()
    BUDGET.begin(root)
    if opts.mirror:
        from mirror import Mirror

        MIRROR.append(Mirror(str(root)))
    serve_stdio(root, opts.contained)


if __name__ == "__main__":
    main()
