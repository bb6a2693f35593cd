"""Bad input from the user: a clear message, a distinct exit code, and nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from conftest import clean_env, git, make_repo, run_omni


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


@pytest.mark.parametrize("argv,said", [
    (["--mdoel", "m", "fix it"], "did you mean --model?"),
    (["--max-step", "3", "fix it"], "did you mean --max-steps?"),  # a prefix is not taken as the flag
    (["runs", "--prnue"], "did you mean --prune?"),
    (["sandbox", "biuld"], "did you mean build?"),
    (["--tool-mode", "nativ", "fix it"], "did you mean native?"),
])
def test_a_mistyped_flag_or_choice_gets_did_you_mean(calc_repo, argv, said):
    run = run_omni(calc_repo, *argv)
    assert run.code == 2 and said in run.stderr, run.stderr
    assert not (calc_repo / ".omni").exists()


def test_a_one_word_goal_close_to_a_subcommand_is_asked_about(calc_repo):
    run = run_omni(calc_repo, "shwo")
    assert run.code == 2 and "did you mean `omni show`" in run.stderr
    assert not (calc_repo / ".omni").exists()


def test_dash_v_prints_the_version(tmp_path):
    from omni import __version__

    for flag in ("-V", "--version"):
        run = run_omni(tmp_path, flag)
        assert run.code == 0 and run.stdout.strip() == f"omni {__version__}"


@pytest.mark.parametrize("shell,marker", [("bash", "complete -o"), ("zsh", "#compdef omni"),
                                          ("fish", "complete -c omni")])
def test_completion_scripts_know_subcommands_and_flags(tmp_path, shell, marker):
    run = run_omni(tmp_path, "completion", shell)
    assert run.code == 0 and marker in run.stdout
    for word in ("apply", "prune", "max-steps", "tool-mode"):
        assert word in run.stdout, (shell, word)
    if shell == "bash":  # the script is valid bash
        assert subprocess.run(["bash", "-n"], input=run.stdout, text=True).returncode == 0


def test_config_works_outside_a_repo_and_shows_the_provider_variables(tmp_path):
    env = clean_env(OPENAI_BASE_URL="http://127.0.0.1:8080/v1", OPENAI_API_KEY="sk-secret-123",
                    OMNI_CONFIG=str(tmp_path / "none.toml"))
    run = run_omni(tmp_path, "config", env=env)
    assert run.code == 0, run.stderr
    assert "not in a git repository" in run.stdout
    endpoint = next(line for line in run.stdout.splitlines() if line.startswith("endpoint "))
    assert "http://127.0.0.1:8080/v1" in endpoint and "OPENAI_BASE_URL" in endpoint
    key = next(line for line in run.stdout.splitlines() if line.startswith("endpoint key"))
    assert "OPENAI_API_KEY" in key and "sk-secret-123" not in run.stdout
    both = run_omni(tmp_path, "config", env=clean_env(OPENAI_API_KEY="a", OPENROUTER_API_KEY="b"))
    assert "openrouter.ai" in both.stdout
    assert "# note: OPENROUTER_API_KEY and OPENAI_API_KEY are both set" in both.stdout


def test_a_model_without_a_key_says_which_key_is_missing(calc_repo):
    run = run_omni(calc_repo, "--model", "gpt-4.1-mini", "fix it")
    assert run.code == 2 and "set OPENAI_API_KEY" in run.stderr and "No model is configured" not in run.stderr
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
                              ("--block-from", "0", "--block-from must be at least 1"),
                              ("--samples", "many", "invalid int value")):
        run = run_omni(calc_repo, flag, value, "fix", fake=fake)
        assert run.code == 2 and said in run.stderr, (flag, value, run.stderr)
    assert not (calc_repo / ".omni").exists()  # refused before anything was written


@pytest.mark.parametrize("url,said", [("http://127.0.0.1:9/v1", "Connection refused"),
                                     ("http://no-such-host.invalid/v1", "cannot connect to http://no-such-host")])
def test_an_unreachable_base_url_fails_fast_with_exit_2_and_the_url(calc_repo, url, said):
    before = (calc_repo / "calc.py").read_text()
    run = run_omni(calc_repo, "--base-url", url, "--model", "m", "--sandbox", "local",
                   "--tool-mode", "native", "--yes", "fix it", timeout=300)
    assert run.code == 2, run.stdout + run.stderr
    assert url in run.stdout and said in run.stdout and "Is the server running" in run.stdout
    summary = run.summary()
    assert summary["status"] == "unreachable" and "gave up" not in summary["message"]
    assert "retry" not in run.kinds()  # not retried: nothing ever answered there
    assert (calc_repo / "calc.py").read_text() == before
    assert "omni/" not in git(calc_repo, "branch")  # it changed nothing, so it left no branch


def test_a_server_that_answered_once_is_retried_when_it_goes_away(calc_repo):
    from fake_server import FakeOpenAI

    with FakeOpenAI() as fake:
        fake.add({"text": "1. Look\n2. Finish"})
        url = fake.base_url
        proc = subprocess.Popen([sys.executable, "-m", "omni.cli", "--base-url", url, "--model", "m", "--sandbox",
                                 "local", "--tool-mode", "native", "--no-review", "--yes", "fix it"],
                                cwd=calc_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=clean_env())
        while len(fake.requests) < 1 and proc.poll() is None:
            time.sleep(0.05)
    out, _ = proc.communicate(timeout=300)  # the server is gone after the plan: the step request is retried
    assert proc.returncode == 1, out
    summary = json.loads(next((calc_repo / ".omni" / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["status"] == "model_error" and "gave up after" in summary["message"]


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
    assert "Goal: make add() add\n" in fake.requests[0]["messages"][1]["content"]  # after the system prompt
    assert "Goal: make mul() multiply\n" in fake.requests[1]["messages"][1]["content"]
    assert run.summary()["goal"] == "make mul() multiply"
    missing = run_omni(calc_repo, "--goal-file", str(tmp_path / "nope.txt"), fake=fake)
    assert missing.code == 2 and "cannot read the goal file" in missing.stderr


def test_help_works_outside_a_repo(tmp_path):
    run = run_omni(tmp_path, "--help")
    assert run.code == 0 and "--planner-model" in run.stdout and "--tool-mode" in run.stdout
