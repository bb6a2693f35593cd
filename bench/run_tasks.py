"""SWE-bench-style tasks on real PyPI packages: prepare a repo per task (the upstream sdist with our bug applied,
one commit), run an agent command under a wall-clock limit, grade in a copy with the original test
files restored and the hidden tests added. Reports resolved, steps, tokens and wall time per task.

  python bench/run_tasks.py --agents omni,mini,none --base-url http://127.0.0.1:8080/v1 \
      --model qwen2.5-coder-1.5b --limit-s 300 [--tasks parse-negative-int,...] [--check] [--rescore FILE]

Agents are command templates (AGENTS below); add one with --agent NAME='command with {goal_file} …'.
--check verifies every task itself: its fail_to_pass tests fail with the bug and pass upstream.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from failures import bug_definitions, classify
from server_speed import server_speed

HERE = Path(__file__).resolve().parent
TASKS = HERE / "tasks"
HALVES = ("tune", "check")  # the benchmark, fixed 2026-11-24: tuned on, and reported apart (bench/README.md)
DEV = "dev"  # tasks added later to develop on: their records may be read; no figure of either half counts them
CACHE = Path(os.environ.get("OMNI_BENCH_CACHE", Path.home() / ".cache" / "omni-bench"))
IDENT = ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]

AGENTS = {
    "omni": "omni --yes --no-review --tools core --max-tokens 1024 --max-steps {max_steps} --base-url {base_url} "
            "--model {model} --goal-file {goal_file}",
    "mini": "mini --yolo --exit-immediately --cost-limit 0 --model openai/{model} --config mini.yaml "
            "--config model.model_kwargs.api_base={base_url} --config model.cost_tracking=ignore_errors "
            "--output {traj} --task \"$(cat {goal_file})\"",
    "none": "true",
}
# Before the timed run, untimed: what a user's earlier runs in the repository would have left (omni's project layer
# of the repo's declared dependencies, built once and cached by them).
PREPARE = {"omni": "omni sandbox project"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def sdist(package: str, version: str) -> Path:
    folder = CACHE / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = [p for p in folder.glob("*.tar.gz") if p.name.lower().replace("_", "-").startswith(
        f"{package.lower().replace('_', '-')}-{version}")]
    if found:
        return found[0]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d",
                    str(folder), f"{package}=={version}"], check=True)
    return sdist(package, version)


def selected(folder: Path, wanted: list[str], half: str | None) -> list[dict]:
    """The tasks to run, in order of name: those named (--tasks), of one half or the dev tasks (--half), else the
    benchmark's two halves. The dev tasks run only when named or asked for: they are no part of either half."""
    tasks = [load_task(d) for d in sorted(folder.iterdir()) if (d / "task.json").exists()
             and (not wanted or d.name in wanted)]
    return [t for t in tasks if t["half"] == half or not half and (wanted or t["half"] in HALVES)]


def load_task(task_dir: Path) -> dict:
    task = json.loads((task_dir / "task.json").read_text())
    task["id"] = task_dir.name
    task["dir"] = task_dir
    return task


def prepare(task: dict, where: Path, bug: bool = True) -> Path:
    """A git repo of the task's package as an agent gets it: the upstream sdist with the bug patch applied, in one
    commit. Its history holds no version without the bug: with the bug as a commit of its own on top of upstream, an
    agent with a shell reads the fix from `git diff HEAD~1`. bug=False: the pristine sdist (--check, the reach
    scripts)."""
    with tarfile.open(sdist(task["package"], task["version"])) as archive:
        archive.extractall(where, filter="data")
    top = next(p for p in where.iterdir() if p.is_dir())
    repo = where / "repo"
    top.rename(repo)
    for junk in repo.rglob("*.pyc"):
        junk.unlink()
    git(repo, "init", "-q", "-b", "main")
    if bug:
        subprocess.run(["git", "apply", str(task["dir"] / "bug.patch")], cwd=repo, check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{task['package']} {task['version']}")
    return repo


def pass_to_pass(task: dict) -> list[str]:
    """The keep-passing selection, minus the tests that are meant to change (they may share a file)."""
    deselect = [arg for test in task["fail_to_pass"] if "::" in test for arg in ("--deselect", test)]
    return task.get("pass_to_pass", []) + deselect if task.get("pass_to_pass") else []


def pytest_ids(repo: Path, ids: list[str], timeout: float = 300, extra: list[str] = ()) -> tuple[bool, str]:
    """extra: a task's own pytest arguments (`-o addopts=` where the project's addopts demand coverage of the
    whole suite, which a subset never reaches)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (repo / "src", repo) if p.exists()),
               PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *extra, *ids],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return done.returncode == 0, done.stdout[-2000:]


_INSTALLED: set[str] = set()  # requirements installed by this process
_RESOLVED: set[str] = set()  # task packages whose own dependencies were looked up


def ensure_test_requires(task: dict) -> None:
    """The grader's own test dependencies (pytest plugins, helper packages) and the package's own (the grader
    imports the task's copy of the package from PYTHONPATH, and what it imports from here), installed once. Without
    the package's, a fresh venv graded a right fix wrong, with an empty log (arrow without python-dateutil)."""
    task_requires = [] if task["package"] in _RESOLVED else runtime_requires(task["package"], task["version"])
    _RESOLVED.add(task["package"])
    missing = [r for r in [*task.get("test_requires", []), *task_requires] if r not in _INSTALLED]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
        _INSTALLED.update(missing)


def runtime_requires(package: str, version: str) -> list[str]:
    """The names of what pip installs with package==version, less the package itself (pip's dry-run report); the
    versions already here are kept when they do."""
    with tempfile.TemporaryDirectory(prefix="requires-") as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report",
                        str(report), f"{package}=={version}"], check=True)
        items = json.loads(report.read_text())["install"]
    names = [item["metadata"]["name"] for item in items]
    return [name for name in names if _canonical(name) != _canonical(package)]


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def grade(task: dict, repo: Path) -> dict:
    """In a copy: the task's test files as they were before the agent, plus the hidden tests."""
    ensure_test_requires(task)
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".omni"))
        tracked_tests = [f for f in git(copy, "ls-files", "--", "tests", "test*").split("\n") if f]
        if tracked_tests:
            git(copy, "checkout", "HEAD", "--", *tracked_tests)  # undo any edit to existing tests
        hidden = task["dir"] / "hidden"
        if hidden.is_dir():
            shutil.copytree(hidden, copy, dirs_exist_ok=True)
        extra = task.get("pytest_args", [])
        f2p, f2p_log = pytest_ids(copy, task["fail_to_pass"], extra=extra)
        p2p, p2p_log = pytest_ids(copy, pass_to_pass(task), extra=extra) if task.get("pass_to_pass") else (True, "")
    return {"resolved": f2p and p2p, "fail_to_pass": f2p, "pass_to_pass": p2p,
            "log": (f2p_log if not f2p else p2p_log)[-600:]}


def omni_metrics(events_file: Path) -> dict:
    """From the events, not summary.json, so a killed run still counts what it used."""
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    usage = next((e["total"] for e in reversed(events) if e["kind"] == "usage"), {})
    status = next((e["status"] for e in reversed(events) if e["kind"] == "status"), "killed")
    return {"steps": sum(e["kind"] == "step" for e in events), "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0), "status": status,
            "cached_tokens": usage.get("cached_tokens", 0), "first_action_s": _first_action_s(events)}


def _first_action_s(events: list[dict]) -> float | None:
    """Seconds from the run's first event to its first action (None: no action)."""
    from datetime import datetime

    first = next((e for e in events if e.get("time")), None)
    action = next((e for e in events if e["kind"] == "action" and e.get("time")), None)
    if not first or not action:
        return None
    start, then = (datetime.fromisoformat(e["time"]) for e in (first, action))
    return round((then - start).total_seconds(), 1)


def mini_metrics(traj: Path) -> dict:
    data = json.loads(traj.read_text())
    # Every model response counts, including those mini stores on a format-error message (role user).
    usage = [m.get("extra", {}).get("response", {}).get("usage") or {} for m in data.get("messages", [])]
    return {"steps": data.get("info", {}).get("model_stats", {}).get("api_calls", 0),
            "prompt_tokens": sum(u.get("prompt_tokens", 0) or 0 for u in usage),
            "completion_tokens": sum(u.get("completion_tokens", 0) or 0 for u in usage),
            "status": data.get("info", {}).get("exit_status", "")}


def agent_metrics(agent: str, events: list[Path], traj: Path) -> dict:
    if agent == "omni" and events:
        return omni_metrics(events[-1])
    if agent == "mini" and traj.exists():
        return mini_metrics(traj)
    return {"steps": 0, "prompt_tokens": 0, "completion_tokens": 0, "status": ""}


def run_agent(agent: str, template: str, task: dict, repo: Path, opts, work: Path, run: int = 1) -> dict:
    goal_file = work / "goal.txt"
    goal_file.write_text(task["goal"])
    traj = work / "traj.json"
    command = template.format(goal_file=goal_file, base_url=opts.base_url, model=opts.model,
                              max_steps=opts.max_steps, traj=traj)
    env = dict(os.environ, OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "sk-local"),
               LITELLM_LOCAL_MODEL_COST_MAP="True", MSWEA_CONFIGURED="true")
    right = bug_definitions((task["dir"] / "bug.patch").read_text(), repo)  # before the agent can move HEAD
    prepared = time.monotonic()
    if agent in PREPARE:
        with open(work / "prepare.log", "w") as log:
            subprocess.run(["bash", "-c", PREPARE[agent]], cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=900, check=False)
    prepare_s = time.monotonic() - prepared
    started = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", command], cwd=repo, env=env, stdout=open(work / "agent.log", "w"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=opts.limit_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # let the agent save its record and clean up
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        timed_out = True
    wall = time.monotonic() - started
    keep = kept_record(opts.out, task["id"], agent, run)  # for reading what went wrong
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "agent.log", keep / "agent.log")
    if (work / "prepare.log").exists():
        shutil.copy(work / "prepare.log", keep / "prepare.log")
    for extra in [traj, *sorted((repo / ".omni" / "runs").glob("*/events.jsonl"))]:
        if extra.exists():
            shutil.copy(extra, keep / extra.name)
    result = grade(task, repo)
    row = {"task": task["id"], "agent": agent, "wall_s": round(wall, 1), "timed_out": timed_out,
           "exit_code": proc.returncode, "prepare_s": round(prepare_s, 1),
           **agent_metrics(agent, sorted((repo / ".omni" / "runs").glob("*/events.jsonl")), traj), **result}
    return {**row, **failure(row, keep / "events.jsonl", right)}


def failure(row: dict, events_file: Path, right: list[str]) -> dict:
    """For an omni run that did not resolve its task: how it failed (bench/failures.py), read from its record."""
    if row["agent"] != "omni" or row["resolved"]:
        return {}
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()] \
        if events_file.is_file() else []
    return {"failure": classify(events, right, row.get("status", ""))}


def check_task(task: dict, work: Path) -> str:
    ensure_test_requires(task)
    repo = prepare(task, work / "bug")
    extra = task.get("pytest_args", [])
    failing, _ = pytest_ids(repo, task["fail_to_pass"], extra=extra)
    kept, kept_log = pytest_ids(repo, pass_to_pass(task), extra=extra) if task.get("pass_to_pass") else (True, "")
    upstream = prepare(task, work / "upstream", bug=False)
    hidden = task["dir"] / "hidden"
    if hidden.is_dir():
        shutil.copytree(hidden, upstream, dirs_exist_ok=True)
    passing, log = pytest_ids(upstream, task["fail_to_pass"] + task.get("pass_to_pass", []), extra=extra)
    if failing:
        return "BAD: fail_to_pass tests already pass with the bug"
    if not kept:
        return "BAD: pass_to_pass tests fail with the bug:\n" + kept_log
    if not passing:
        return "BAD: tests do not pass upstream:\n" + log
    return "ok"


def program(template: str) -> str:
    """The program an agent's command template runs: its first word after any leading `NAME=value` settings
    (`OPENAI_API_KEY=x mini ...` runs `mini`), as bash reads it."""
    words = template.split()
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
        words = words[1:]
    return words[0] if words else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", default="omni,mini,none")
    parser.add_argument("--agent", action="append", default=[], help="NAME='command template'")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: both halves' tasks)")
    parser.add_argument("--half", choices=(*HALVES, DEV), help="only the tasks of one half (bench/README.md: "
                        "tune on the tune half only; report both), or the dev tasks")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--limit-s", type=float, default=900)
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("bench-results.jsonl"))
    parser.add_argument("--runs", type=int, default=1, help="run every task this many times (a 1.5B model is noisy)")
    parser.add_argument("--check", action="store_true", help="verify the tasks themselves and exit")
    parser.add_argument("--resume", action="store_true", help="go on with --out: a task an agent has a row for in "
                        "that run is not run again, and the table counts the rows already there")
    parser.add_argument("--via-batch", action="store_true", help="run the omni agent's tasks through `omni batch` "
                        "(the feature's own path), --workers at once")
    parser.add_argument("--workers", type=int, default=1, help="with --via-batch: tasks at once")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="with --via-batch: one more omni setting for every task")
    parser.add_argument("--no-server-speed", dest="server_speed", action="store_false",
                        help="do not time the model server before the tasks (bench/server_speed.py; every row "
                        "records the figure as server_tok_s)")
    parser.add_argument("--rescore", type=Path, help="print the table of a results file, metrics re-read "
                        "from the records kept in <results>.logs/")
    opts = parser.parse_args()
    templates = dict(AGENTS)
    for item in opts.agent:
        name, _, template = item.partition("=")
        templates[name] = template
    tasks = selected(TASKS, [t for t in opts.tasks.split(",") if t], opts.half)
    if opts.rescore:
        if not opts.rescore.is_file():
            parser.error(f"--rescore: no results file at {opts.rescore}")
        try:
            rows = rescore(opts.rescore)
        except ValueError as exc:
            parser.error(f"--rescore: {exc}")
        for row in rows:
            print(json.dumps({k: v for k, v in row.items() if k != "log"}))
        print(by_half(rows, list(dict.fromkeys(r["agent"] for r in rows))))
        if unkept := sum(not kept_record(opts.rescore, r["task"], r["agent"], r.get("run", 1)).is_dir() for r in rows):
            print(f"\n{unkept} of {len(rows)} rows have no record in {opts.rescore.with_suffix('.logs')}: "
                  "their figures are the results file's own")
        return
    if importlib.util.find_spec("pytest") is None:  # grading runs pytest here: without it nothing resolves
        parser.error(f"grading needs pytest in this Python ({sys.executable}): pip install pytest")
    programs = {name: program(templates[name]) for name in opts.agents.split(",") if name in templates}
    missing = [f"{name} ({prog})" for name, prog in programs.items() if not shutil.which(prog)]
    if missing and not opts.check:  # else every row would be an agent that never ran, read as a failure of its own
        parser.error(f"not on PATH: {', '.join(missing)}; activate the environment it is installed in")
    if opts.check:
        bad = 0
        for task in tasks:
            with tempfile.TemporaryDirectory() as tmp:
                verdict = check_task(task, Path(tmp))
            bad += verdict != "ok"
            print(f"{task['id']:<28} {task['package']:<16} {task['level']:<8} {verdict}")
        sys.exit(1 if bad else 0)
    if opts.resume and opts.via_batch:
        parser.error("--resume goes task by task; it does not go with --via-batch")
    try:
        rows = read_rows(opts.out) if opts.resume and opts.out.is_file() else []
    except ValueError as exc:
        parser.error(f"--resume: {exc}")
    rows = [r for r in rows if r["task"] in {t["id"] for t in tasks} and r["agent"] in opts.agents.split(",")]
    done = {(r.get("run", 1), r["task"], r["agent"]) for r in rows}
    left = opts.via_batch or any((run, t["id"], a) not in done for run in range(1, opts.runs + 1) for t in tasks
                                 for a in opts.agents.split(","))  # with --resume, maybe none: nothing to time
    asks = left and opts.server_speed and any("{base_url}" in templates[name] for name in programs)  # with a model
    speed = {"server_tok_s": server_speed(opts.base_url, opts.model)} if asks else {}
    with opts.out.open("a") as out:
        for run in range(1, opts.runs + 1):  # run by run, so a stopped benchmark has whole runs
            batched = run_via_batch(tasks, opts, run) if opts.via_batch and "omni" in opts.agents.split(",") else {}
            for task in tasks:
                for agent in opts.agents.split(","):
                    if agent == "omni" and batched:
                        row = {"run": run, **batched[task["id"]], "half": task["half"], **speed}
                        print(json.dumps({k: v for k, v in row.items() if k != "log"}), flush=True)
                        out.write(json.dumps(row) + "\n")
                        out.flush()
                        rows.append(row)
                        continue
                    if (run, task["id"], agent) in done:
                        continue
                    with tempfile.TemporaryDirectory(prefix=f"{task['id']}-{agent}-") as tmp:
                        work = Path(tmp)
                        repo = prepare(task, work / "src")
                        row = {"run": run, **run_agent(agent, templates[agent], task, repo, opts, work, run)}
                    row.update(half=task["half"], **speed)
                    print(json.dumps({k: v for k, v in row.items() if k != "log"}), flush=True)
                    out.write(json.dumps(row) + "\n")
                    out.flush()  # a long run can be read (and rescored) while it goes on
                    rows.append(row)
    print(by_half(rows, opts.agents.split(",")))


def run_via_batch(tasks: list[dict], opts, run: int) -> dict[str, dict]:
    """The omni agent's rows for one run, through `omni batch`: each task's repository prepared here, the batch run
    on fresh clones of them, each run's diff applied to its repository, then graded as any agent's work."""
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        work = Path(tmp)
        repos, lines = {}, []
        settings = {"review": False, "tools": "core", "max_tokens": 1024, "max_steps": opts.max_steps,
                    "base_url": opts.base_url, "model": opts.model, "timeout": opts.limit_s}
        rights = {}
        for task in tasks:
            repos[task["id"]] = prepare(task, work / task["id"] / "src")
            rights[task["id"]] = bug_definitions((task["dir"] / "bug.patch").read_text(), repos[task["id"]])
            lines.append(json.dumps({"id": task["id"], "repo": str(repos[task["id"]]), "goal": task["goal"],
                                     "settings": {**settings, **dict(p.split("=", 1) for p in opts.set)}}))
        (work / "tasks.jsonl").write_text("\n".join(lines) + "\n")
        env = dict(os.environ, OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "sk-local"))
        subprocess.run([sys.executable, "-m", "omni.cli", "batch", str(work / "tasks.jsonl"), "--out",
                        str(work / "out"), "--workers", str(opts.workers)], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=opts.limit_s * len(tasks) + 600)
        for task in tasks:
            record, repo = work / "out" / task["id"], repos[task["id"]]
            result = json.loads((record / "result.json").read_text()) if (record / "result.json").is_file() else {}
            patch = record / "diff.patch"
            if patch.is_file() and patch.stat().st_size:
                subprocess.run(["git", "apply", "--binary", str(patch)], cwd=repo, capture_output=True)
            keep = kept_record(opts.out, task["id"], "omni", run)
            keep.mkdir(parents=True, exist_ok=True)
            for name in ("omni.log", "events.jsonl"):
                if (record / name).is_file():
                    shutil.copy(record / name, keep / ("agent.log" if name == "omni.log" else name))
            metrics = omni_metrics(record / "events.jsonl") if (record / "events.jsonl").is_file() else \
                agent_metrics("none", [], Path("-"))
            row = {"task": task["id"], "agent": "omni", "wall_s": result.get("wall_s", 0.0),
                   "timed_out": result.get("status") == "limit_time", "exit_code": result.get("exit_code"),
                   **metrics, **grade(task, repo)}
            rows[task["id"]] = {**row, **failure(row, keep / "events.jsonl", rights[task["id"]])}
    return rows


def read_rows(results: Path) -> list[dict]:
    """The rows of a results file; ValueError naming the first line that is not one (a run killed mid-write)."""
    rows = []
    for n, line in enumerate(results.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or not {"task", "agent"} <= row.keys():
            raise ValueError(f"line {n} of {results} is not a result row (a task's and an agent's): {line[:80]}")
        rows.append(row)
    return rows


def rescore(results: Path) -> list[dict]:
    """Rows of a results file with tokens and steps read again from the records kept beside it; a row whose record
    is not kept (the records are not committed) stays as written, not read as a run that did nothing."""
    rows = read_rows(results)
    tasks = {t["id"]: t for t in (load_task(d) for d in TASKS.iterdir() if (d / "task.json").exists())}
    rights: dict[str, list[str]] = {}
    for row in rows:
        if not (kept := kept_record(results, row["task"], row["agent"], row.get("run", 1))).is_dir():
            continue
        row.update(agent_metrics(row["agent"], sorted(kept.glob("events.jsonl")), kept / "traj.json"))
        if row["agent"] == "omni" and not row["resolved"] and row["task"] in tasks:
            if row["task"] not in rights:  # the bug's repository, made again from the cached sdist
                with tempfile.TemporaryDirectory() as tmp:
                    task = tasks[row["task"]]
                    rights[row["task"]] = bug_definitions((task["dir"] / "bug.patch").read_text(),
                                                          prepare(task, Path(tmp)))
            row.update(failure(row, kept / "events.jsonl", rights[row["task"]]))
    return rows


def kept_record(results: Path, task: str, agent: str, run: int) -> Path:
    """Where an agent's run of a task keeps its record (agent.log, events.jsonl), beside the results file."""
    return results.with_suffix(".logs") / (f"{task}-{agent}" + (f"-run{run}" if run > 1 else ""))


def by_half(rows: list[dict], agents: list[str]) -> str:
    """The table for each half of the tasks, the tune half and the check half apart (a row's half is the task's
    own, also for results written before rows carried it)."""
    halves = {t["id"]: t["half"] for t in (load_task(d) for d in TASKS.iterdir() if (d / "task.json").exists())}
    parts = []
    for half in (*HALVES, DEV):
        mine = [r for r in rows if r.get("half", halves.get(r["task"])) == half]
        if mine:
            title = f"{half} half" if half in HALVES else "dev tasks (no part of the benchmark)"
            parts.append(f"## {title}\n\n" + table(mine, agents))
    return "\n\n".join(parts)


def table(rows: list[dict], agents: list[str]) -> str:
    """Per agent: resolved per run (mean and minimum), tokens per resolved task, mean wall time, and for
    omni the median share of prompt tokens served from the server's cache and of time to first action."""
    runs = sorted({r.get("run", 1) for r in rows})
    lines = [f"| agent | resolved | per run ({len(runs)}) | mean | min | tokens per resolved task | mean wall time "
             "| wall time per resolved task (median) | prompt tokens from cache (median) | first action (median) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for agent in agents:
        mine = [r for r in rows if r["agent"] == agent]
        per_run = [sum(r["resolved"] for r in mine if r.get("run", 1) == n) for n in runs]
        solved = sum(per_run)
        tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in mine)
        shares = [r["cached_tokens"] / r["prompt_tokens"] for r in mine if r.get("prompt_tokens")
                  and "cached_tokens" in r]
        firsts = [r["first_action_s"] for r in mine if r.get("first_action_s") is not None]
        solved_walls = [r["wall_s"] for r in mine if r["resolved"]]
        lines.append(f"| {agent} | {solved}/{len(mine)} | {', '.join(map(str, per_run))} | "
                     f"{solved / max(1, len(runs)):.1f} | {min(per_run, default=0)} | "
                     f"{f'{tokens / solved:,.0f}' if solved else 'n/a'} | "
                     f"{sum(r['wall_s'] for r in mine) / max(1, len(mine)):.0f} s | "
                     f"{f'{statistics.median(solved_walls):.0f} s' if solved_walls else 'n/a'} | "
                     f"{f'{statistics.median(shares):.0%}' if shares else 'n/a'} | "
                     f"{f'{statistics.median(firsts):.0f} s' if firsts else 'n/a'} |")
    speeds = [r["server_tok_s"] for r in rows if r.get("server_tok_s")]
    if speeds:  # wall times read beside the machine's speed (bench/server_speed.py)
        lines += ["", f"server speed before the tasks: median {statistics.median(speeds):.1f} tokens/s "
                  f"(range {min(speeds):.1f}-{max(speeds):.1f})"]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    lines += ["", "| task | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for task in tasks:
        cells = [f"{sum(r['resolved'] for r in rows if r['task'] == task and r['agent'] == a)}/"
                 f"{sum(1 for r in rows if r['task'] == task and r['agent'] == a)}" for a in agents]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    failed = [r for r in rows if r.get("failure")]
    if failed:
        lines += ["", "| omni did not resolve | run | how it failed | tried first | the bug's definitions | "
                  "their rank in the spectrum |", "|---|---|---|---|---|---|"]
        kinds: dict[str, int] = {}
        for r in failed:
            how = r["failure"]
            kinds[how["kind"]] = kinds.get(how["kind"], 0) + 1
            rank = how.get("spectrum_rank")
            lines.append(f"| {r['task']} | {r.get('run', 1)} | {how['kind']} | {', '.join(how['tried'][:2]) or '-'} | "
                         f"{', '.join(how['right'])} | {'-' if rank is None else rank or 'not ranked'} |")
        ranked = sorted(kinds.items(), key=lambda kv: -kv[1])
        lines += ["", "failures: " + ", ".join(f"{kind} {n}" for kind, n in ranked)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
