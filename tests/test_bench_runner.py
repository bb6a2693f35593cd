"""The benchmark runner itself, on one real task (parse 1.20.2 from PyPI) with a scripted model."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import clean_env

ROOT = Path(__file__).resolve().parent.parent
OMNI_LOCAL = ("omni=omni --yes --no-review --no-reproduce --no-finish-on-check --samples 1 --sandbox local "
              "--tool-mode native "
              "--max-steps {max_steps} --base-url {base_url} --model {model} --goal-file {goal_file}")
# Would pass if the grader trusted the agent's copy of the tests: the failing test becomes trivial.
# The upstream fix, applied without a model: a run that always resolves the task.
FIXER = "fixer=sed -i '/string\\[0\\] == \"-\":/{{n;s/sign = 1/sign = -1/}}' parse.py"
CHEAT = "cheat=printf 'def test_numbers():\\n    pass\\n' > tests/test_parse.py"


def test_runner_grades_a_fix_a_no_op_and_a_test_edit(fake, tmp_path):
    fix = {"tool": "replace_in_file", "args": {"path": "parse.py",
                                               "old_text": '        if string[0] == "-":\n            sign = 1\n',
                                               "new_text": '        if string[0] == "-":\n            sign = -1\n'}}
    fake.add({"text": "1. Fix the sign\n2. Finish"}, fix, {"tool": "finish", "args": {"summary": "fixed"}})
    fake.add_for("median(values)", {"text": "def median(values):\n    return sorted(values)[len(values) // 2]\n",
                                    "usage": {"completion_tokens": 24}})  # bench/server_speed.py's one request
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int",
         "--agents", "omni,none,cheat", "--agent", OMNI_LOCAL, "--agent", CHEAT, "--base-url", fake.base_url,
         "--model", "fake-model", "--limit-s", "300", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["agent"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["omni"]["resolved"] is True and rows["omni"]["steps"] == 2
    assert rows["omni"]["prompt_tokens"] > 0 and rows["omni"]["status"] == "finished"
    assert rows["none"]["resolved"] is False and rows["none"]["fail_to_pass"] is False
    assert rows["cheat"]["resolved"] is False and rows["cheat"]["fail_to_pass"] is False  # tests restored
    assert "| omni | 1/1 |" in done.stdout and "| none | 0/1 |" in done.stdout
    assert fake.served_for("median(values)") == 1  # the server timed once, before the tasks, and every row says so
    speeds = {r["server_tok_s"] for r in rows.values()}
    assert len(speeds) == 1 and speeds.pop() > 0 and "server speed before the tasks: median" in done.stdout
    resumed = subprocess.run([*done.args, "--resume"], capture_output=True, text=True, timeout=300, env=clean_env())
    assert resumed.returncode == 0 and "| omni | 1/1 |" in resumed.stdout, resumed.stdout + resumed.stderr
    assert fake.served_for("median(values)") == 1  # no task left to run: the server is not timed again
    again = subprocess.run([sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--rescore", str(out)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "| omni | 1/1 |" in again.stdout  # from the records kept beside it
    missing = subprocess.run([sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--rescore",
                              str(tmp_path / "nope.jsonl")], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no results file at" in missing.stderr


def test_several_runs_are_counted_per_run_and_per_task(tmp_path):
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int", "--runs", "2",
         "--agents", "none,fixer", "--agent", FIXER, "--limit-s", "120", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["run"], r["agent"], r["resolved"]) for r in rows] == [
        (1, "none", False), (1, "fixer", True), (2, "none", False), (2, "fixer", True)]
    assert "| none | 0/2 | 0, 0 | 0.0 | 0 |" in done.stdout and "| fixer | 2/2 | 1, 1 | 1.0 | 1 |" in done.stdout
    assert "| parse-negative-int | 0/2 | 2/2 |" in done.stdout
    assert (tmp_path / "results.logs" / "parse-negative-int-fixer-run2").is_dir()


def test_the_runner_can_run_its_tasks_through_omni_batch(fake, tmp_path, docker_engine):
    fix = {"tool": "replace_in_file", "args": {"path": "parse.py",
                                               "old_text": '        if string[0] == "-":\n            sign = 1\n',
                                               "new_text": '        if string[0] == "-":\n            sign = -1\n'}}
    fake.add({"text": "1. Fix the sign\n2. Finish"}, fix, {"tool": "finish", "args": {"summary": "fixed"}})
    out = tmp_path / "results.jsonl"
    test_flags = [arg for pair in ("tool_mode=native", "reproduce=false", "samples=1", "finish_on_check=false",
                                   "opening_repair=false") for arg in ("--set", pair)]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int", "--agents", "omni",
         "--via-batch", "--workers", "2", "--no-server-speed", *test_flags, "--base-url", fake.base_url,
         "--model", "fake-model", "--limit-s", "300", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads(out.read_text().splitlines()[0])
    assert row["agent"] == "omni" and row["resolved"] is True and row["steps"] == 2 and row["status"] == "finished"
    assert (tmp_path / "results.logs" / "parse-negative-int-omni" / "events.jsonl").is_file()


def test_an_unresolved_run_says_how_it_failed(fake, tmp_path):
    """A run that edits another definition than the bug's and runs out of steps: 'wrong target', with what it
    tried and where the bug was, in its row, in the table and again when rescored from the kept record."""
    wrong = {"tool": "replace_in_file", "args": {"path": "parse.py", "old_text": "float(string[:-1]) / 100.0",
                                                 "new_text": "float(string[:-1]) / 100"}}
    fake.add({"text": "1. Fix the sign\n2. Finish"}, wrong, {"tool": "read_file", "args": {"path": "parse.py"}})
    out = tmp_path / "results.jsonl"
    template = OMNI_LOCAL.replace("--samples 1", "--samples 1 --no-opening-repair")
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int", "--agents", "omni",
         "--agent", template, "--no-server-speed", "--base-url", fake.base_url, "--model", "fake-model",
         "--max-steps", "2", "--limit-s", "300", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads(out.read_text().splitlines()[0])
    assert row["resolved"] is False and row["status"] == "limit_steps"
    how = row["failure"]
    assert how["kind"] == "wrong target" and how["check"] == "goal examples"
    assert how["tried"] == ["parse.py:percentage"] and how["right"] == ["parse.py:int_convert.__call__"]
    assert "| parse-negative-int | 1 | wrong target | parse.py:percentage | parse.py:int_convert.__call__ |" \
        in done.stdout and "failures: wrong target 1" in done.stdout
    again = subprocess.run([sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--rescore", str(out)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "failures: wrong target 1" in again.stdout
    shutil.rmtree(tmp_path / "results.logs")  # the records are not committed: a fresh clone has only the rows
    unkept = subprocess.run([sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--rescore", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert unkept.returncode == 0 and "failures: wrong target 1" in unkept.stdout, unkept.stdout + unkept.stderr
    assert json.loads(unkept.stdout.splitlines()[0])["steps"] == row["steps"] > 0  # not read as a run of no steps
    assert "1 of 1 rows have no record in" in unkept.stdout


def test_a_stopped_benchmark_goes_on_where_it_stopped(tmp_path):
    """--resume with the same results file: the rows already there are not run again, and the table counts them."""
    out = tmp_path / "results.jsonl"
    command = [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int",
               "--agents", "none,fixer", "--agent", FIXER, "--limit-s", "120", "--out", str(out)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=900, env=clean_env())
    assert first.returncode == 0, first.stdout + first.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    out.write_text(json.dumps(rows[0]) + "\n")  # stopped after its first row: fixer's is to do
    again = subprocess.run([*command, "--resume", "--runs", "2"], capture_output=True, text=True, timeout=900,
                           env=clean_env())
    assert again.returncode == 0, again.stdout + again.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["run"], r["agent"]) for r in rows] == [(1, "none"), (1, "fixer"), (2, "none"), (2, "fixer")]
    assert "| fixer | 2/2 | 1, 1 | 1.0 | 1 |" in again.stdout and "| none | 0/2 | 0, 0 |" in again.stdout


def test_resume_refuses_a_results_file_it_cannot_read_and_a_batch_run(tmp_path):
    """A line that is not a result row (a run killed mid-write) is named, and nothing is run or written; --resume
    does not go with --via-batch."""
    out = tmp_path / "results.jsonl"
    out.write_text('{"run": 1, "task": "parse-negative-int", "agent": "none", "resolved": false}\n{"run": 1, "ta\n')
    before = out.read_text()
    command = [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int",
               "--agents", "none", "--limit-s", "120", "--out", str(out)]
    broken = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300, env=clean_env())
    assert broken.returncode == 2 and "--resume: line 2 of" in broken.stderr and "is not a result row" in broken.stderr
    rescored = subprocess.run([sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--rescore", str(out)],
                              capture_output=True, text=True, timeout=300, env=clean_env())
    assert rescored.returncode == 2 and "--rescore: line 2 of" in rescored.stderr
    batch = subprocess.run([*command, "--resume", "--via-batch"], capture_output=True, text=True, timeout=300,
                           env=clean_env())
    assert batch.returncode == 2 and "does not go with --via-batch" in batch.stderr
    assert out.read_text() == before


def test_the_dev_tasks_run_only_when_asked_for():
    """The benchmark is its two halves; the dev tasks (added later, to develop on) run by name or with --half dev,
    never in a run of the benchmark, and the table says them apart."""
    runner = load_runner()
    halves = {t["id"]: t["half"] for t in runner.selected(runner.TASKS, [], None)}
    assert set(halves.values()) == {"tune", "check"} and len(halves) == 30
    dev = [t["id"] for t in runner.selected(runner.TASKS, [], "dev")]
    assert len(dev) >= 15 and not set(dev) & set(halves)
    assert [t["id"] for t in runner.selected(runner.TASKS, [dev[0], "parse-negative-int"], None)] == sorted(
        [dev[0], "parse-negative-int"])
    assert runner.selected(runner.TASKS, [dev[0]], "tune") == []
    row = {"task": dev[0], "agent": "none", "resolved": False, "half": "dev", "prompt_tokens": 0,
           "completion_tokens": 0, "wall_s": 1.0}
    table = runner.by_half([row], ["none"])
    assert table.startswith("## dev tasks (no part of the benchmark)") and "tune half" not in table


def test_an_agent_not_on_path_is_refused_before_any_task(tmp_path):
    """An agent whose program is not installed would leave every task a row of its own failure: refused at once."""
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int", "--agents",
         "ghost,none", "--agent", "ghost=no-such-agent-program --goal-file {goal_file}", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=clean_env())
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not on PATH: ghost (no-such-agent-program)" in done.stderr
    assert not out.exists()


def test_the_program_of_a_template_is_read_past_its_settings():
    """A template may set variables before its program, as bash allows; the program is what must be on PATH."""
    runner = load_runner()
    assert runner.program("mini -m {model} --task-file {goal_file}") == "mini"
    assert runner.program("OPENAI_API_KEY=sk-x MSWEA_COST_TRACKING=ignore_errors mini -y") == "mini"
    assert runner.program("OMNI_X= omni --goal-file {goal_file} A=1") == "omni"
    assert runner.program("NOT-A-NAME=1 prog") == "NOT-A-NAME=1"
    assert runner.program("") == ""


def load_runner():
    """bench/run_tasks.py as a module (it imports its neighbours in bench/)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("bench_run_tasks", ROOT / "bench" / "run_tasks.py")
        runner = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(runner)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return runner


def test_the_task_repository_holds_no_version_without_the_bug(tmp_path):
    """An agent with a shell finds no fix in the history: the bug is in the one commit it starts from."""
    history = "history=git checkout HEAD~1 -- . || git diff HEAD~1 HEAD -R | git apply"
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_tasks.py"), "--tasks", "parse-negative-int", "--agents",
         "history,fixer", "--agent", history, "--agent", FIXER, "--limit-s", "120", "--out", str(out)],
        capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["agent"]: r["resolved"] for r in map(json.loads, out.read_text().splitlines())}
    assert rows == {"history": False, "fixer": True}


def test_the_server_speed_of_a_server_that_does_not_answer_is_a_clear_error(fake):
    """bench/server_speed.py on its own: a figure from a server that answers with usage; from one that does not
    listen, a message naming the address and a non-zero exit, no figure."""
    fake.add({"text": "def median(values):\n    return values[0]\n", "usage": {"completion_tokens": 12}})
    script = [sys.executable, str(ROOT / "bench" / "server_speed.py"), "--model", "fake-model", "--base-url"]
    done = subprocess.run([*script, fake.base_url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith(" tokens/s\n") and float(done.stdout.split()[0]) > 0
    gone = subprocess.run([*script, "http://127.0.0.1:9/v1"], capture_output=True, text=True, timeout=120)
    assert gone.returncode == 1 and "no answer with usage from http://127.0.0.1:9/v1" in gone.stderr
    assert gone.stdout == ""
