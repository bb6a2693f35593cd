"""Bad input from the user: a clear message, a distinct exit code, and nothing written."""

from __future__ import annotations

import subprocess

from conftest import make_repo, run_omni


def test_not_in_a_git_repo(tmp_path, fake):
    folder = tmp_path / "plain"
    folder.mkdir()
    run = run_omni(folder, "fix it", fake=fake)
    assert run.code == 2
    assert "not inside a git repository" in run.stderr
    assert list(folder.iterdir()) == [] and fake.requests == []


def test_empty_goal(calc_repo, fake):
    run = run_omni(calc_repo, "   ", fake=fake)
    assert run.code == 2 and "the goal is empty" in run.stderr
    assert not (calc_repo / ".omni").exists()


def test_unknown_flag(calc_repo):
    run = run_omni(calc_repo, "--frobnicate", "fix it")
    assert run.code == 2 and "unrecognized arguments: --frobnicate" in run.stderr
    assert not (calc_repo / ".omni").exists()


def test_no_model_configured_names_flags_and_env(calc_repo):
    run = run_omni(calc_repo, "fix it")
    assert run.code == 2
    for word in ("--model", "--base-url", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_HOST"):
        assert word in run.stderr
    assert not (calc_repo / ".omni").exists()


def test_repo_without_commits(tmp_path, fake):
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, commit=False)
    run = run_omni(repo, "fix it", fake=fake)
    assert run.code == 2 and "no commits yet" in run.stderr
    assert not (repo / ".omni").exists()


def test_bad_limits(calc_repo, fake):
    run = run_omni(calc_repo, "--max-steps", "0", "fix", fake=fake)
    assert run.code == 2 and "--max-steps must be at least 1" in run.stderr
    run = run_omni(calc_repo, "--max-tokens", "0", "fix", fake=fake)
    assert run.code == 2 and "--max-tokens must be at least 1" in run.stderr
    for flag, value, said in (("--samples", "0", "--samples must be at least 1"),
                              ("--samples", "17", "--samples must be at most 16"),
                              ("--max-workspace-mb", "0", "--max-workspace-mb must be at least 1"),
                              ("--samples", "many", "invalid int value")):
        run = run_omni(calc_repo, flag, value, "fix", fake=fake)
        assert run.code == 2 and said in run.stderr, (flag, value, run.stderr)
    assert not (calc_repo / ".omni").exists()  # refused before anything was written


def test_unreachable_base_url_exits_1_and_keeps_the_record(calc_repo):
    before = (calc_repo / "calc.py").read_text()
    run = run_omni(calc_repo, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--sandbox", "local",
                   "--tool-mode", "native", "--yes", "fix it", timeout=300)
    assert run.code == 1, run.stderr
    assert "cannot connect to http://127.0.0.1:9/v1" in run.stdout
    summary = run.summary()
    assert summary["status"] == "model_error" and "gave up after" in summary["message"]
    assert "status" in run.kinds()
    assert (calc_repo / "calc.py").read_text() == before


def test_bad_key_fails_fast(calc_repo, fake):
    fake.add({"status": 401, "error": "invalid api key"})
    run = run_omni(calc_repo, "--yes", "fix it", fake=fake, sandbox="local")
    assert run.code == 1 and "rejected the API key (401)" in run.stdout
    assert len(fake.requests) == 1
    assert run.summary()["status"] == "model_error"


def test_goal_from_stdin_and_from_file(calc_repo, fake, tmp_path):
    fake.add({"status": 401}, {"status": 401})
    run = run_omni(calc_repo, "--yes", "-", fake=fake, sandbox="local", input="make add() add\n")
    assert run.code == 1
    goal_file = tmp_path / "goal.txt"
    goal_file.write_text("make mul() multiply\n")
    subprocess.run(["rm", "-rf", str(calc_repo / ".omni")], check=True)
    run = run_omni(calc_repo, "--yes", "--goal-file", str(goal_file), fake=fake, sandbox="local")
    assert "Goal: make add() add\n" in fake.requests[0]["messages"][0]["content"]
    assert "Goal: make mul() multiply\n" in fake.requests[1]["messages"][0]["content"]
    assert run.summary()["goal"] == "make mul() multiply"
    missing = run_omni(calc_repo, "--goal-file", str(tmp_path / "nope.txt"), fake=fake)
    assert missing.code == 2 and "cannot read the goal file" in missing.stderr


def test_help_works_outside_a_repo(tmp_path):
    run = run_omni(tmp_path, "--help")
    assert run.code == 0 and "--planner-model" in run.stdout and "--tool-mode" in run.stdout
