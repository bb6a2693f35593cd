"""One task of a batch, wherever it runs (a worker of this machine's pool, or a Ray task on any node): a fresh
clone (from a path, a URL, or a git bundle that came through Ray's object store), one whole omni run in it with
--yes (applied to the clone only; the source is never touched), and its record in OUT/<id>/: the run's summary,
events and diff, the run's branch as a git bundle (`git fetch OUT/<id>/branch.bundle` brings it into any clone),
omni's own output, and result.json, written last, which says the task is done.

A worker that dies (a signal, a lost node) is WorkerLost: the batch retries it. Anything else that stops a task
(a repository that cannot be cloned, a bad setting) is a failed task with its reason."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RECORD_FILES = ("summary.json", "events.jsonl", "diff.patch")
BUNDLE_BRANCH = "omni-batch-start"  # the one branch of a repository sent as a bundle: the task's ref, resolved


class WorkerLost(Exception):
    """The omni process of a task was killed from outside (not by the batch): the task is to be tried again."""


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)


def _die_with_parent() -> None:
    """In the omni child: SIGTERM when the worker that started it dies (a Ray worker killed with -9), so its
    sandbox is removed and nothing runs on without a task."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def clone(source: str | bytes, ref: str, into: Path) -> str:
    """The repository at ref in a folder of its own; its commit. source: a path or URL, or a bundle's bytes."""
    if isinstance(source, bytes):
        bundle = into.parent / "source.bundle"
        bundle.write_bytes(source)
        source, ref = str(bundle), f"origin/{BUNDLE_BRANCH}"
    done = _git("clone", "--quiet", "--no-checkout", source, str(into))
    if done.returncode != 0:
        raise RuntimeError(f"cannot clone {source}: {done.stderr.strip()[-400:]}")
    for name in ("user.name", "user.email"):  # a run's commits need an identity where the node has none
        if not _git("config", name, cwd=into).stdout.strip():
            _git("config", name, "omni batch" if name == "user.name" else "omni@localhost", cwd=into)
    checkout = _git("checkout", "--quiet", "--detach", ref, cwd=into)
    if checkout.returncode != 0:
        raise RuntimeError(f"cannot check out {ref!r}: {checkout.stderr.strip()[-400:]}")
    return _git("rev-parse", "HEAD", cwd=into).stdout.strip()


def task_env(settings: dict[str, Any], base: dict[str, str]) -> dict[str, str]:
    """omni's environment for one task: its settings as OMNI_<KEY> (omni's environment layer)."""
    from omni.settings import ENV_NAMES

    env = dict(base)
    for key, value in settings.items():
        name = ENV_NAMES.get(key, f"OMNI_{key.upper()}")
        env[name] = json.dumps(value) if isinstance(value, (list, dict)) else str(value).lower() \
            if isinstance(value, bool) else str(value)
    return env


def run_task(task: dict[str, Any], source: str | bytes, out: Path, env: dict[str, str],
             on_start=lambda proc: None) -> dict[str, Any]:
    """Run one task; its record in out/<id>/ (result.json last). Raises WorkerLost when omni was killed.
    on_start(proc) is told omni's process (the local pool stops it on Ctrl-C)."""
    folder = out / task["id"]
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "worker.pid").write_text(str(os.getpid()))
    started = time.monotonic()
    result: dict[str, Any] = {"id": task["id"], "repo": task["repo"], "ref": task["ref"], "host": os.uname().nodename}
    with tempfile.TemporaryDirectory(prefix="omni-batch-") as tmp:
        repo = Path(tmp) / "repo"
        try:
            result["commit"] = clone(source, task["ref"], repo)
        except RuntimeError as exc:
            return finish_record(folder, result, "failed", str(exc), started)
        goal = Path(tmp) / "goal.txt"
        goal.write_text(task["goal"])
        with open(folder / "omni.log", "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "--yes", "--goal-file", str(goal)], cwd=repo,
                                    env=task_env(task["settings"], env), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
                                    start_new_session=True)  # a Ctrl-C reaches the batch, which stops each run
            (folder / "omni.pid").write_text(str(proc.pid))
            on_start(proc)
            try:
                code = proc.wait()
            except BaseException:  # the batch stops (Ctrl-C, a cancelled Ray task): omni saves its record and exits
                proc.send_signal(signal.SIGTERM)
                proc.wait()
                raise
        if code < 0:
            raise WorkerLost(f"omni was killed by signal {-code}")
        result["exit_code"] = code
        summary = _keep_record(repo, folder, result["commit"])
        usage = summary.get("usage") or {}
        result.update(run_id=summary.get("run_id", ""), steps=summary.get("steps", 0),
                      tokens=usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
                      cost=usage.get("cost"), cost_kind=usage.get("cost_kind", ""),
                      verified=(summary.get("check") or {}).get("holds"))
        status = summary.get("status") or ("failed" if code else "finished")
        reason = summary.get("message") or ("" if summary else _last_words(folder / "omni.log"))
        return finish_record(folder, result, status, reason, started)


def _keep_record(repo: Path, folder: Path, base: str) -> dict[str, Any]:
    runs = sorted((repo / ".omni" / "runs").glob("*")) if (repo / ".omni" / "runs").is_dir() else []
    if not runs:
        return {}
    for name in RECORD_FILES:
        if (runs[-1] / name).is_file():
            shutil.copy2(runs[-1] / name, folder / name)
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").is_file() else {}
    branch = summary.get("branch") or f"omni/{runs[-1].name}"
    if _git("rev-parse", "--verify", "--quiet", branch, cwd=repo).returncode == 0:
        _git("bundle", "create", str(folder / "branch.bundle"), f"{base}..{branch}", cwd=repo)
    return summary


def _last_words(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log.is_file() else []
    return lines[-1][-400:] if lines else "omni said nothing"


def finish_record(folder: Path, result: dict[str, Any], status: str, reason: str, started: float) -> dict[str, Any]:
    result.update(status=status, reason=reason, wall_s=round(time.monotonic() - started, 1))
    for name in ("worker.pid", "omni.pid"):  # while it runs: what a test or an operator may stop
        (folder / name).unlink(missing_ok=True)
    tmp = folder / "result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(folder / "result.json")
    return result
