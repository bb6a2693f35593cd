"""Search across a generated 50,000-file repo: omni's search tool in the sandbox against GNU grep -rn
on the host, measured in the same run. Target: <= 1 s median.

Run: python bench/grep_50k.py [--files 50000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from common import docker_sandbox, git_repo, report, timed
from gen import many_files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        many_files(repo, opts.files)
        git_repo(repo)
        with docker_sandbox(repo, "bench-grep") as box:
            args = {"pattern": r"NEEDLE \d+", "max_results": 50}
            first = box.run_tool("search", args, 120)
            assert first.success and first.details["total"] == opts.files // 100, first
            ours = timed(lambda: box.run_tool("search", args, 120), opts.repeat)
            base = timed(lambda: subprocess.run(["grep", "-rnE", r"NEEDLE [0-9]+", "--exclude-dir=.git", "."],
                                                cwd=box.workspace, capture_output=True, check=True), opts.repeat)
        report(f"Regex search over {opts.files} files ({opts.files // 100} hits)",
               "omni search tool (ripgrep, in the sandbox)", ours, "grep -rnE on the host", base, "<= 1 s")


if __name__ == "__main__":
    main()
