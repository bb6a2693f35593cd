"""The channel to the tool server: today's Unix socket (private folder, per-run secret) against one
long-lived attached stream (`docker exec -i` stdio through the docker SDK), the alternative issue 8
asks to measure before choosing. Both carry the same JSON line per request; the stream's far end is a
minimal line echo, so it measures the transport only (a lower bound for that design).

Run: python bench/ipc_channel.py [--calls 500]
"""

from __future__ import annotations

import argparse
import json
import struct

from common import report, timed, tiny_sandbox

ECHO = ("import sys, json\n"
        "for line in sys.stdin:\n"
        "    sys.stdout.write(json.dumps({'success': True, 'output': '', 'error': ''}) + '\\n')\n"
        "    sys.stdout.flush()\n")


class AttachedStream:
    """JSON lines over the stdio of one `docker exec -i` (no tty: replies arrive in 8-byte framed chunks)."""

    def __init__(self, api, container_id: str):
        exec_id = api.exec_create(container_id, ["/opt/omni-tools/bin/python", "-u", "-c", ECHO], stdin=True,
                                  stdout=True, stderr=False, tty=False)["Id"]
        self.sock = api.exec_start(exec_id, socket=True)._sock
        self.buffer = b""

    def _frame(self) -> bytes:
        header = self._exactly(8)
        _, size = struct.unpack(">BxxxL", header)
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the stream closed")
            data += chunk
        return data

    def call(self, name: str, args: dict) -> dict:
        self.sock.sendall(json.dumps({"tool": name, "args": args}).encode() + b"\n")
        while b"\n" not in self.buffer:
            self.buffer += self._frame()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        self.sock.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    opts = parser.parse_args()
    with tiny_sandbox("bench-ipc") as box:
        stream = AttachedStream(box.client.api, box.container.id)
        try:
            for _ in range(20):  # warm up both
                box.run_tool("__ping__", {}, 10)
                assert stream.call("__ping__", {})["success"]
            ours = timed(lambda: box.run_tool("__ping__", {}, 10), opts.calls)
            other = timed(lambda: stream.call("__ping__", {}), opts.calls)
        finally:
            stream.close()
    report("Per-call round trip, no-op request, warm container", "unix socket (0700 folder + secret)", ours,
           "attached docker exec -i stream (echo only)", other)


if __name__ == "__main__":
    main()
