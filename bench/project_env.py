"""Project environment setup: the per-repo dependency layer built cold, then found in the cache,
against a plain `python -m venv && pip install` of the same requirements on the host, in one run.

Run: python bench/project_env.py [--requirement six==1.16.0 --requirement iniconfig==2.0.0]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ms

from omni.box import images
from omni.box.engine import docker_client


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requirement", action="append", default=None)
    opts = parser.parse_args()
    reqs = opts.requirement or ["six==1.16.0", "iniconfig==2.0.0"]
    client = docker_client()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "requirements.txt").write_text("\n".join(reqs) + "\n")
        tag = "omni-project:" + __import__("hashlib").sha256(
            ("\n".join(sorted(reqs)) + images.SANDBOX_TAG).encode()).hexdigest()[:16]
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
        start = time.perf_counter()
        built, _ = images.project_image(client, repo, images.SANDBOX_TAG)
        cold = time.perf_counter() - start
        assert built == tag, (built, tag)
        start = time.perf_counter()
        images.project_image(client, repo, images.SANDBOX_TAG)
        cached = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(repo / "venv")], check=True)
        subprocess.run([str(repo / "venv" / "bin" / "pip"), "install", "-q", "--no-cache-dir", "pytest", *reqs],
                       check=True)
        host = time.perf_counter() - start
    print(f"\nProject environment for {', '.join(reqs)} (+ pytest)")
    print(f"  omni layer, cold build                       {ms(cold):>12}")
    print(f"  omni layer, cached (dependency hash hit)     {ms(cached):>12}")
    print(f"  baseline: venv + pip install on the host     {ms(host):>12}")
    print(f"  ratio cold/baseline: {cold / host:.2f}   ratio cached/baseline: {cached / host:.4f}")


if __name__ == "__main__":
    main()
