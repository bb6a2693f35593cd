"""Per-tool-call overhead on a warm container: omni's tool server on its attached exec stream against
`docker exec`. Target: at most 1 ms per no-op call (plain docker exec costs 50-70 ms here).

Also the price of holding the container while host git stages a step (docker pause and unpause around
`git add -A` and the commit): a checkpoint held against the same checkpoint unheld.
Also: time from `omni` start to its first model request (warm image), against a plain
`docker run --rm IMAGE true` measured in the same run. Target <= 2 s.

Run: python bench/tool_overhead.py [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from common import git_repo, ms, report, timed, tiny_sandbox


def startup(image: str, runs: int) -> tuple[list[float], list[float]]:
    from fake_server import FakeOpenAI

    ours, base = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            repo.mkdir()
            (repo / "a.py").write_text("x = 1\n")
            git_repo(repo)
            with FakeOpenAI([{"status": 401, "error": "stop here"}]) as fake:
                start = time.perf_counter()
                proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "--base-url", fake.base_url, "--model",
                                         "m", "--tool-mode", "native", "--yes", "bench"], cwd=repo,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                while not fake.requests:
                    time.sleep(0.005)
                ours.append(time.perf_counter() - start)
                proc.wait()
        base += timed(lambda: subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"],
                                             check=True), 1)
    return ours, base


@contextmanager
def nullcontext_hold(workspace):
    """The workspace's git without the sandbox's hold, as before the race was closed."""
    hold, workspace.hold = workspace.hold, nullcontext
    try:
        yield
    finally:
        workspace.hold = hold


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--checkpoints", type=int, default=30)
    opts = parser.parse_args()
    with tiny_sandbox("bench-overhead") as box:
        cid = box.container.id
        for _ in range(10):  # warm up both paths
            box.run_tool("__ping__", {}, 10)
            subprocess.run(["docker", "exec", cid, "true"], check=True)
        ours = timed(lambda: box.run_tool("__ping__", {}, 10), opts.calls)
        base = timed(lambda: subprocess.run(["docker", "exec", cid, "true"], check=True), opts.calls)
        report("Per-call overhead, no-op tool, warm container", "omni tool server (exec stream)", ours,
               "docker exec CONTAINER true", base, "<= 1 ms")
        workspace, held = box.workspace_obj, []
        unheld = []
        for n in range(opts.checkpoints):  # alternate, so drift in the machine's speed hits both alike
            (workspace.path / "a.py").write_text(f"x = {n}\n")
            held += timed(lambda: workspace.checkpoint("held"), 1)
            (workspace.path / "a.py").write_text(f"x = -{n}\n")
            with nullcontext_hold(workspace):
                unheld += timed(lambda: workspace.checkpoint("unheld"), 1)
        report("One step's checkpoint (git add -A + commit)", "container held (docker pause)", held,
               "not held (the race open)", unheld)
        image = box.container.image.tags[0] if box.container.image.tags else box.container.image.id
    ours, base = startup(image, opts.starts)
    report("Start to first model request (warm image)", "omni (worktree + sandbox + first request)", ours,
           "docker run --rm IMAGE true", base, "<= 2 s")
    print(f"  p90 omni start: {ms(sorted(ours)[int(len(ours) * 0.9) - 1])}; mean {ms(statistics.mean(ours))}")


if __name__ == "__main__":
    main()
