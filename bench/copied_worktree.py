"""The copied worktree (a remote engine, Docker Desktop, Podman) against the bind-mounted one, side by side in one
run on a repository of about 5,000 files: the sandbox's start, a no-op tool call, one step's checkpoint (a file
changed in the container, brought back, staged and committed; and a step that changed nothing), and Ctrl-C (from the
interrupt to the call's return, the command killed).

The copy path runs on this machine's engine with --mount copy, so only the copying differs; with --remote URL
(tcp://127.0.0.1:PORT of a second engine) it runs there instead, and the TCP transport counts too.

Run: python bench/copied_worktree.py [--files 5000] [--steps 20] [--remote tcp://127.0.0.1:PORT]
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

from common import docker_sandbox, git_repo, ms, report, timed
from gen import many_files


def steps(box, n: int, change: bool) -> list[float]:
    out = []
    for i in range(n):
        if change:
            box.run_tool("shell", {"command": f"echo 'x = {i}' > pkg3/sub3/f{i}.py", "timeout": 10}, 20)
        out += timed(lambda: box.workspace_obj.checkpoint("bench"), 1)
    return out


def interrupt(box) -> float:
    """Seconds from a real SIGINT to the call's return (the in-band cancel kills `sleep 600`)."""
    fired = []
    timer = threading.Timer(0.5, lambda: (fired.append(time.perf_counter()), os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        box.run_tool("shell", {"command": "sleep 600", "timeout": 700}, 700)
    except KeyboardInterrupt:
        pass
    return time.perf_counter() - fired[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--remote", default="", help="a second engine's tcp:// address for the copy path")
    opts = parser.parse_args()
    client = None
    if opts.remote:
        import docker

        client = docker.DockerClient(base_url=opts.remote)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        many_files(repo, opts.files)
        git_repo(repo)
        size = sum(f.stat().st_size for f in repo.rglob("*") if f.is_file())
        print(f"repository: {opts.files} files, {size / 2**20:.1f} MiB with its .git")
        found: dict[str, dict[str, list[float]]] = {"copy": {}, "bind": {}}
        for round_ in range(2):  # A B A B: drift in the machine's speed hits both alike
            for kind in ("copy", "bind"):
                with docker_sandbox(repo, f"bench-{kind}-{round_}", mount=kind,
                                    client=client if kind == "copy" else None) as box:
                    got = found[kind]
                    got.setdefault("start", []).append(box.start_s)
                    for _ in range(10):
                        box.run_tool("__ping__", {}, 10)
                    got.setdefault("call", []).extend(timed(lambda: box.run_tool("__ping__", {}, 10), opts.calls))
                    got.setdefault("step", []).extend(steps(box, opts.steps, True))
                    got.setdefault("idle", []).extend(steps(box, opts.steps, False))
                    got.setdefault("cancel", []).append(interrupt(box))
    where = f"copied ({'remote ' + opts.remote if opts.remote else 'this engine, --mount copy'})"
    for key, title, target in (
            ("start", "Sandbox start (container, worktree in, tool server ready)", ""),
            ("call", "Per-call overhead, no-op tool", "<= 1 ms"),
            ("step", "One step's checkpoint, one file changed in the container", ""),
            ("idle", "One step's checkpoint, nothing changed", ""),
            ("cancel", "Ctrl-C to the call's return (sleep 600 killed)", "<= 1 s")):
        report(title, where, found["copy"][key], "bind-mounted (this engine)", found["bind"][key], target)
    print(f"\n  slowest Ctrl-C: copied {ms(max(found['copy']['cancel']))}, bound {ms(max(found['bind']['cancel']))}")


if __name__ == "__main__":
    main()
