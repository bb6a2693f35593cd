"""Helpers shared by the benchmark scripts: timing, medians, a disposable sandbox."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the scripted OpenAI-compatible server lives with the tests


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 0.001 else f"{seconds * 1000:.1f} ms"


def report(title: str, ours_label: str, ours: list[float], base_label: str, base: list[float],
           target: str = "") -> None:
    """Print both medians side by side and the ratio ours/baseline."""
    mo, mb = statistics.median(ours), statistics.median(base)
    print(f"\n{title}")
    print(f"  {ours_label:<44} median {ms(mo):>10}  (n={len(ours)})")
    print(f"  {base_label:<44} median {ms(mb):>10}  (n={len(base)})")
    print(f"  ratio ours/baseline: {mo / mb:.3f}" + (f"   target: {target}" if target else ""))


def git_repo(path: Path) -> Path:
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", *ident, "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", *ident, "commit", "-qm", "bench", "--allow-empty"], cwd=path, check=True)
    return path


@contextmanager
def docker_sandbox(repo: Path, run_id: str, project_env: bool = False, mount: str = "auto", client=None):
    """A sandbox over a worktree of repo (box.workspace_obj); box.start_s is how long the sandbox took to start."""
    from omni.box.sandbox import DockerSandbox, SandboxConfig
    from omni.box.workspace import Workspace, find_repo

    workspace = Workspace(find_repo(repo), run_id)
    workspace.create()
    started = time.perf_counter()
    box = DockerSandbox(run_id, workspace.path, repo / ".git", SandboxConfig(project_env=project_env, mount=mount),
                        client=client)
    box.start_s = time.perf_counter() - started
    box.workspace_obj, workspace.hold = workspace, box.hold
    try:
        yield box
    finally:
        box.close()
        workspace.remove()


@contextmanager
def tiny_sandbox(run_id: str):
    """A sandbox over a one-file repo in a temp folder: for measuring the tool channel itself."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "a.py").write_text("x = 1\n")
        git_repo(repo)
        with docker_sandbox(repo, run_id) as box:
            yield box
