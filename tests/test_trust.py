"""Honest outcomes through the real CLI: exit 0 only when the run's check holds, an unrelated failing test never
blocks, a feature goal costs no reproduction request, and the summary says how the result was checked."""

from __future__ import annotations

import json
import subprocess
import sys

import pexpect
import pytest
from conftest import CALC, clean_env, make_repo, run_omni

PLAN = {"text": "1. Fix add\n2. Finish", "plan": True}
FINISH = {"tool": "finish", "args": {"summary": "the goal is done"}}
UNRELATED = {"tool": "create_file", "args": {"path": "notes.txt", "content": "notes\n"}}
FIX_ADD = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                              "new_text": "return a + b"}}


@pytest.mark.docker
def test_finishing_three_times_without_fixing_the_goals_test_ends_unverified(calc_repo, fake, docker_engine):
    fake.add(PLAN, UNRELATED, FINISH, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add in calc.py", fake=fake)
    assert run.code == 1, run.stdout
    summary = run.summary()
    assert summary["status"] == "unverified"
    assert "test_calc.py::test_add" in summary["message"] and "the goal is done" in summary["message"]
    assert summary["check"]["holds"] is False and "test_calc.py::test_add" in summary["check"]["failing"][0]
    assert summary["applied"] is False and not (calc_repo / "notes.txt").exists()  # --yes never applies it
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["refine", "refine", "unverified"]
    assert "not verified" in run.stdout and "test_calc.py::test_add" in run.stdout


@pytest.mark.docker
def test_the_same_run_with_the_test_fixed_ends_verified(calc_repo, fake, docker_engine):
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add in calc.py", fake=fake)
    assert run.code == 0, run.stdout
    summary = run.summary()
    assert summary["status"] == "finished" and summary["applied"] is True
    assert summary["check"] == {"source": "tests failing at the start", "holds": True, "failing": [],
                                "unrelated": [], "asserts": []}  # the project's own tests: nothing to call out
    assert "verified: the run's check holds" in run.stdout


def test_a_failing_test_the_goal_is_not_about_is_reported_and_never_blocks(tmp_path, fake):
    repo = make_repo(tmp_path / "repo", {**CALC, "test_net.py": "def test_download():\n    assert False, 'no net'\n",
                                         "calc.py": CALC["calc.py"].replace("a - b", "a + b")})
    fake.add(PLAN, {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a * b",
                                                         "new_text": "return b * a"}}, FINISH)
    run = run_omni(repo, "--yes", "make mul in calc.py commutative", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    check = next(e for e in run.events() if e["kind"] == "check")
    assert check["unrelated"] == ["test_net.py::test_download"] and "do not block" in run.stdout
    assert run.summary()["check"]["source"] != "tests failing at the start"
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["accept"]


@pytest.mark.parametrize("name, content, left_out, said", [
    # needs a module the sandbox lacks: it cannot even import here
    ("test_calc_yaml.py", "import calc_yaml_support_not_installed_xyz\n\n\ndef test_yaml():\n    pass\n",
     "test_calc_yaml.py", "1 test(s) cannot run in the sandbox: they import calc_yaml_support_not_installed_xyz"),
    # its own code uses add and never imports it: no change to calc.py makes it pass
    ("test_calc_doc.py", "def test_add_doc():\n    assert add(1, 1) == 2\n", "test_calc_doc.py::test_add_doc",
     "1 test(s) fail before the run on a name their own code uses and never binds: add, which"),
])
def test_a_test_no_change_to_the_code_can_fix_is_never_the_check_and_the_user_is_told(tmp_path, fake, name, content,
                                                                                     left_out, said):
    # The file shares "calc" with the goal, so it would be the goal's.
    repo = make_repo(tmp_path / "repo", {**CALC, name: content})
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(repo, "--yes", "fix add in calc.py", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout + run.stderr
    check = next(e for e in run.events() if e["kind"] == "check")
    assert check["tests"] == ["test_calc.py::test_add"] and check["unrelated"] == [left_out], check
    (warning,) = [e["message"] for e in run.events() if e["kind"] == "warning" and e["message"].startswith(said)]
    assert said.split(": ", 1)[1] in " ".join(run.stdout.split())  # shown to the user too


def test_the_checks_tests_run_in_the_order_the_suite_runs_them(tmp_path, fake):
    # tests/conftest.py fills the session's doctest namespace; the docs' doctest, collected after tests/, uses it.
    # Run docs first (sorted), the doctest fails on a name no change to calc.py can bind.
    repo = make_repo(tmp_path / "repo", {
        "calc.py": CALC["calc.py"], "tests/test_calc.py": CALC["test_calc.py"],
        "pytest.ini": "[pytest]\ntestpaths = tests docs\naddopts = --doctest-glob=*.md\npythonpath = .\n",
        "tests/conftest.py": "import calc\nimport pytest\n\n\n@pytest.fixture(autouse=True)\n"
                             "def calc_for_doctests(doctest_namespace):\n    doctest_namespace['calc'] = calc\n",
        "docs/add.md": ">>> calc.add(2, 3)\n5\n"})
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(repo, "--yes", "fix add in calc.py so the failing tests pass", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout + run.stderr
    check = next(e for e in run.events() if e["kind"] == "check")
    assert check["tests"] == ["tests/test_calc.py::test_add", "docs/add.md::add.md"], check
    assert run.summary()["check"]["holds"] is True


def test_a_module_the_goal_asks_for_is_not_a_missing_installation():
    from omni.check.environment import not_installed
    from omni.goal.reading import read_goal

    missing = {"tests/test_shapes.py": "shapes", "tests/test_io.py": "yaml.loader"}
    assert not_installed(missing, read_goal("write shapes.py so that tests/test_shapes.py passes")) == \
        {"tests/test_io.py": "yaml.loader"}
    assert not_installed(missing, read_goal("read the config with yaml")) == {"tests/test_shapes.py": "shapes"}


def test_a_feature_goal_asks_for_no_reproduction_test_and_shows_no_red_mark(tmp_path, fake):
    repo = make_repo(tmp_path / "repo", {**CALC, "calc.py": CALC["calc.py"].replace("a - b", "a + b")})
    add_sub = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "def mul(a, b):",
                                                    "new_text": "def sub(a, b):\n    return a - b\n\n\ndef mul(a, b):"}}
    fake.add(PLAN, add_sub, FINISH)
    run = run_omni(repo, "--yes", "add a subtract function to calc.py", fake=fake, sandbox="local", reproduce=True)
    assert run.code == 0, run.stdout
    assert len(fake.requests) == 3  # the plan, the edit, the finish: no request for a reproduction test
    assert "✗ check" not in run.stdout
    assert run.summary()["check"]["source"] == "none" and "unchecked" in run.stdout
    assert "no reproduction that fails on the code as it was" in " ".join(run.stdout.split())


# ---- 2. apply is an informed choice ----------------------------------------------------------------------------
def spawn(repo, fake, *args, env_extra=None, reproduce=False):
    argv = ["-m", "omni.cli", "--no-review", "--no-finish-on-check", "--samples", "1",
            *([] if reproduce else ["--no-reproduce"]),
            "--base-url", fake.base_url, "--model", "fake-model", "--tool-mode", "native", "--sandbox", "local", *args]
    env = clean_env(COLUMNS="160", LINES="50", TERM="xterm", PAGER="cat", **(env_extra or {}))
    return pexpect.spawn(sys.executable, argv, cwd=str(repo), env=env, encoding="utf-8", timeout=60,
                         dimensions=(50, 160))


def test_the_apply_question_shows_the_diff_on_d_and_asks_again_on_anything_unknown(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH)
    child = spawn(calc_repo, fake, "fix add in calc.py")
    child.expect_exact("[y/N/d]")
    assert "the model wrote" not in child.before  # the project's own failing test is the check: no call-out
    child.sendline("?")
    child.expect_exact("Please answer y/n/d.")
    child.expect_exact("[y/N/d]")
    child.sendline("d")
    child.expect_exact("+    return a + b")
    child.expect_exact("[y/N/d]")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_check_the_model_wrote_is_said_with_what_it_asserts_before_the_apply_question(tmp_path, fake):
    """A run verified against a reproduction the model wrote: "verified" means what that asserts, so the change
    list says it, and where the user's own words would change it, before [y/N/d]. The project's own failing
    test as the check (the test above) is not called out."""
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n",
                                         "test_calc.py": "from calc import add\n\n\ndef test_zero():\n"
                                                         "    assert add(0, 0) == 0\n"})
    shows = {"text": json.dumps({"expression": "add(2, 2)", "expected": "4"})}
    fake.add(PLAN, shows, FIX_ADD, FINISH)
    child = spawn(repo, fake, "adding two numbers gives the wrong answer", reproduce=True)
    child.expect_exact("written by the model; it asserts: add(2, 2) == 4")  # in the live log, when it is settled
    child.expect_exact("note: the check these changes pass is a reproduction example the model wrote, not a test")
    child.expect_exact("it asserts: add(2, 2) == 4. If that is not what the code should do, answer n")
    child.expect_exact("[y/N/d]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "a - b" in (repo / "calc.py").read_text()
    summary = json.loads(next((repo / ".omni" / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["check"]["asserts"] == ["add(2, 2) == 4"] and summary["check"]["holds"] is True


def test_input_typed_ahead_during_the_run_is_not_taken_as_the_answer(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, {"tool": "shell", "args": {"command": "sleep 3", "timeout": 20}}, FINISH)
    child = spawn(calc_repo, fake, "fix add in calc.py")
    child.expect("sleep 3")
    child.send("y\r")  # typed ahead, say a next goal's first letter: it must not answer the question
    child.expect_exact("[y/N/d]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert "a - b" in (calc_repo / "calc.py").read_text()


def test_a_run_that_did_not_finish_is_said_and_asked_about_before_apply_and_undo_says_what_is(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, {"tool": "read_file", "args": {"path": "calc.py"}})
    stopped = run_omni(calc_repo, "--max-steps", "1", "fix add in calc.py", fake=fake, sandbox="local")
    assert stopped.code == 3 and stopped.summary()["status"] == "limit_steps"
    refused = run_omni(calc_repo, "apply")  # no terminal: only --yes goes on
    assert refused.code == 2 and "ended limit_steps" in refused.stderr and "--yes" in refused.stderr
    child = pexpect.spawn(sys.executable, ["-m", "omni.cli", "apply"], cwd=str(calc_repo), encoding="utf-8",
                          env=clean_env(TERM="xterm", PAGER="cat"), timeout=60)
    child.expect_exact("ended limit_steps")
    child.expect_exact("Apply it anyway? [y/N/d]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and "a - b" in (calc_repo / "calc.py").read_text()
    not_yet = run_omni(calc_repo, "undo")
    assert not_yet.code == 1 and "is not applied" in not_yet.stdout
    assert run_omni(calc_repo, "apply", "--yes").code == 0 and "a + b" in (calc_repo / "calc.py").read_text()
    assert run_omni(calc_repo, "undo").code == 0 and "a - b" in (calc_repo / "calc.py").read_text()
    again = run_omni(calc_repo, "undo")
    assert again.code == 1 and "is not applied" in again.stdout and "changed since" not in again.stdout


# ---- 3. honest cost -------------------------------------------------------------------------------------------------
def test_max_cost_on_a_model_without_a_known_price_stops_at_start(calc_repo, tmp_path):
    argv = ["--base-url", "https://models.example.com/v1", "--model", "fake", "--max-cost", "0.01", "fix add"]
    run = run_omni(calc_repo, *argv)
    assert run.code == 2 and "--price" in run.stderr and "fake" in run.stderr
    assert not (calc_repo / ".omni" / "runs").exists()


def test_a_local_endpoint_costs_local_never_dollars(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add in calc.py", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    usage = run.summary()["usage"]
    assert usage["cost_kind"] == "local" and ", local," in run.stdout and "$0.0000" not in run.stdout


def test_cost_unknown_is_shown_as_such_in_the_summary():
    from rich.console import Console

    from omni.run.ui import ConsoleUI

    ui = ConsoleUI()
    ui.console = Console(record=True, width=200)
    ui.emit("summary", run_id="r", status="finished", steps=1, wall_s=1.0, changed_files=[], applied=False,
            apply_note="", branch="", record="x", usage={"prompt_tokens": 1, "completion_tokens": 1, "cost": None,
                                                         "cost_kind": "unknown"})
    assert "cost unknown" in ui.console.export_text() and "$0.0000" not in ui.console.export_text()


# ---- 4. local models without ceremony ---------------------------------------------------------------------------
def local_run(repo, fake, *args, timeout=120):
    port = fake.base_url.split(":")[-1].split("/")[0]
    env = clean_env(OMNI_LOCAL_PORTS=f"1,{port}")  # where --local looks: nothing, then the scripted server
    argv = [sys.executable, "-m", "omni.cli", "--sandbox", "local", "--no-finish-on-check", "--samples", "1",
            "--no-reproduce", "--tool-mode", "native", *args]
    done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=env, timeout=timeout)
    return done


def test_local_finds_the_server_takes_its_one_model_and_the_small_profile(calc_repo):
    from fake_server import FakeOpenAI

    with FakeOpenAI(model="qwen2.5-coder-1.5b") as fake:
        fake.add(PLAN, FIX_ADD, FINISH)
        done = local_run(calc_repo, fake, "--local", "--yes", "fix add in calc.py")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "small-model profile" in done.stdout and "qwen2.5-coder-1.5b" in done.stdout
        step = fake.requests[1]
        assert step["model"] == "qwen2.5-coder-1.5b" and step["max_tokens"] == 1024
        assert len(step["tools"]) < 14  # the core tools, not all of them
        summary = json.loads(next((calc_repo / ".omni" / "runs").iterdir()).joinpath("summary.json").read_text())
        assert summary["profile"] == "small"


def test_with_nothing_configured_a_local_server_is_found_too_and_a_given_value_wins(calc_repo):
    from fake_server import FakeOpenAI

    with FakeOpenAI(model="qwen2.5-coder-1.5b") as fake:
        fake.add(PLAN, FIX_ADD, FINISH)
        done = local_run(calc_repo, fake, "--yes", "--max-tokens", "2048", "fix add in calc.py")
        assert done.returncode == 0, done.stdout + done.stderr
        assert fake.requests[1]["max_tokens"] == 2048  # the user's own value stays


def test_local_with_no_server_says_where_it_looked(calc_repo, fake):
    env = clean_env(OMNI_LOCAL_PORTS="1")
    done = subprocess.run([sys.executable, "-m", "omni.cli", "--local", "fix add"], cwd=calc_repo,
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "no model server answered" in done.stderr and "--base-url" in done.stderr


# ---- 5. every phase visible -------------------------------------------------------------------------------------
def test_every_phase_before_the_first_action_is_an_event_and_a_line(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add in calc.py", fake=fake, sandbox="local")
    phases = [e["name"] for e in run.events() if e["kind"] == "phase"]
    assert phases == ["reading the code the goal names", "planning", "waiting for the baseline tests",
                      "settling the run's check"]
    assert "· planning" in run.stdout


# ---- 6. words that match the facts --------------------------------------------------------------------------
def test_an_unquoted_goal_gets_a_hint_to_quote_it(calc_repo):
    run = run_omni(calc_repo, "fix", "the", "bug")
    assert run.code == 2 and 'quote it, omni "fix the bug"' in run.stderr


def test_a_flag_typo_says_did_you_mean_first(calc_repo):
    run = run_omni(calc_repo, "--mdoel", "m", "fix it")
    assert run.code == 2 and "did you mean --model?" in run.stderr.splitlines()[0]


def test_run_with_words_that_are_no_spec_file_is_a_goal(calc_repo, fake):
    fake.add(PLAN, FINISH, FINISH)
    argv = [sys.executable, "-m", "omni.cli", "run", "the", "tests"]
    env = clean_env(OMNI_BASE_URL=fake.base_url, OMNI_MODEL="fake-model", OMNI_SANDBOX="local",
                    OMNI_REVIEW="false", OMNI_REPRODUCE="false", OMNI_SAMPLES="1")
    done = subprocess.run(argv, cwd=calc_repo, capture_output=True, text=True, env=env, timeout=120)
    assert "Goal: run the tests" in done.stdout, done.stdout + done.stderr


def test_a_misspelt_config_key_gets_the_close_one(calc_repo):
    (calc_repo / ".omni").mkdir()
    (calc_repo / ".omni" / "config.toml").write_text("max_step = 7\n")
    run = run_omni(calc_repo, "config")
    assert run.code == 2 and "did you mean 'max_steps'?" in run.stderr


def test_session_words_that_are_commands_never_start_a_run(calc_repo, fake):
    child = pexpect.spawn(sys.executable, ["-m", "omni.cli", "--base-url", fake.base_url, "--model", "m",
                                           "--sandbox", "local"], cwd=str(calc_repo), encoding="utf-8",
                          env=clean_env(TERM="xterm"), timeout=60)
    child.expect("omni>")
    for word in ("clear", "help", "ls"):
        child.sendline(word)
        child.expect("omni>")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and fake.requests == [] and not (calc_repo / ".omni" / "runs").exists()


def test_the_briefing_line_says_what_it_added(tmp_path, fake):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC["calc.py"]})  # no tests at all
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(repo, "--yes", "fix add in calc.py", fake=fake, sandbox="local")
    briefings = [line for line in run.stdout.splitlines() if line.startswith("briefing:")]
    assert briefings == ["briefing: 5 line(s) added to the goal: Code the goal names"], run.stdout
