"""The tool server: runs inside the sandbox and answers one JSON request per connection on a Unix
socket, so a tool call costs a socket round trip instead of a `docker exec`.

Request:  {"token": "<the run's secret>", "tool": "read_file", "args": {...}}\n
Response: {"success": ..., "output": ..., "error": ..., "failure": ..., ...}\n
The host validates arguments against the schemas before sending; this side still never lets an
exception escape as anything but a result. Closing the connection cancels a running command.

Only the run reaches it: the socket is 0600 in a 0700 folder owned by the server's user, and each
request must carry the secret the server got in OMNI_TOOL_TOKEN at start (then dropped from the
environment the tools' commands inherit).
"""

from __future__ import annotations

import argparse
import hmac
import importlib
import json
import os
import select
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from context import BUDGET, Context, result
from workspace import ToolError

PING, LIST = "__ping__", "__list__"  # the host's readiness probe and install check, not tools
TOOLS: dict = {}  # name -> function, from the table the host passes at start (made from specs.py)


def load_tools(table: dict[str, list[str]]) -> dict:
    """{module: [tool names]} -> {name: the function of that name in tools/<module>.py}. The table comes
    from the declarations in specs.py, which need pydantic; the sandbox's tool runtime does not have it."""
    return {name: getattr(importlib.import_module(module), name) for module, names in table.items()
            for name in names}


def call(root: Path, name: str, args: dict, cancelled=lambda: False) -> dict:
    started = time.monotonic()
    if name == PING:
        return result(True, "")
    if name == LIST:
        return result(True, "\n".join(sorted(TOOLS)))
    tool = TOOLS.get(name)
    if tool is None:
        return result(False, error=f"unknown tool {name!r}; known: {', '.join(sorted(TOOLS))}",
                      failure="unknown_tool")
    try:
        out = tool(Context(root=root, cancelled=cancelled), **args)
    except ToolError as exc:
        out = result(False, error=str(exc), failure=exc.failure)
    except TypeError as exc:
        out = result(False, error=f"bad arguments for {name}: {exc}", failure="invalid_arguments")
    except Exception as exc:  # a tool bug must still come back as a result
        out = result(False, error=f"{name} crashed: {type(exc).__name__}: {exc}\n"
                     + traceback.format_exc(limit=4), failure="tool_error")
    out.setdefault("duration_s", round(time.monotonic() - started, 4))
    return out


def _peer_closed(conn: socket.socket) -> bool:
    readable, _, _ = select.select([conn], [], [], 0)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


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


def _serve_one(conn: socket.socket, root: Path, token: str) -> None:
    with conn:
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        try:
            request = json.loads(data)
            name, args = request["tool"], request.get("args") or {}
            sent = request.get("token")
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            reply = result(False, error=f"bad request: {exc}", failure="sandbox_error")
        else:
            if not isinstance(sent, str) or not hmac.compare_digest(sent, token):
                reply = result(False, error="refused: the request does not carry this run's secret",
                               failure="sandbox_error")
            else:
                reply = call(root, name, args, cancelled=lambda: _peer_closed(conn))
        try:
            conn.sendall(json.dumps(_printable(reply)).encode() + b"\n")
        except OSError:
            pass


def reap_as_init() -> None:
    """As PID 1 in a container, orphans are ours to reap, or zombies fill the PID limit. Fork: the
    parent reaps every child until the server (the child) exits; the server's own children are its own."""
    if os.getpid() != 1:
        return
    server = os.fork()
    if server == 0:
        return
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if pid == server:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def main() -> None:
    reap_as_init()
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--tools", required=True, help="JSON {module: [tool names]}")
    opts = parser.parse_args()
    TOOLS.update(load_tools(json.loads(opts.tools)))
    root = Path(opts.root).resolve()
    token = os.environ.pop("OMNI_TOOL_TOKEN", "")
    if not token:
        sys.exit("OMNI_TOOL_TOKEN is not set: the tool server needs the run's secret")
    BUDGET.begin(root)
    if os.path.exists(opts.socket):
        os.unlink(opts.socket)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)  # the socket is born 0600: no moment when another user could connect
    server.bind(opts.socket + ".tmp")
    os.umask(old_mask)
    os.rename(opts.socket + ".tmp", opts.socket)  # appears only when ready to accept
    server.listen(16)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve_one, args=(conn, root, token), daemon=True).start()


if __name__ == "__main__":
    main()
