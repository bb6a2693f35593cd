"""The live session: the real CLI in a pseudo-terminal (pexpect) against the scripted model server."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pexpect
import pytest

from conftest import clean_env, git, run_omni
from omni.run.events import problems

PLAN = {"text": "1. Look around\n2. Finish"}
FINISH = {"tool": "finish", "args": {"summary": "done"}}
SCRIPTED = ["--no-finish-on-check", "--samples", "1"]  # the scripts say when the run finishes, and sample nothing


def spawn(repo, fake, *args, sandbox="local", reproduce=False):
    argv = ["-m", "omni.cli", "--no-review", *SCRIPTED, *([] if reproduce else ["--no-reproduce"]),
            "--base-url", fake.base_url,
            "--model", "fake-model", "--tool-mode", "native",
            "--sandbox", sandbox, *args]
    env = clean_env(COLUMNS="160", LINES="50", TERM="xterm")
    return pexpect.spawn(sys.executable, argv, cwd=str(repo), env=env, encoding="utf-8", timeout=60,
                         dimensions=(50, 160))


def wait_for_request(fake, count, limit=30):
    deadline = time.monotonic() + limit
    while len(fake.requests) < count:
        assert time.monotonic() < deadline, f"only {len(fake.requests)} requests arrived"
        time.sleep(0.05)


def test_one_ctrl_c_pauses_and_guidance_reaches_the_next_request(calc_repo, fake):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}},
             {"tool": "read_file", "args": {"path": "calc.py"}}, FINISH, FINISH)
    child = spawn(calc_repo, fake, "look around")
    child.expect("shell")
    time.sleep(1.0)  # the sleep is running in the tool server
    started = time.monotonic()
    child.sendintr()
    child.expect("omni paused>")
    assert time.monotonic() - started < 10
    child.sendline("check calc.py first")
    child.expect("read_file")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    step_after = fake.requests[2]["messages"]
    assert "Message from the user: check calc.py first" in step_after[-1]["content"]
    interrupted = [m for m in step_after if m["role"] == "tool"][-1]["content"]
    assert "interrupted by the user" in interrupted  # no context lost: the cut step is in the history
    record = next((calc_repo / ".omni" / "runs").iterdir()) / "events.jsonl"
    cut = next(json.loads(line) for line in record.read_text().splitlines()
               if '"observation"' in line and "interrupted by the user" in line)
    assert cut["duration_s"] >= 0.5  # the time the step really ran, not 0.00s


def test_a_ctrl_c_while_the_check_is_settled_pauses_and_the_run_goes_on_from_there(tmp_path, fake):
    """Before the first step omni waits for the baseline and settles the run's check (here: asks for a reproduction
    example, slowly). A Ctrl-C there opens the pause as during a step; then the check is settled and the run goes on,
    with the guidance in the first step's prompt."""
    from conftest import make_repo
    repo = make_repo(tmp_path / "repo", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"})
    shows = {"text": json.dumps({"expression": "add(2, 2)", "expected": "4"})}  # the reproduction example
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add({**PLAN, "plan": True}, {**shows, "delay": 20}, shows, fix, FINISH)
    child = spawn(repo, fake, "adding two numbers gives the wrong answer", reproduce=True)
    child.expect("settling the run's check")
    wait_for_request(fake, 2)  # the plan, then the reproduction example's request, which takes 20 s
    child.sendintr()
    child.expect("omni paused>", timeout=10)
    child.sendline("the bug is in add")
    child.expect(r"Apply these changes to your working tree\?", timeout=60)
    child.sendline("y")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0, child.before
    record = next((repo / ".omni" / "runs").iterdir()) / "events.jsonl"
    events = [json.loads(line) for line in record.read_text().splitlines()]
    (check,) = [e for e in events if e["kind"] == "check"]
    assert check["source"] == "reproduction example" and len(fake.requests) == 5  # asked again after the pause
    kinds = [e["kind"] for e in events]
    assert kinds.index("interrupt") < kinds.index("check") < kinds.index("action")
    assert "Message from the user: the bug is in add" in fake.requests[3]["messages"][-1]["content"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_the_pause_prompt_edits_with_arrow_keys_and_keeps_a_history(calc_repo, fake, tmp_path):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}},
             {"tool": "read_file", "args": {"path": "calc.py"}}, FINISH, FINISH)
    env = clean_env(COLUMNS="160", LINES="50", TERM="xterm", XDG_DATA_HOME=str(tmp_path / "data"))
    child = pexpect.spawn(sys.executable, ["-m", "omni.cli", "--no-review", *SCRIPTED, "--no-reproduce", "--base-url",
                                           fake.base_url, "--model",
                                           "m", "--tool-mode", "native", "--sandbox", "local", "look"],
                          cwd=str(calc_repo), env=env, encoding="utf-8", timeout=60, dimensions=(50, 160))
    child.expect("sleep 60")
    time.sleep(1.0)
    child.sendintr()
    child.expect("omni paused>")
    child.send("check wrld")
    child.send("\x1b[D" * 3)  # three times left: the cursor goes back into the word, no ^[[D is typed
    child.send("o\r")
    child.expect("read_file")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    assert "Message from the user: check world" in fake.requests[2]["messages"][-1]["content"]
    history = (tmp_path / "data" / "omni" / "history" / "pause").read_text()
    assert "+check world" in history  # prompt_toolkit's history file: the next pause can recall it


def test_ask_user_shows_the_question_and_the_answer_reaches_the_model(calc_repo, fake):
    fake.add(PLAN, {"tool": "ask_user", "args": {"question": "Which function is wrong?"}}, FINISH, FINISH)
    child = spawn(calc_repo, fake, "fix the bug")
    child.expect("The agent asks:.*Which function is wrong\\?")
    child.expect("your answer>")
    child.sendline("add, it subtracts")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    tool_msg = [m for m in fake.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "add, it subtracts" in tool_msg


def test_slash_commands_while_paused(calc_repo, fake):
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                "new_text": "return a + b"}}
    fake.add(PLAN, fix, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}},
             {"tool": "read_file", "args": {"path": "calc.py"}}, FINISH, FINISH)
    child = spawn(calc_repo, fake, "fix")
    child.expect("sleep 60")
    time.sleep(1.0)
    child.sendintr()
    child.expect("omni paused>")
    child.sendline("/diff")
    child.expect("return a \\+ b")
    child.expect("omni paused>")
    child.sendline("/undo")
    child.expect("undid")
    child.expect("omni paused>")
    child.sendline("/plan")
    child.expect("step>")
    child.sendline("Read calc.py again")
    child.expect("step>")
    child.sendline("")
    child.expect("Plan set by you")
    child.expect("omni paused>")
    child.sendline("")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    last = fake.requests[3]["messages"][-1]["content"]
    assert "1. [>] Read calc.py again" in last and "The user ran /undo: undid" in last
    read_back = [m for m in fake.requests[4]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "return a - b" in read_back  # the undo really took the edit back


@pytest.mark.docker
def test_two_ctrl_c_exit_130_with_the_record_complete_and_no_container_left(calc_repo, fake, docker_engine):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}}, FINISH)
    child = spawn(calc_repo, fake, "wait", sandbox="docker")
    child.expect("sleep 60")
    time.sleep(1.0)
    child.sendintr()
    time.sleep(0.3)
    child.sendintr()
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 130
    runs = list((calc_repo / ".omni" / "runs").iterdir())
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    kinds = [json.loads(line)["kind"] for line in (runs[0] / "events.jsonl").read_text().splitlines()]
    assert kinds[-2:] == ["status", "summary"]
    left = docker_engine.containers.list(all=True, filters={"label": f"org.omni.run={summary['run_id']}"})
    assert left == []


def test_json_stream_validates_and_matches_the_record(calc_repo, fake):
    fake.add(PLAN, {"tool": "ask_user", "args": {"question": "ok?"}}, {"tool": "read_file", "args": {"path": "x"}},
             FINISH, FINISH)
    run = run_omni(calc_repo, "--json", "look", fake=fake, sandbox="local")
    assert run.code == 0
    streamed = [json.loads(line) for line in run.stdout.splitlines()]
    assert streamed and all(problems(e) == [] for e in streamed), [problems(e) for e in streamed]
    recorded = run.events()
    assert streamed == recorded  # the same event objects, stdout and events.jsonl
    assert [e["seq"] for e in recorded] == list(range(1, len(recorded) + 1))  # no gaps
    assert all(e["type"] == e["kind"] for e in recorded)
    assert streamed[-1]["kind"] == "summary" and "Run " in run.stderr  # human output went to stderr
    assert {"question", "answer", "observation", "usage"} <= {e["kind"] for e in streamed}


def test_config_layers_and_sources(calc_repo, tmp_path):
    user_cfg = tmp_path / "user.toml"
    user_cfg.write_text('model = "from-user"\nmax_steps = 7\n')
    (calc_repo / ".omni").mkdir()
    (calc_repo / ".omni" / "config.toml").write_text('max_steps = 9\ntool_mode = "text"\n')
    env = clean_env(OMNI_CONFIG=str(user_cfg), OMNI_TOOL_MODE="native")
    run = run_omni(calc_repo, "config", "--repo", str(calc_repo), env=env)
    assert run.code == 0, run.stderr
    lines = {line.split("=")[0].strip(): line for line in run.stdout.splitlines() if "=" in line}
    assert '"from-user"' in lines["model"] and "user config" in lines["model"]
    assert "9" in lines["max_steps"] and "repo config" in lines["max_steps"]
    assert '"native"' in lines["tool_mode"] and "environment" in lines["tool_mode"]
    assert "default" in lines["sandbox"]


@pytest.mark.parametrize("content,message", [("max_steps = 'many'", "key 'max_steps'"),
                                             ("colour = 'red'", "key 'colour': Extra inputs"),
                                             ("max_steps = [", "config.toml")])
def test_invalid_config_file_names_the_file_and_key(calc_repo, fake, content, message):
    (calc_repo / ".omni").mkdir()
    (calc_repo / ".omni" / "config.toml").write_text(content + "\n")
    run = run_omni(calc_repo, "fix", fake=fake, sandbox="local")
    assert run.code == 2 and message in run.stderr and str(calc_repo / ".omni" / "config.toml") in run.stderr
    assert fake.requests == []


def test_project_instructions_reach_the_system_prompt(calc_repo, fake):
    (calc_repo / "AGENTS.md").write_text("Always use four spaces.\n")
    (calc_repo / "sub").mkdir()
    (calc_repo / "sub" / "CLAUDE.md").write_text("In sub/, prefer pathlib.\n")
    git(calc_repo, "add", "-A")
    git(calc_repo, "commit", "-qm", "instructions")
    fake.add(PLAN, FINISH, FINISH)
    proc_env = clean_env()
    proc = subprocess.run([sys.executable, "-m", "omni.cli", "--no-review", *SCRIPTED, "--no-reproduce", "--base-url",
                           fake.base_url, "--model", "m", "--tool-mode", "native", "--sandbox", "local", "--yes", "go"],
                          cwd=calc_repo / "sub", env=proc_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    system = fake.requests[1]["messages"][0]["content"]
    assert system.index("Always use four spaces.") < system.index("In sub/, prefer pathlib.")
    assert "project instructions: AGENTS.md, sub/CLAUDE.md" in proc.stdout


def test_show_replays_and_undo_restores(calc_repo, fake):
    fake.add(PLAN, {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                         "new_text": "return a + b"}}, FINISH)
    before = (calc_repo / "calc.py").read_text()
    run = run_omni(calc_repo, "--yes", "fix", fake=fake, sandbox="local")
    assert run.code == 0 and "return a + b" in (calc_repo / "calc.py").read_text()
    run_id = run.summary()["run_id"]
    shown = run_omni(calc_repo, "show", run_id)
    assert shown.code == 0 and "▶ replace_in_file" in shown.stdout and "finished" in shown.stdout
    listed = run_omni(calc_repo, "runs")
    assert run_id in listed.stdout and "finished" in listed.stdout
    undone = run_omni(calc_repo, "undo", run_id)
    assert undone.code == 0, undone.stdout + undone.stderr
    assert (calc_repo / "calc.py").read_text() == before
    again = run_omni(calc_repo, "undo", run_id)
    assert again.code == 1 and "is not applied" in again.stdout  # already undone: it says so


def test_interactive_session_takes_goals_one_after_another(calc_repo, fake):
    fake.add(PLAN, FINISH, FINISH, PLAN)
    env = clean_env(COLUMNS="160", TERM="xterm")
    child = pexpect.spawn(sys.executable, ["-m", "omni.cli", "--no-review", *SCRIPTED, "--no-reproduce", "--base-url",
                                           fake.base_url, "--model", "m",
                                           "--tool-mode", "native", "--sandbox", "local"],
                          cwd=str(calc_repo), env=env, encoding="utf-8", timeout=60, dimensions=(50, 160))
    child.expect("omni>")
    child.sendline("look around")
    child.expect("finished")
    child.expect("omni>")
    child.sendline("/plan tidy up")
    child.expect("Look around")
    child.expect("omni>")
    child.sendline("/runs")
    child.expect("finished")
    child.expect("omni>")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Earlier goals in this session:\n- look around -> finished" in fake.requests[3]["messages"][0]["content"]


@pytest.mark.docker
def test_sigterm_saves_the_record_and_removes_the_sandbox(calc_repo, fake, docker_engine):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}}, FINISH)
    proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "--no-review", *SCRIPTED, "--no-reproduce",
                             "--base-url", fake.base_url, "--model", "m", "--tool-mode", "native", "--yes", "wait"],
                            cwd=calc_repo,
                            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_request(fake, 2)
    time.sleep(1.5)  # the sleep is running in the container
    proc.terminate()
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    run_dir = next((calc_repo / ".omni" / "runs").iterdir())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == 1
    left = docker_engine.containers.list(all=True, filters={"label": f"org.omni.run={summary['run_id']}"})
    assert left == []


def test_a_closed_stdout_under_json_ends_the_run_cleanly(calc_repo, fake):
    reads = [{"tool": "read_file", "args": {"path": "calc.py"}}] * 8
    fake.add(PLAN, *reads, FINISH, FINISH)
    command = (f"{sys.executable} -m omni.cli --no-review --no-finish-on-check --samples 1 --no-reproduce "
               f"--base-url {fake.base_url} --model m --tool-mode native --sandbox local --yes --json look | head -1")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=calc_repo, capture_output=True, text=True,
                          env=clean_env(), timeout=120)
    assert json.loads(done.stdout)["kind"] == "run_start" or json.loads(done.stdout)["seq"] == 1
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert "unreadable" not in done.stderr and "baseline failed" not in done.stderr, done.stderr
    folder = next((calc_repo / ".omni" / "runs").iterdir())
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["status"] == "interrupted" and "stdout was closed" in summary["message"]
    assert list((calc_repo / ".omni" / "worktrees").iterdir()) == []  # no stale worktree
    assert git(calc_repo, "worktree", "list").count("\n") == 1


def test_the_summary_says_how_the_tests_went(calc_repo, fake):
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                "new_text": "return a + b"}}
    cached = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 90}}
    fake.add(PLAN, {**fix, "usage": cached}, {**FINISH, "usage": {**cached, "prompt_tokens_details": {
        "cached_tokens": 80}}})
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    summary = run.summary()
    assert "2 passed" in summary["tests"] and "0 failed" in summary["tests"]  # the gate ran them at the end
    assert "1 passed, 1 failed" in summary["tests_at_start"]
    assert summary["cached_share"] == 0.85  # (90 + 80) / 200: the requests after the plan's
    assert summary["first_action_s"] > 0 and "first action after" in run.stdout
