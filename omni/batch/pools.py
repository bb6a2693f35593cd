"""Where a batch's tasks run. Both pools take the tasks to run and report each transition to `report(kind, id,
**fields)`: "running", "retry" (with the reason), "done" (with the result), "lost" (with the reason).

LocalPool: N worker threads on this machine, each running one omni process at a time. A plain pool, not Ray's local
mode: a batch on one machine needs no cluster, no extra service and no 80 MB dependency, and each task is an omni
process of its own anyway.

RayPool: each task a Ray task on the cluster at ADDRESS, using the Docker engine of the node it lands on. The
repository travels as a git bundle through Ray's object store (put once per repository and ref), and the record
comes back the same way (a tar of OUT/<id>), so the nodes share no filesystem and need no git server. Ray retries a
task whose worker or node died (max_retries), and one whose omni process was killed (WorkerLost)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from omni.batch.job import BUNDLE_BRANCH, WorkerLost, clone, finish_record, run_task
from omni.errors import UsageError

Report = Callable[..., None]
RAY_HINT = "--ray needs Ray: pip install 'omni[ray]'"


class LocalPool:
    def __init__(self, workers: int, retries: int):
        self.workers, self.retries = workers, retries
        self._procs: set = set()
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def run(self, tasks: list[dict[str, Any]], out: Path, env: dict[str, str], report: Report) -> None:
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(self._one, task, out, env, report) for task in tasks]
            try:
                for future in futures:
                    future.result()
            except KeyboardInterrupt:
                self.stop()
                pool.shutdown(wait=True, cancel_futures=True)
                raise

    def _one(self, task: dict[str, Any], out: Path, env: dict[str, str], report: Report) -> None:
        for attempt in range(1, self.retries + 2):
            if self.stopping.is_set():
                return
            report("running", task["id"], attempt=attempt)
            try:
                result = run_task(task, task["repo"], out, env, on_start=self._started)
            except WorkerLost as exc:
                if self.stopping.is_set():
                    return  # stopped by the batch itself: not lost, just not done
                if attempt <= self.retries:
                    report("retry", task["id"], reason=str(exc), attempt=attempt)
                    continue
                report("lost", task["id"], reason=f"{exc} ({attempt} attempts)")
                return
            report("done", task["id"], result=result)
            return

    def _started(self, proc) -> None:
        with self._lock:
            self._procs = {p for p in self._procs if p.poll() is None} | {proc}

    def stop(self) -> None:
        """Ctrl-C: every running omni is asked to stop (it saves its record and removes its sandbox)."""
        self.stopping.set()
        with self._lock:
            for proc in self._procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)


def _remote(task: dict[str, Any], source: bytes, env: dict[str, str]) -> tuple[dict[str, Any], bytes]:
    """On a Ray node: the task in a folder of its own, its record returned as a tar."""
    with tempfile.TemporaryDirectory(prefix="omni-ray-") as tmp:
        result = run_task(task, source, Path(tmp), {**os.environ, **env})
        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w:gz") as tar:
            tar.add(Path(tmp) / task["id"], arcname=task["id"])
        return result, packed.getvalue()


def bundle(repo: str, ref: str) -> bytes:
    """The repository at ref (and its history) as a git bundle's bytes; a URL is cloned here first."""
    with tempfile.TemporaryDirectory(prefix="omni-bundle-") as tmp:
        local = Path(tmp) / "repo"
        commit = clone(repo, ref, local)
        subprocess.run(["git", "branch", "--quiet", "-f", BUNDLE_BRANCH, commit], cwd=local, check=True)
        subprocess.run(["git", "bundle", "create", "--quiet", str(Path(tmp) / "b"), BUNDLE_BRANCH], cwd=local,
                       check=True, capture_output=True)
        return (Path(tmp) / "b").read_bytes()


class RayPool:
    def __init__(self, address: str, retries: int):
        try:
            import ray
        except ImportError:
            raise UsageError(RAY_HINT) from None
        self.ray, self.address, self.retries = ray, address, retries

    def run(self, tasks: list[dict[str, Any]], out: Path, env: dict[str, str], report: Report) -> None:
        ray = self.ray
        ray.init(address=self.address or None, log_to_driver=False, ignore_reinit_error=True)
        remote = ray.remote(max_retries=self.retries, retry_exceptions=[WorkerLost])(_remote)
        sources: dict[tuple[str, str], Any] = {}
        pending: dict[Any, dict[str, Any]] = {}
        try:
            for task in tasks:
                key = (task["repo"], task["ref"])
                if key not in sources:
                    try:
                        sources[key] = ray.put(bundle(*key))
                    except RuntimeError as exc:
                        sources[key] = exc
                if isinstance(sources[key], RuntimeError):
                    (out / task["id"]).mkdir(parents=True, exist_ok=True)
                    failed = {"id": task["id"], "repo": task["repo"], "ref": task["ref"]}
                    report("done", task["id"], result=finish_record(out / task["id"], failed, "failed",
                                                                     str(sources[key]), time.monotonic()))
                    continue
                pending[remote.remote(task, sources[key], env)] = task
                report("running", task["id"], attempt=1)
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                task = pending.pop(done[0])
                try:
                    result, packed = ray.get(done[0])
                except (ray.exceptions.RayError, WorkerLost) as exc:
                    report("lost", task["id"], reason=f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}"
                           f" (after {self.retries + 1} attempts)")
                    continue
                with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
                    tar.extractall(out, filter="data")
                report("done", task["id"], result=result)
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref)  # the worker's omni gets SIGTERM: it saves its record and removes its sandbox
            raise
        finally:
            ray.shutdown()
