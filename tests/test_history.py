"""Past runs through the real CLI on a real repo: `last` and no name mean the last run, runs are listed
newest first with whether each was applied, applying twice says so, a run that changed nothing leaves
no branch, and --prune removes what unapplied runs left, after asking."""

from __future__ import annotations

import json
import sys

import pexpect
from conftest import clean_env, git, run_omni

PLAN = {"text": "1. Fix it\n2. Finish"}
FINISH = {"tool": "finish", "args": {"summary": "done"}}
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}}


def _branches(repo) -> list[str]:
    return [b.strip(" *") for b in git(repo, "branch", "--list", "omni/*").splitlines()]


def test_a_run_that_changed_nothing_leaves_no_branch(calc_repo, fake):
    fake.add(PLAN, FINISH, FINISH, FINISH)  # the gate sends it back (the test still fails), then accepts
    run = run_omni(calc_repo, "--yes", "look around", fake=fake, sandbox="local")
    assert run.summary()["status"] in ("finished", "flagged"), run.stdout + run.stderr
    assert run.summary()["changed_files"] == [] and run.summary()["branch"] == ""
    assert _branches(calc_repo) == []
    said = run_omni(calc_repo, "apply")
    assert said.code == 1 and "changed nothing" in said.stdout


def test_last_and_no_name_mean_the_last_run_and_apply_twice_says_already_applied(calc_repo, fake):
    fake.add(PLAN, FIX, FINISH)
    first = run_omni(calc_repo, "fix add", fake=fake, sandbox="local")  # no terminal, no --yes: not applied
    assert first.code == 0 and "return a - b" in (calc_repo / "calc.py").read_text()
    run_id = first.summary()["run_id"]
    assert "+    return a + b" in run_omni(calc_repo, "diff").stdout
    assert run_omni(calc_repo, "diff", "last").stdout == run_omni(calc_repo, "diff", run_id).stdout
    listed = run_omni(calc_repo, "runs").stdout
    assert run_id in listed and "applied" not in listed.replace("unapplied", "")
    applied = run_omni(calc_repo, "apply")
    assert applied.code == 0 and "return a + b" in (calc_repo / "calc.py").read_text(), applied.stdout
    again = run_omni(calc_repo, "apply", "last")
    assert again.code == 0 and "already applied" in again.stdout
    assert (calc_repo / "calc.py").read_text().count("return a + b") == 1
    row = next(line for line in run_omni(calc_repo, "runs").stdout.splitlines() if run_id in line)
    assert "applied" in row
    assert json.loads((first.run_dir / "summary.json").read_text())["applied"] is True
    undone = run_omni(calc_repo, "undo")
    assert undone.code == 0 and "return a - b" in (calc_repo / "calc.py").read_text()
    assert "applied" not in next(line for line in run_omni(calc_repo, "runs").stdout.splitlines() if run_id in line)


def test_runs_are_listed_newest_first_with_their_status(calc_repo, fake):
    fake.add(PLAN, FIX, FINISH, {"status": 401, "error": "invalid api key"})
    run_omni(calc_repo, "--yes", "first goal", fake=fake, sandbox="local")
    run_omni(calc_repo, "--yes", "second goal", fake=fake, sandbox="local")
    rows = run_omni(calc_repo, "runs").stdout.splitlines()
    assert "second goal" in rows[0] and "model_error" in rows[0]
    assert "first goal" in rows[1] and "finished" in rows[1]


def _summaries(repo) -> list[dict]:
    return [json.loads((f / "summary.json").read_text()) for f in sorted((repo / ".omni" / "runs").iterdir())]


def test_prune_asks_then_removes_branches_of_runs_never_applied(calc_repo, fake):
    fake.add(PLAN, FIX, FINISH, PLAN, FIX, FINISH)
    run_omni(calc_repo, "fix add", fake=fake, sandbox="local")  # not applied
    assert run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local").code == 0
    kept, applied = _summaries(calc_repo)
    assert applied["applied"] is True and kept["applied"] is False
    assert len(_branches(calc_repo)) == 2
    refused = run_omni(calc_repo, "runs", "--prune")  # no terminal: it will not ask, so it does nothing
    assert refused.code == 2 and "--yes" in refused.stderr and len(_branches(calc_repo)) == 2
    pruned = run_omni(calc_repo, "runs", "--prune", "--yes")
    assert pruned.code == 0 and "pruned 1 run" in pruned.stdout, pruned.stdout + pruned.stderr
    assert _branches(calc_repo) == [f"omni/{applied['run_id']}"]
    assert (calc_repo / ".omni" / "runs" / kept["run_id"] / "summary.json").exists()  # the record stays
    assert "nothing to prune" in run_omni(calc_repo, "runs", "--prune", "--yes").stdout


def test_no_runs_yet_and_an_unknown_run_are_clear(calc_repo):
    nothing = run_omni(calc_repo, "show")
    assert nothing.code == 2 and "no runs in this repository yet" in nothing.stderr
    assert run_omni(calc_repo, "runs").stdout.strip() == "no runs yet"


def test_last_continues_the_last_run_with_its_steps_outcome_and_diff(calc_repo, fake):
    fake.add(PLAN, FIX, FINISH, PLAN, FINISH, FINISH)
    first = run_omni(calc_repo, "fix add", fake=fake, sandbox="local")  # not applied (no terminal, no --yes)
    assert first.code == 0
    asked = len(fake.requests)
    second = run_omni(calc_repo, "--last", "now check mul too", fake=fake, sandbox="local")
    step = fake.requests[asked + 1]["messages"]  # the first step's request (after the plan's)
    context = step[0]["content"] + step[1]["content"]
    assert "This goal continues an earlier run" in context and "Its goal: fix add" in context
    assert "replace_in_file" in context and "-> ok" in context  # its steps, one line each
    assert "+    return a + b" in context and "NOT applied" in context  # its diff, and that it is not in the files
    assert "now check mul too" in context
    assert second.code in (0, 1)
    nothing = run_omni(calc_repo.parent, "--last", "x", fake=fake, sandbox="local")
    assert nothing.code == 2  # not in a repository


def test_last_with_no_goal_continues_the_last_runs_goal_and_its_unapplied_changes(calc_repo, fake):
    fake.add(PLAN, FIX, {"tool": "shell", "args": {"command": "sleep 30", "timeout": 40}})
    first = run_omni(calc_repo, "--max-steps", "1", "fix add", fake=fake, sandbox="local")  # stopped at a limit
    assert first.code == 3 and first.summary()["applied"] is False
    fake.add(PLAN, FINISH)
    second = run_omni(calc_repo, "--yes", "--last", fake=fake, sandbox="local")
    assert second.code == 0, second.stdout
    runs = sorted((calc_repo / ".omni" / "runs").iterdir())
    summary = json.loads((runs[-1] / "summary.json").read_text())
    assert summary["goal"] == "fix add" and f"Continues run {runs[0].name}" in second.stdout
    assert summary["applied"] is True and "return a + b" in (calc_repo / "calc.py").read_text()  # carried, applied
    assert summary["check"]["holds"] is True


def test_last_without_any_run_is_a_clear_error(calc_repo, fake):
    run = run_omni(calc_repo, "--last", "go on", fake=fake, sandbox="local")
    assert run.code == 2 and "no runs in this repository yet" in run.stderr and fake.requests == []


def test_prune_on_a_terminal_asks_and_no_keeps_everything(calc_repo, fake):
    fake.add(PLAN, FIX, FINISH)
    run_omni(calc_repo, "fix add", fake=fake, sandbox="local")  # not applied
    assert len(_branches(calc_repo)) == 1
    for answer, left in (("n", 1), ("y", 0)):
        child = pexpect.spawn(sys.executable, ["-m", "omni.cli", "runs", "--prune"], cwd=str(calc_repo),
                              env=clean_env(TERM="xterm"), encoding="utf-8", timeout=60)
        child.expect("never applied")
        child.expect(r"Delete them\? \[y/N\]")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == (1 if answer == "n" else 0)
        assert len(_branches(calc_repo)) == left
