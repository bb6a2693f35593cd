"""Per-tool-call overhead on a warm container: omni's socket tool server against `docker exec`.

Target: median <= 15 ms per no-op call (plain docker exec costs 50-70 ms here).
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    opts = parser.parse_args()
    with tiny_sandbox("bench-overhead") as box:
        cid = box.container.id
        for _ in range(10):  # warm up both paths
            box.run_tool("__ping__", {}, 10)
            subprocess.run(["docker", "exec", cid, "true"], check=True)
        ours = timed(lambda: box.run_tool("__ping__", {}, 10), opts.calls)
        base = timed(lambda: subprocess.run(["docker", "exec", cid, "true"], check=True), opts.calls)
        report("Per-call overhead, no-op tool, warm container", "omni tool server (unix socket)", ours,
               "docker exec CONTAINER true", base, "<= 15 ms")
        image = box.container.image.tags[0] if box.container.image.tags else box.container.image.id
    ours, base = startup(image, opts.starts)
    report("Start to first model request (warm image)", "omni (worktree + sandbox + first request)", ours,
           "docker run --rm IMAGE true", base, "<= 2 s")
    print(f"  p90 omni start: {ms(sorted(ours)[int(len(ours) * 0.9) - 1])}; mean {ms(statistics.mean(ours))}")


if __name__ == "__main__":
    main()
