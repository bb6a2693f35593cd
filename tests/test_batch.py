"""omni batch: many runs from a task file, on this machine's pool and on a two-node Ray cluster started here with
`ray start`, with a scripted model that answers each run from a script of its own (a marker in its goal)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CALC, clean_env, git, make_repo

pytestmark = pytest.mark.docker

FLAGS = ["--set", "model=fake-model", "--set", "tool_mode=native", "--set", "review=false", "--set", "samples=1",
         "--set", "reproduce=false", "--set", "finish_on_check=false", "--set", "opening_repair=false"]
PLAN = {"text": "1. Fix add\n2. Finish"}
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
FINISH = {"tool": "finish", "args": {"summary": "add fixed"}}


def script(fake, key: str) -> None:
    fake.add_for(key, PLAN, FIX, FINISH, FINISH)


def killed_then_scripted(fake, key: str) -> None:
    """A run that is killed in its slow first step, then the whole script again for the run that tries again."""
    fake.add_for(key, PLAN, {"tool": "shell", "args": {"command": "sleep 30", "timeout": 60}})
    script(fake, key)


def tasks_file(tmp_path: Path, keys: list[str], missing: bool = False) -> Path:
    lines = []
    for key in keys:
        repo = make_repo(tmp_path / f"repo-{key}", CALC)
        lines.append(json.dumps({"id": key, "repo": str(repo), "goal": f"<<{key}>> fix add in calc.py"}))
    if missing:
        lines.append(json.dumps({"id": "nowhere", "repo": str(tmp_path / "no-such-repo"), "goal": "<<nowhere>> x"}))
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def batch(tasks: Path, out: Path, fake, *args: str, env=None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out),
                           "--set", f"base_url={fake.base_url}", *FLAGS, *args], capture_output=True, text=True,
                          timeout=timeout, env=env or clean_env())


def results(out: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (out / "summary.jsonl").read_text().splitlines())}


def kill_when_running(fake, key: str, pid_file, timeout: float = 120) -> int:
    """Wait until the run marked KEY is in its slow step, then kill -9 the process named in pid_file()."""
    deadline = time.monotonic() + timeout
    while fake.served_for(key) < 2 or not pid_file():
        assert time.monotonic() < deadline, f"{key} never reached its slow step"
        time.sleep(0.2)
    pid = int(pid_file().read_text())
    os.kill(pid, signal.SIGKILL)
    return pid


def test_a_local_batch_keeps_each_record_retries_a_killed_run_and_skips_what_is_done(tmp_path, fake, docker_engine):
    keys = ["t1", "t2", "t3", "t4"]
    fake.add_for("t1", {"status": 429, "headers": {"Retry-After": "1"}, "error": "slow down"})  # through the relay
    for key in keys:
        killed_then_scripted(fake, key) if key == "t2" else script(fake, key)
    tasks, out = tasks_file(tmp_path, keys, missing=True), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out), "--workers",
                             "2", "--max-requests", "1", "--set", f"base_url={fake.base_url}", *FLAGS],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    pid_file = out / "t2" / "omni.pid"
    killed = kill_when_running(fake, "<<t2>>", lambda: pid_file if pid_file.exists() else None)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stdout + stderr  # the missing repository fails the batch, nothing else does
    found = results(out)
    assert {k: found[k]["status"] for k in keys} == dict.fromkeys(keys, "finished"), found
    assert found["nowhere"]["status"] == "failed" and "cannot clone" in found["nowhere"]["reason"]
    assert "trying again" in stdout and f"signal {signal.SIGKILL}" in stdout
    assert fake.most_in_flight == 1  # --max-requests 1 over two workers
    assert "429" in (out / "t1" / "omni.log").read_text()  # waited and asked again, as a run alone would
    for key in keys:
        record = out / key
        assert json.loads((record / "summary.json").read_text())["check"]["holds"] is True
        assert b"a + b" in (record / "diff.patch").read_bytes()
        assert git(tmp_path / f"repo-{key}", "status", "--porcelain") == ""  # the source is never touched
        fetched = git(tmp_path / f"repo-{key}", "fetch", str(record / "branch.bundle"), "refs/heads/*:refs/batch/*")
        assert fetched == "" and "a + b" in git(tmp_path / f"repo-{key}", "show", "--format=", "refs/batch/omni/"
                                                + found[key]["run_id"])
    assert not os.path.exists(f"/proc/{killed}")
    assert "| **all 5** | 4 finished |" in (out / "summary.md").read_text()
    again = batch(tasks, out, fake, "--json")
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert [e["event"] for e in events] == ["skipped"] * 5 and again.returncode == 1


def test_a_bad_task_file_says_every_problem_and_exits_2(tmp_path, fake):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("settings: {max_step: 3}\ntasks:\n  - repo: a\n  - repo: b\n    goal: x\n"
                     "    settings: {yes_all: true}\n  - {id: same, repo: c, goal: y}\n"
                     "  - {id: same, repo: d, goal: z}\n")
    done = batch(tasks, tmp_path / "out", fake)
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    for said in ("did you mean 'max_steps'", "task 1: give goal or goal_file", "task 2: yes_all is the batch's",
                 "the id 'same' is given to 2 tasks"):
        assert said in done.stderr, done.stderr


def test_without_ray_the_ray_flag_names_the_extra(tmp_path, fake):
    tasks = tasks_file(tmp_path, ["only"])
    env = clean_env(PYTHONPATH=str(tmp_path / "no-ray"))
    blocker = tmp_path / "no-ray" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('ray is not installed here')\n")
    done = batch(tasks, tmp_path / "out", fake, "--ray", env=env)
    assert done.returncode == 2 and "pip install 'omni[ray]'" in done.stderr


@pytest.fixture
def ray_cluster(tmp_path):
    """A head and a second node on this machine, each started with `ray start` and resources of its own."""
    if not shutil.which("ray"):
        if os.environ.get("OMNI_REQUIRE_RAY") == "1":
            pytest.fail("OMNI_REQUIRE_RAY=1 but Ray is not installed (pip install 'omni[ray]')")
        pytest.skip("Ray is not installed (pip install 'omni[ray]')")
    port = 6390 + os.getpid() % 200
    common = ["--num-cpus", "2", "--object-store-memory", str(150 * 2**20), "--disable-usage-stats"]
    env = clean_env()
    subprocess.run(["ray", "start", "--head", "--port", str(port), "--include-dashboard=false",
                    "--resources", '{"head_node": 1}', *common], check=True, capture_output=True, env=env, timeout=180)
    try:
        subprocess.run(["ray", "start", "--address", f"127.0.0.1:{port}", "--resources", '{"second_node": 1}',
                        *common], check=True, capture_output=True, env=env, timeout=180)
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run(["ray", "stop", "--force"], capture_output=True, env=env, timeout=120)


def test_a_ray_batch_on_two_nodes_retries_a_killed_worker(tmp_path, fake, docker_engine, ray_cluster):
    keys = [f"r{n}-{os.getpid()}" for n in range(1, 9)]  # the ids name the nodes' temp folders: this run's own
    victim = keys[2]
    for key in keys:
        killed_then_scripted(fake, key) if key == victim else script(fake, key)
    tasks, out = tasks_file(tmp_path, keys, missing=True), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out), "--ray",
                             ray_cluster, "--set", f"base_url={fake.base_url}", *FLAGS], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    kill_when_running(fake, f"<<{victim}>>", lambda: next(iter(Path("/tmp").glob(f"omni-ray-*/{victim}/worker.pid")),
                                                          None))
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 1, stdout + stderr
    found = results(out)
    assert {k: found[k]["status"] for k in keys} == dict.fromkeys(keys, "finished"), found
    assert found["nowhere"]["status"] == "failed" and "cannot clone" in found["nowhere"]["reason"]
    assert fake.served_for(f"<<{victim}>>") >= 2 + 3  # tried again from the start (plan, fix, finish) afresh
    for key in keys:
        assert (out / key / "branch.bundle").is_file() and (out / key / "events.jsonl").is_file()
    again = batch(tasks, out, fake, "--ray", ray_cluster, "--json")
    assert [json.loads(line)["event"] for line in again.stdout.splitlines()] == ["skipped"] * 9


def test_ctrl_c_stops_the_batch_and_keeps_what_finished(tmp_path, fake, docker_engine):
    script(fake, "c1")
    for key in ("c2", "c3"):
        killed_then_scripted(fake, key)  # slow at first; the second batch finds their scripts
    tasks, out = tasks_file(tmp_path, ["c1", "c2", "c3"]), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out), "--workers",
                             "3", "--set", f"base_url={fake.base_url}", *FLAGS], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    deadline = time.monotonic() + 180
    while not ((out / "c1" / "result.json").exists() and fake.served_for("<<c2>>") >= 2
               and fake.served_for("<<c3>>") >= 2):
        assert time.monotonic() < deadline and proc.poll() is None, "the batch never got going"
        time.sleep(0.2)
    pids = [int((out / key / "omni.pid").read_text()) for key in ("c2", "c3")]
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    assert "finished records are kept" in stdout
    assert json.loads((out / "c1" / "result.json").read_text())["status"] == "finished"
    assert not any((out / key / "result.json").exists() and json.loads((out / key / "result.json").read_text())
                   ["status"] not in ("interrupted",) for key in ("c2", "c3"))
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)  # every run it started has stopped
    assert not docker_engine.containers.list(all=True, filters={"label": "org.omni.pid=" + str(pids[0])})
    again = batch(tasks, out, fake, "--json")
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert [e["event"] for e in events if e["id"] == "c1"] == ["skipped"]
    assert {e["id"]: e["result"]["status"] for e in events if e["event"] == "done"} == {"c2": "finished",
                                                                                       "c3": "finished"}
    assert again.returncode == 0


def test_a_run_killed_past_its_retries_is_lost_with_the_reason_and_runs_again(tmp_path, fake, docker_engine):
    killed_then_scripted(fake, "l1")
    tasks, out = tasks_file(tmp_path, ["l1"]), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "batch", str(tasks), "--out", str(out), "--retries",
                             "0", "--set", f"base_url={fake.base_url}", *FLAGS], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    pid_file = out / "l1" / "omni.pid"
    kill_when_running(fake, "<<l1>>", lambda: pid_file if pid_file.exists() else None)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stdout + stderr
    lost = results(out)["l1"]
    assert lost["status"] == "lost" and f"signal {signal.SIGKILL}" in lost["reason"] and "1 attempts" in lost["reason"]
    assert "l1 lost" in stdout
    again = batch(tasks, out, fake, "--json")  # a lost task is not done: it runs again
    assert [json.loads(line)["event"] for line in again.stdout.splitlines()] == ["running", "done"]
    assert again.returncode == 0 and results(out)["l1"]["status"] == "finished"
