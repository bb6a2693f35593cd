"""Verified repair with the scripted model and a real sandbox: candidates are sampled, tried in a scratch
copy against the run's check, and the one that passes is applied; bad candidates and servers that do
not honour n are recorded, and none of them stops the run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import CALC, changed_line, git, make_repo, own_sandbox, run_omni
from fake_server import FakeOpenAI

from omni.run.events import problems


pytestmark = pytest.mark.docker

PLAN = {"text": "1. Fix add in calc.py\n2. Finish", "plan": True}
FINISH = {"tool": "finish", "args": {"summary": "add() adds"}}
PROPOSE = {"tool": "propose_fixes", "args": {"path": "calc.py", "symbol": "add", "note": "it subtracts"}}
WRONG_1 = "```python\ndef add(a, b):\n    return a + b + 1\n```"
WRONG_2 = "```python\ndef add(a, b):\n    return b - a\n```"
RIGHT = "```python\ndef add(a, b):\n    return a + b\n```"


def candidates(run) -> list[dict]:
    return [e for e in run.events() if e["kind"] == "candidate"]


def own_rounds(run) -> list[tuple[str, str, str]]:
    """(kind, symbol, why) of each round of omni's own, in order: the opening and the rungs after it."""
    return [(e["kind"], e["symbol"], e["why"]) for e in run.events() if e["kind"] in ("opening", "rung")]


def test_the_third_candidate_passes_and_is_the_one_applied(calc_repo, fake, docker_engine):
    fake.add(PLAN, PROPOSE, {"choices": [WRONG_1, WRONG_2, RIGHT]}, FINISH)
    run = run_omni(calc_repo, "--samples", "3", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [(c["id"], c["passes"], c["votes"]) for c in seen] == [(1, False, 1), (2, False, 1), (3, True, 1)]
    assert seen[0]["failing"] == ["test_calc.py::test_add"] and seen[0]["asked"] == "n"
    sampled = fake.requests[2]
    assert sampled["n"] == 3 and sampled["temperature"] == 0.8
    assert not any(r.get("max_tokens") == 1 for r in fake.requests)  # no llama.cpp slots here: nothing parked
    assert "without a docstring" not in sampled["messages"][-1]["content"]  # add has none: one may be added
    # a short conversation of its own: the goal, the check and the code; not the run's tools or history
    assert "tools" not in sampled and len(sampled["messages"]) == 2
    assert sampled["messages"][0]["content"].startswith("You are a careful Python programmer")
    asked = sampled["messages"][1]["content"]
    assert asked.startswith("The goal: make add() return the sum") and "def add(a, b):\n    return a - b" in asked
    assert "Code the goal names" not in asked
    # how the check fails on the code as it is: the assertion with its values, before any candidate was tried
    assert "How it fails now:\n```\ntest_calc.py::test_add\n" in asked and "E       assert 0 == 4" in asked
    assert asked.count("assert 0 == 4") == 1  # the message once: the trace says it
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert observation["success"] and "candidate 3 passes the check" in observation["output"]
    assert "+    return a + b" in (run.run_dir / "diff.patch").read_text()
    assert (calc_repo / "calc.py").read_text() == CALC["calc.py"]  # the user's tree: untouched until apply
    for shown in (run.stdout, run_omni(calc_repo, "show").stdout):  # the live log, and its replay
        assert "candidate 1 for calc.py:add: ✗ fails test_calc.py::test_add" in shown
        assert "candidate 3 for calc.py:add: ✓ passes the check (2 line(s), 1 vote(s))" in shown
    applied = subprocess.run([sys.executable, "-m", "omni.cli", "apply", run.summary()["run_id"]], cwd=calc_repo,
                             capture_output=True, text=True)
    assert applied.returncode == 0 and "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_second_round_is_shown_the_first_rounds_best_miss_and_its_failure(calc_repo, fake, docker_engine):
    """No candidate of the first round passes: the same call asks again, its note saying how the best one
    failed (the assertion, not its code) and how many were the code unchanged."""
    unchanged = "```python\ndef add(a, b):\n    return a - b\n```"
    fake.add(PLAN, PROPOSE, {"choices": [WRONG_1, unchanged]}, {"choices": [WRONG_2, RIGHT]}, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [(c["id"], c["passes"]) for c in seen] == [(1, False), (2, False), (3, False), (4, True)]
    again = fake.requests[3]["messages"][-1]["content"].split("Write a corrected version")[-1]
    assert "a rewrite tried before still failed: test_calc.py::test_add" in again and "assert 5 == 4" in again
    assert "1 rewrite(s) were the code unchanged" in again
    assert "return a + b + 1" not in again  # the miss's code is not shown: a small model would write it again
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert "4 candidate rewrites of add" in observation["output"] and "candidate 4 passes" in observation["output"]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_the_likeliest_mechanical_candidates_come_first_and_one_that_passes_settles_the_round(calc_repo, fake,
                                                                                           tmp_path, docker_engine):
    # A one-token bug (`-` for `+`): of the first one-change variants of the code as it is, `a + b` passes, and no
    # model is asked for a sample.
    fake.add(PLAN, PROPOSE, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert 1 <= len(seen) <= 8 and {c["asked"] for c in seen} == {"mechanical"}
    assert [c["code"].strip() for c in seen if c["passes"]] == ["def add(a, b):\n    return a + b"]
    assert not any(r.get("n") for r in fake.requests)  # the mechanical ones cost no model request
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert observation["success"] and f"{len(seen)} candidate rewrites of add" in observation["output"]
    assert "return a + b" in (calc_repo / "calc.py").read_text()
    with FakeOpenAI() as other:  # --no-mechanical: rounds of samples alone
        other.add(PLAN, PROPOSE, {"choices": [WRONG_1, WRONG_2]}, {"choices": [WRONG_2, RIGHT]}, FINISH)
        off = run_omni(make_repo(tmp_path / "off", CALC), "--yes", "--samples", "2", "make add() return the sum",
                       fake=other)
    assert off.code == 0 and [c["asked"] for c in candidates(off)] == ["n"] * 4


def test_when_no_mechanical_candidate_passes_the_samples_are_asked(tmp_path, fake, docker_engine):
    # Two tokens wrong (`a - b - 1`): no one-change variant passes, so a round of samples follows the first ones,
    # and its right rewrite is applied.
    repo = make_repo(tmp_path / "repo", {**CALC, "calc.py": CALC["calc.py"].replace("a - b", "a - b - 1")})
    fake.add(PLAN, PROPOSE, {"choices": [WRONG_1, RIGHT]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    asked = [c["asked"] for c in seen]
    assert asked[-2:] == ["n", "n"] and set(asked[:-2]) == {"mechanical"} and not any(c["passes"] for c in seen[:-2])
    assert [c["passes"] for c in seen[-2:]] == [False, True]
    assert sum(1 for r in fake.requests if r.get("n")) == 1
    assert "return a + b\n" in (repo / "calc.py").read_text()


def mechanical_round(tmp_path: Path, fake, module: str, code: str, test: str, wrong: str, goal: str):
    """A repository of one module and its test, a model that twice writes `wrong` for the module's one function,
    and a run that asks for fixes of it: the repository, and the candidates the run tried."""
    symbol = code.split("(")[0].removeprefix("def ")
    repo = make_repo(tmp_path / "repo", {module: code, f"test_{module}": test})
    fake.add(PLAN, {"tool": "propose_fixes", "args": {"path": module, "symbol": symbol}},
             {"choices": [f"```python\n{wrong}\n```"] * 2}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    return repo, candidates(run)


def test_mechanical_candidates_go_past_the_first_sixteen_when_trying_one_is_quick(tmp_path, fake, docker_engine):
    """The fix is a constant one off on the last of twenty lines of constants: the 17th one-change variant or later.
    The first eight miss and timed a try well under a second, so as many variants as fit in a minute are tried (up to
    64) before any sample is asked, and it is among them: the samples are never asked."""
    body = "".join(f"    v{n} = {n + 2}\n" for n in range(20))
    repo, tried = mechanical_round(tmp_path, fake, "table.py", f"def last(a):\n{body}    return a + 12\n",
                                   "from table import last\n\n\ndef test_last():\n    assert last(0) == 11\n",
                                   "def last(a):\n    return a - 12", "last(0) should be 11")
    assert {c["asked"] for c in tried} == {"mechanical"}  # the first eight, then the rest, and no samples
    mechanical = [c for c in tried if c["asked"] == "mechanical"]
    assert len(mechanical) > 16 and [c["code"].splitlines()[-1] for c in mechanical if c["passes"]] == \
        ["    return a + 11"]
    assert "return a + 11" in (repo / "table.py").read_text()


def test_two_statements_in_the_wrong_order_are_swapped_by_a_mechanical_candidate(tmp_path, fake, docker_engine):
    """The fault is the order of two statements, which no one-token change mends: after the one-change variants,
    among the first tried, the two neighbours swapped pass (leaving either out does not), and are applied."""
    lines = ['def escape(text):', '    text = text.replace("<", "&lt;")', '    text = text.replace("&", "&amp;")',
             "    return text", ""]
    repo, tried = mechanical_round(
        tmp_path, fake, "markup.py", "\n".join(lines),
        'from markup import escape\n\n\ndef test_escape():\n    assert escape("<") == "&lt;"\n'
        '    assert escape("&") == "&amp;"\n', 'def escape(text):\n    return text.replace("<", "&lt;")',
        "escape('<') gives '&amp;lt;'")
    mechanical = [c for c in tried if c["asked"] == "mechanical"]
    passing = [c["code"] for c in mechanical if c["passes"]]
    assert len(passing) == 1 and passing[0].index('"&amp;"') < passing[0].index('"&lt;"')
    # each call's arguments swapped, one argument of the first left out, the first statement left out, the two
    # swapped: the fifth of the first eight tried passes, and settles the round
    assert [c["passes"] for c in mechanical] == [False] * 4 + [True] + [False] * 3
    assert (repo / "markup.py").read_text() == "\n".join([lines[0], lines[2], lines[1], *lines[3:]])


def test_candidates_that_are_all_the_code_unchanged_are_said_to_be(calc_repo, fake, docker_engine):
    unchanged = "```python\ndef add(a, b):\n    return a - b\n```"
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add(PLAN, PROPOSE, {"choices": [unchanged, unchanged]}, {"choices": [unchanged, unchanged]}, fix, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert "none of the 4 candidate rewrites of add could be applied (each was the code as it is now)" \
        in observation["error"]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_candidate_that_breaks_the_modules_other_tests_ranks_below_one_that_does_not(tmp_path, fake, docker_engine):
    repo = make_repo(tmp_path / "repo", {**CALC, "tests/test_more.py": "from calc import add\n\n\n"
                                         "def test_add_zero():\n    assert add(5, 0) == 5\n"})
    breaks = "```python\ndef add(a, b):\n    return a * b\n```"  # passes the check (2 * 2), breaks add(5, 0)
    fake.add(PLAN, PROPOSE, {"choices": [breaks, RIGHT]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    first, second = candidates(run)
    assert first["passes"] and first["breaks"] == ["tests/test_more.py::test_add_zero"]
    assert second["passes"] and second["breaks"] == []
    assert "candidate 1 for calc.py:add: ✗ passes the check but breaks tests/test_more.py::test_add_zero" in run.stdout
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert "candidate 2 passes the check" in observation["output"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_candidates_are_shown_the_definition_without_its_docstring_and_the_applied_one_keeps_it(tmp_path, fake,
                                                                                               docker_engine):
    doc = '    """Add two numbers.\n\n    Long prose a small model would copy into every candidate.\n    """\n'
    mul_ = "\n\ndef mul(a, b):\n    return a * b\n"
    repo = make_repo(tmp_path / "repo", {**CALC, "calc.py": "def add(a, b):\n" + doc + "    return a - b\n" + mul_})
    fake.add(PLAN, PROPOSE, {"choices": [WRONG_1, RIGHT]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    asked = fake.requests[2]["messages"][-1]["content"].split("Write a corrected version")[-1]
    assert "def add(a, b):\n    return a - b\n```" in asked and "Long prose" not in asked
    assert "to its\nend, without a docstring." in asked  # it keeps its own
    assert (repo / "calc.py").read_text() == "def add(a, b):\n" + doc + "    return a + b\n" + mul_


def test_a_server_that_ignores_n_gets_the_rest_one_by_one(calc_repo, fake, docker_engine):
    fake.add(PLAN, PROPOSE, {"choices": [WRONG_1]}, {"text": "I think add is fine."}, {"text": RIGHT}, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "3", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [c["asked"] for c in seen] == ["sequential"] * 3
    assert [c["parsed"] for c in seen] == [True, False, True]  # a reply without code is recorded, not tried
    assert seen[1]["error"] == "no code block in the reply" and seen[2]["passes"]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_one_slot_server_refusing_n_and_no_passing_candidate_leave_the_run_going(calc_repo, fake,
                                                                                   docker_engine):
    refused = {"status": 400, "error": "Value must be between 1 <= value <= 1"}
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add(PLAN, PROPOSE, refused, {"text": WRONG_1}, {"text": WRONG_2}, {"text": WRONG_2}, {"text": WRONG_1},
             fix, FINISH)  # n refused once per endpoint: both rounds ask one by one
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert not observation["success"] and "none passes the check" in observation["error"]
    assert "return a + b + 1" in observation["error"]  # the best candidate, and what it did to the check
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_refused_rewrite_brings_the_next_rung(calc_repo, fake, docker_engine):
    broken = {"tool": "replace_symbol", "args": {"path": "calc.py", "symbol": "add",
                                                 "new_source": "def add(a, b):\n    return a +\n"}}
    fake.add(PLAN, broken, {"choices": [WRONG_1, RIGHT]}, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "replace_symbol")
    assert observation["success"] and "Your rewrite was refused" in observation["output"]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_samples_1_turns_it_off(calc_repo, fake, docker_engine):
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add(PLAN, fix, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "1", "make add() return the sum", fake=fake)
    assert run.code == 0
    assert "propose_fixes" not in [t["function"]["name"] for t in fake.requests[1]["tools"]]


def test_propose_fixes_for_a_name_that_is_neither_defined_nor_called_by_the_check_is_a_clear_error(calc_repo, fake,
                                                                                                     docker_engine):
    """A misspelled target is not taken for a new function: only a name the check's examples call is."""
    typo = {"tool": "propose_fixes", "args": {"path": "calc.py", "symbol": "ad"}}
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add(PLAN, typo, fix, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert not observation["success"] and "'ad'" in observation["error"] and not candidates(run)
    assert len(fake.requests) == 4  # the plan, and three steps: no sampling request


def test_a_candidate_that_hangs_its_check_is_cut_and_the_others_still_tried(tmp_path, docker_engine):
    with own_sandbox(tmp_path, "hang", CALC) as box:
        hang = "def add(a, b):\n    while True:\n        pass\n"
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "candidates": [hang, RIGHT[10:-4]],
                                           "tests": ["test_calc.py::test_add"], "timeout": 5}, 60)
        assert tried.success, tried.error
        first, second = tried.details["outcomes"]
        assert not first["passes"] and first["failing"] == ["(the tests timed out)"]
        assert second["passes"]
        assert (box.workspace / "calc.py").read_text() == CALC["calc.py"]  # only a scratch copy was changed


def test_a_candidate_that_hangs_is_cut_at_a_multiple_of_what_the_check_takes_not_at_the_whole_timeout(
        tmp_path, docker_engine):
    """No timeout given: the check takes about a second on the code as it is, so a candidate that loops forever is
    cut long before the tool's own five minutes, well inside the 90 s this call is given."""
    with own_sandbox(tmp_path, "hang", CALC) as box:
        hang = "def add(a, b):\n    while True:\n        pass\n"
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "candidates": [hang, hang + "\n#",
                                                                                              RIGHT[10:-4]],
                                           "tests": ["test_calc.py::test_add"]}, 90)
        assert tried.success, tried.error
        outcomes = tried.details["outcomes"]
        assert [o["failing"] for o in outcomes[:2]] == [["(the tests timed out)"]] * 2 and outcomes[2]["passes"]


def test_an_edit_that_lands_but_leaves_the_check_failing_brings_the_rung(calc_repo, fake, docker_engine):
    """The model's own edit is written, test_add still fails: omni samples rewrites of the definition the
    edit changed, applies the one that passes, and (the check passing now) the gate finishes the run."""
    lands = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "b - a"}}
    fake.add(PLAN, lands, {"choices": [WRONG_1, RIGHT]})
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake,
                   finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    observation = next(e for e in run.events() if e["kind"] == "observation")
    assert observation["success"] and "check still failed after this edit, so omni tried rewrites of add" \
        in observation["output"] and "candidate 2 passes the check" in observation["output"]
    assert "an edit to it landed, and the check still fails" in fake.requests[2]["messages"][-1]["content"]
    assert [c["passes"] for c in candidates(run)] == [False, True]
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["accept"]
    assert len(fake.requests) == 3 and run.summary()["steps"] == 1
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_candidate_breaks_the_tests_the_edit_before_it_broke(tmp_path, fake, docker_engine):
    """Run U, pathspec-normalize-dot: the model's edit leaves test_add failing and breaks test_add_zero,
    which passed at the start. A rewrite that passes test_add but leaves test_add_zero broken breaks it (it
    is measured against the run's start, not the workspace the edit left); the one that breaks nothing is
    applied, and the finish gate accepts."""
    repo = make_repo(tmp_path / "repo", {**CALC, "tests/test_keep.py": "from calc import add\n\n\n"
                                         "def test_add_zero():\n    assert add(5, 0) == 5\n"})
    lands = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a - b - 1"}}
    times = "```python\ndef add(a, b):\n    return a * b\n```"
    fake.add(PLAN, lands, {"choices": [times, RIGHT]})
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    first, second = candidates(run)
    assert first["passes"] and first["breaks"] == ["tests/test_keep.py::test_add_zero"]
    assert second["passes"] and second["breaks"] == []
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["accept"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_a_definition_gets_two_rounds_of_candidates_and_no_more(calc_repo, fake, docker_engine):
    def broken(n: int) -> dict:
        return {"tool": "replace_symbol", "args": {"path": "calc.py", "symbol": "add",
                                                   "new_source": f"def add(a, b):\n    return a +{' ' * n}\n"}}

    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    fake.add(PLAN, broken(1), {"choices": [WRONG_1, WRONG_2]}, {"choices": [WRONG_2, WRONG_2]}, broken(2),
             {"choices": [WRONG_1, WRONG_1]}, {"choices": [WRONG_2, WRONG_1]}, broken(3), PLAN, fix, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)  # two calls of two rounds each; three failures on one plan step: a replan
    assert [c["id"] for c in seen] == [1, 2, 3, 4, 1, 2, 3, 4]
    assert [c["votes"] for c in seen[4:]] == [2, 2, 1, 3]  # equal code in a call is one candidate: its votes so far
    refused = [e for e in run.events() if e["kind"] == "observation" and e["tool"] == "replace_symbol"]
    assert ["omni also tried rewrites" in r["error"] for r in refused] == [True, True, False]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_the_opening_round_repairs_the_localized_definition_before_the_model_acts(calc_repo, fake, docker_engine):
    """test_add fails and is named after add: omni's first action is propose_fixes on add; a candidate
    passes, the check passes, and the gate finishes the run without one step from the model, and without a plan
    nothing read (the planner is asked when something first reads the plan)."""
    fake.add({"choices": [WRONG_1, RIGHT]})
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake,
                   finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    opening = next(e for e in run.events() if e["kind"] == "opening")
    assert (opening["path"], opening["symbol"]) == ("calc.py", "add") and "test_calc.py::test_add" in opening["why"]
    action = next(e for e in run.events() if e["kind"] == "action")
    assert action["tool"] == "propose_fixes" and action["args"] == {"path": "calc.py", "symbol": "add"}
    assert [c["passes"] for c in candidates(run)] == [False, True]
    assert len(fake.requests) == 1 and fake.requests[0]["n"] == 2  # the candidates: no plan, no step request
    assert "omni starts by trying rewrites of add in calc.py" in run.stdout
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def opening_round(repo, goal: str, right: str, fake) -> dict:
    """A run whose opening round is asked for two rewrites, both `right`, and finishes on them: its one opening
    event (where the round went, and why)."""
    fake.add(PLAN, {"choices": [right, right]})
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    return opening


def test_with_no_word_of_the_goal_to_go_on_the_opening_round_goes_where_only_the_failing_test_goes(tmp_path, fake,
                                                                                                  docker_engine):
    """The goal names no code, and the failing test calls two functions: the line coverage of the failing and the
    passing tests (spectrum) points to the one definition only the failing test runs all of."""
    repo = make_repo(tmp_path / "repo", {
        "stats.py": ("def middle(xs):\n    xs = sorted(xs)\n    if len(xs) % 2:\n        return xs[len(xs) // 2]\n"
                     "    return (xs[len(xs) // 2] + xs[len(xs) // 2]) / 2\n\n\n"
                     "def width(xs):\n    return max(xs) - min(xs)\n"),
        "test_stats.py": ("from stats import middle, width\n\n\ndef test_odd():\n"
                          "    assert middle([3, 1, 2]) == 2\n\n\ndef test_even():\n"
                          "    assert middle([4, 1, 3, 2]) == 2.5\n    assert width([1, 5]) == 4\n\n\n"
                          "def test_width():\n    assert width([1, 5]) == 4\n")})
    right = ("```python\ndef middle(xs):\n    xs = sorted(xs)\n    if len(xs) % 2:\n        return xs[len(xs) // 2]\n"
             "    return (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2\n```")
    opening = opening_round(repo, "the average of the two middle values is wrong for even lists", right, fake)
    assert (opening["path"], opening["symbol"]) == ("stats.py", "middle") and "spectrum score 1.00" in opening["why"]
    assert "xs[len(xs) // 2 - 1]" in (repo / "stats.py").read_text()


HELPER = "def _combine(a, b):\n    return a - b\n\n\ndef add(a, b):\n    return _combine(a, b)\n\n\n"


def helper_rounds(tmp_path, fake, tests: str, goal: str):
    """calc.py's add calls a helper that subtracts; no rewrite of add can fix it. The run's three rounds: add twice
    (two rewrites each, neither passes), then the helper (the right one); the run and its opening and rung events."""
    repo = make_repo(tmp_path / "repo", {"calc.py": HELPER + "def double(a):\n    return a * 2\n\n\n"
                                                           "def sub(a, b):\n    return a - b\n", "test_calc.py": tests})
    add_1 = "```python\ndef add(a, b):\n    return _combine(b, a)\n```"
    add_2 = "```python\ndef add(a, b):\n    return _combine(a, b) * 1\n```"
    right = "```python\ndef _combine(a, b):\n    return a + b\n```"
    fake.add(PLAN, {"choices": [add_1, add_2]}, {"choices": [add_2, add_1]}, {"choices": [right, right]})
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    assert len(fake.requests) == 3  # three rounds of candidates: the model took no step, so no plan was asked for
    assert "return a + b" in (repo / "calc.py").read_text()
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    (after,) = [e for e in run.events() if e["kind"] == "rung"]
    return run, opening, after


def test_when_the_first_target_yields_no_fix_omni_tries_the_next_one_the_tests_point_to(tmp_path, fake,
                                                                                       docker_engine):
    """The failing test is named after add, so the opening round rewrites add; the bug is in the helper add calls.
    No rewrite of add passes, so omni's next round goes where the spectrum points next (the helper, which only the
    failing test runs), before the model takes one step."""
    tests = ("from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
             "def test_double():\n    assert double(2) == 4\n")
    run, opening, after = helper_rounds(tmp_path, fake, tests, "make add() return the sum")
    assert opening["symbol"] == "add" and "named after it" in opening["why"]
    assert after["symbol"] == "_combine" and "spectrum score" in after["why"] and "found no fix" in after["why"]
    actions = [e for e in run.events() if e["kind"] == "action"]
    assert [(a["tool"], a["args"]["symbol"]) for a in actions] == [("propose_fixes", "add"),
                                                                  ("propose_fixes", "_combine")]


def test_with_only_the_goals_example_to_go_on_the_next_round_goes_where_the_example_runs_and_the_tests_do_not(
        tmp_path, fake, docker_engine):
    """No test fails; the check is the goal's example, which calls add, so the opening round rewrites add; the bug is
    in the helper add calls. The example, run as a test under the tracer beside the tests of the code it ran, is the
    failing side of the spectrum: the helper, which no passing test runs, is the next round's target."""
    tests = ("from calc import double, sub\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
             "def test_sub():\n    assert sub(3, 2) == 1\n")
    run, opening, after = helper_rounds(tmp_path, fake, tests, "add(2, 3) returns -1 instead of 5")
    (check,) = [e for e in run.events() if e["kind"] == "check"]
    assert check["source"] == "goal examples" and check["tests"] == []
    assert opening["symbol"] == "add"
    assert after["symbol"] == "_combine" and "spectrum score 1.00" in after["why"], after


def test_when_the_tests_point_to_two_definitions_alike_the_opening_round_tries_the_first(tmp_path, fake,
                                                                                         docker_engine):
    """The failing test runs two functions and no passing test runs either: they score alike, so no rule names one;
    the opening round still goes to the spectrum's first (and the next would follow if it found no fix)."""
    repo = make_repo(tmp_path / "repo", {
        "stats.py": "def hi(xs):\n    return min(xs)\n\n\ndef lo(xs):\n    return min(xs)\n",
        "test_stats.py": "from stats import hi, lo\n\n\ndef test_span():\n    assert hi([1, 5]) - lo([1, 5]) == 4\n"})
    right = "```python\ndef hi(xs):\n    return max(xs)\n```"
    opening = opening_round(repo, "the span of a list comes out as zero", right, fake)
    assert (opening["path"], opening["symbol"]) == ("stats.py", "hi") and "spectrum score 1.00" in opening["why"]
    assert "return max(xs)" in (repo / "stats.py").read_text()


def test_a_repr_that_only_a_failed_asserts_report_runs_is_no_suspect(tmp_path, fake, docker_engine):
    """pytest formats the values of a failed assert, so Money.__repr__ runs in the failing test only, as the buggy
    method does: the spectrum ranks them alike, and the display method is left out of the suspects."""
    repo = make_repo(tmp_path / "repo", {
        "money.py": ("class Money:\n    def __init__(self, cents):\n        self.cents = cents\n\n"
                     "    def __repr__(self):\n        return f'Money({self.cents})'\n\n"
                     "    def __eq__(self, other):\n        return self.cents == other.cents\n\n"
                     "    def plus(self, other):\n        return Money(self.cents - other.cents)\n\n\n"
                     "def total(items):\n    return sum(item.cents for item in items)\n"),
        "test_money.py": ("from money import Money, total\n\n\ndef test_sum_of_two():\n"
                          "    assert Money(1).plus(Money(2)) == Money(total([Money(3)]))\n\n\n"
                          "def test_equal():\n    assert Money(1) == Money(1)\n\n\n"
                          "def test_total():\n    assert total([Money(1)]) == 1\n")})
    right = "```python\ndef plus(self, other):\n    return Money(self.cents + other.cents)\n```"
    opening = opening_round(repo, "adding money gives the wrong amount", right, fake)
    assert opening["symbol"] == "Money.plus" and "spectrum score 1.00" in opening["why"]
    assert "self.cents + other.cents" in (repo / "money.py").read_text()


def written_new(repo, fake, goal: str, choices: list[str]):
    """A run whose opening round writes a definition not written yet from two sampled candidates: the run (ended
    well) and its opening event."""
    fake.add(PLAN, {"choices": choices})
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    return run, next(e for e in run.events() if e["kind"] == "opening")


def test_the_opening_round_writes_a_function_the_goal_asks_for_and_lists_it_in_all(tmp_path, fake, docker_engine):
    """A feature goal: its example calls count_reps, which nothing defines yet, and it names pkg/seqs.py.
    The candidates are new functions, shown the file's imports; the one that passes is added at the end
    of the file and listed in its __all__, so the package exports it."""
    seqs = ("from collections import defaultdict\n\n__all__ = ['count_by']\n\n\n"
            "def count_by(f, seq):\n    result = defaultdict(int)\n    for item in seq:\n"
            "        result[f(item)] += 1\n    return result\n")
    repo = make_repo(tmp_path / "repo", {"pkg/__init__.py": "from pkg.seqs import *  # noqa: F403\n",
                                         "pkg/seqs.py": seqs})
    unimported = "```python\ndef count_reps(seq):\n    return dict(Counter(seq))\n```"  # F821: refused
    right = ("```python\ndef count_reps(seq):\n    result = defaultdict(int)\n    for item in seq:\n"
             "        result[item] += 1\n    return dict(result)\n```")
    goal = "Add count_reps(seq) to pkg/seqs.py, importable as pkg.count_reps: count_reps([0, 1, 0]) == {0: 2, 1: 1}"
    run, opening = written_new(repo, fake, goal, [unimported, right])
    assert (opening["path"], opening["symbol"]) == ("pkg/seqs.py", "count_reps") and "not written yet" in opening["why"]
    asked = fake.requests[0]["messages"][-1]["content"].split("Write `count_reps`")[-1]
    assert "a new function to add at the end of pkg/seqs.py" in asked
    assert "from collections import defaultdict\n```" in asked
    assert "with a one-line\ndocstring" in asked  # a new public function is documented (funcy's test_docs)
    assert "How it fails now:\n```\nthe goal's example `count_reps([0, 1, 0]) == {0: 2, 1: 1}` does not hold: " \
           "count_reps([0, 1, 0]) raises" in asked
    first, second = candidates(run)
    assert not first["applied"] and "rolled back" in first["error"] and second["passes"]
    written = (repo / "pkg/seqs.py").read_text()
    assert written.startswith(seqs.replace("['count_by']", "['count_by', 'count_reps']"))
    assert written.endswith("        result[item] += 1\n    return dict(result)\n")
    exported = subprocess.run([sys.executable, "-c", "from pkg import count_reps; print(count_reps('aba'))"],
                              cwd=repo, capture_output=True, text=True)
    assert exported.stdout.strip() == "{'a': 2, 'b': 1}", exported.stderr


def test_the_opening_round_writes_a_method_the_goal_asks_for_into_its_class(tmp_path, fake, docker_engine):
    """A feature goal names Range.overlaps, which class Range in shapes.py lacks, and a failing test calls it:
    the candidates are new methods, asked for as such, and the one that passes goes at the end of the class."""
    shapes = ("class Range:\n    def __init__(self, low, high):\n        self.low, self.high = low, high\n\n"
              "    def width(self):\n        return self.high - self.low\n\n\nEMPTY = Range(0, 0)\n")
    test = ("from shapes import Range\n\n\ndef test_overlaps():\n    assert Range(0, 5).overlaps(Range(4, 9))\n"
            "    assert not Range(0, 5).overlaps(Range(6, 9))\n")
    repo = make_repo(tmp_path / "repo", {"shapes.py": shapes, "test_shapes.py": test})
    wrong = "```python\ndef overlaps(self, other):\n    return True\n```"
    right = ("```python\ndef overlaps(self, other):\n    \"\"\"Whether the two share a point.\"\"\"\n"
             "    return self.low <= other.high and other.low <= self.high\n```")
    goal = "Feature request: Range.overlaps(other) in shapes.py, true when two ranges share a point"
    run, opening = written_new(repo, fake, goal, [wrong, right])
    assert (opening["path"], opening["symbol"]) == ("shapes.py", "Range.overlaps"), opening
    asked = fake.requests[0]["messages"][-1]["content"]
    assert "a new method to add at the end of class `Range` in shapes.py" in asked and "new method in one" in asked
    first, second = candidates(run)
    assert not first["passes"] and second["passes"]
    written = (repo / "shapes.py").read_text()
    assert "        return self.high - self.low\n\n    def overlaps(self, other):\n" in written
    assert written.endswith("\n\n\nEMPTY = Range(0, 0)\n")


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_an_opening_round_that_finds_nothing_is_in_the_models_history(calc_repo, fake, docker_engine, tool_mode):
    """No candidate passes: the model's first step sees omni's call and its best failing candidate, as
    its own turn (a tool call in native mode, a tool_call block in text mode), and goes on from there."""
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    if tool_mode == "native":
        fake.add(PLAN, {"choices": [WRONG_1, WRONG_2]}, {"choices": [WRONG_2, WRONG_1]}, fix, FINISH)
    else:  # a text-mode model writes its calls as tool_call blocks; this server answers n with one choice
        calls = [{"text": "```tool_call\n" + json.dumps({"name": t["tool"], "arguments": t["args"]}) + "\n```"}
                 for t in (fix, FINISH)]
        fake.add(PLAN, *[{"text": w} for w in (WRONG_1, WRONG_2, WRONG_2, WRONG_1)], *calls)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake,
                   tool_mode=tool_mode, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    step = fake.requests[3 if tool_mode == "native" else 5]  # after two rounds of candidates, then the plan
    said = [m for m in step["messages"] if m["role"] == "assistant"][0]
    if tool_mode == "native":
        assert said["tool_calls"][0]["function"]["name"] == "propose_fixes"
        assert step["messages"][step["messages"].index(said) + 1]["role"] == "tool"
    else:
        assert '"name": "propose_fixes"' in said["content"]
    sent = json.dumps(step["messages"])
    assert "none passes the check" in sent and "return a + b + 1" in sent  # the best candidate, and its failure
    assert run.summary()["steps"] == 3 and "return a + b" in (calc_repo / "calc.py").read_text()


def test_when_no_rule_names_a_definition_omni_tries_the_suspects_then_hands_over_to_the_model(tmp_path, fake,
                                                                                            docker_engine):
    """test_sum is named after nothing and calls two functions of the project, which the spectrum ranks alike: omni's
    own rounds try each (add first), none finds a fix, and the model's steps begin with no third round."""
    test = "from calc import add, mul\n\n\ndef test_sum():\n    assert add(2, 2) == mul(2, 2)\n"
    repo = make_repo(tmp_path / "repo", {**CALC, "test_calc.py": test})
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    mul_1, mul_2 = ("```python\ndef mul(a, b):\n    return a * b + 1\n```",
                    "```python\ndef mul(a, b):\n    return a ** b + 1\n```")
    fake.add(PLAN, {"choices": [WRONG_1, WRONG_2]}, {"choices": [WRONG_2, WRONG_1]}, {"choices": [mul_1, mul_2]},
             {"choices": [mul_2, mul_1]}, fix, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make the sum right", fake=fake, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    (after,) = [e for e in run.events() if e["kind"] == "rung"]
    assert (opening["symbol"], after["symbol"]) == ("add", "mul") and "spectrum score" in opening["why"]
    assert [a["tool"] for a in run.events() if a["kind"] == "action"] == ["propose_fixes", "propose_fixes",
                                                                         "replace_in_file", "finish"]
    assert len(candidates(run)) == 8 and "return a + b" in (repo / "calc.py").read_text()


def test_a_near_miss_gives_its_definition_the_next_round_told_how_the_tests_broke(tmp_path, fake, docker_engine):
    """add forgets b, and no one-change edit adds it. The opening round's best candidate passes test_add and breaks
    test_add_zero beside it: the place is right, so omni's next round is on add again, before any other suspect
    or the model's steps, and its request says which test broke and how; its right candidate is applied."""
    test = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
            "def test_add_zero():\n    assert add(5, 0) == 5\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a\n", "test_calc.py": test})
    times = "```python\ndef add(a, b):\n    return a * b\n```"  # 2 * 2 is 4, but 5 * 0 is not 5
    fake.add(PLAN, {"choices": [times, WRONG_1]}, {"choices": [WRONG_2, WRONG_1]}, {"choices": [WRONG_1, RIGHT]})
    run = run_omni(repo, "--yes", "--samples", "2", "fix add: adding two numbers gives the wrong answer", fake=fake,
                   opening_repair=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    rounds = own_rounds(run)
    assert [r[:2] for r in rounds] == [("opening", "add"), ("rung", "add")]
    assert rounds[1][2] == "rewrites of it passed the check and broke tests that passed before"
    third = fake.requests[2]["messages"][-1]["content"]
    assert "a rewrite that made the check pass broke test_calc.py::test_add_zero" in third and "assert 0 == 5" in third
    assert [r.get("n") for r in fake.requests] == [2, 2, 2]  # three rounds of samples: no plan, no step
    assert "return a + b" in (repo / "calc.py").read_text()


def test_the_plan_is_asked_for_only_when_the_model_is_next_asked_not_between_omnis_own_rounds(tmp_path, fake,
                                                                                               docker_engine):
    """The opening round finds no fix and the next action is omni's own round again, which reads no plan: the plan
    request waits until the model's first step, whose prompt is the correction of the last round (mul's), with the
    plan in view; every round's failure is still in the record and the live log as it happens."""
    test = "from calc import add, mul\n\n\ndef test_sum():\n    assert add(2, 2) == mul(2, 2)\n"
    repo = make_repo(tmp_path / "repo", {**CALC, "test_calc.py": test})
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    mul_wrong = "```python\ndef mul(a, b):\n    return a * b + 1\n```"
    fake.add(PLAN, *[{"choices": [WRONG_1, WRONG_2]}] * 2, *[{"choices": [mul_wrong, mul_wrong]}] * 2, fix, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make the sum right", fake=fake, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    asked = ["plan" if "high-level plan" in str(r["messages"][-1]["content"]) else "samples" if r.get("n") else "step"
             for r in fake.requests]
    assert asked == ["samples"] * 4 + ["plan", "step", "step"]
    first_step = fake.requests[5]["messages"][-1]["content"]
    assert "Action: propose_fixes" in first_step and '"symbol": "mul"' in first_step and "Plan:" in first_step
    corrections = [e for e in run.events() if e["kind"] == "correction"]
    assert [c["failure"] for c in corrections] == ["tests_failed", "tests_failed"] and corrections[0]["prompt"] == ""
    assert run.stdout.count("recovering from: tests failed") == 2
    assert "return a + b" in (repo / "calc.py").read_text()


def test_when_omnis_own_rounds_are_done_the_model_hears_the_suspects_left(tmp_path, fake, docker_engine):
    """test_sum runs four functions that nothing else runs, so the spectrum ranks them alike: omni's own rounds try
    three (add, mul, neg: no candidate has code), and the last round's observation names the fourth, with its line,
    for the model's steps."""
    code = ("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\n"
            "def neg(a):\n    return -a\n\n\ndef sub(a, b):\n    return a - b\n")
    test = ("from calc import add, mul, neg, sub\n\n\n"
            "def test_sum():\n    assert add(2, 2) == mul(2, 2) + neg(sub(0, 0))\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": code, "test_calc.py": test})
    nothing = {"choices": ["no idea", "no idea"]}
    fake.add(*[nothing] * 6, PLAN, FINISH, FINISH, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "--max-steps", "4", "make the sum right", fake=fake,
                   opening_repair=True)
    rounds = [e["symbol"] for e in run.events() if e["kind"] in ("opening", "rung")]
    assert rounds == ["add", "mul", "neg"]
    said = [e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes"]
    assert [o["success"] for o in said] == [False] * 3
    assert all("also point to" not in o["error"] for o in said[:2])
    assert said[2]["error"].endswith("omni's own rounds are done. The failing tests also point to, best first: sub "
                                     "in calc.py (line 14). Read the likeliest, then fix it (propose_fixes tries "
                                     "rewrites of one).")
    steps = [r for r in fake.requests if not r.get("n") and "high-level plan" not in str(r["messages"][-1]["content"])]
    assert "sub in calc.py (line 14)" in json.dumps(steps[0]["messages"])  # the model's first step


def test_a_candidate_that_breaks_a_neighbour_of_the_check_test_in_its_own_file_breaks(tmp_path, docker_engine):
    files = {**CALC, "test_calc.py": CALC["test_calc.py"] + "\n\ndef test_add_zero():\n    assert add(5, 0) == 5\n"}
    with own_sandbox(tmp_path, "neighbour", files) as box:
        four = "def add(a, b):\n    return 4\n"  # passes test_add (2 + 2), breaks test_add_zero beside it
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "candidates": [four, RIGHT[10:-4]],
                                           "tests": ["test_calc.py::test_add"]}, 120)
        assert tried.success, tried.error
        first, second = tried.details["outcomes"]
        assert first["passes"] and first["breaks"] == ["test_calc.py::test_add_zero"]
        assert first["message"].startswith("test_calc.py::test_add_zero\n") and "assert 4 == 5" in first["message"]
        assert second["passes"] and second["breaks"] == []  # test_add failed before: passing it is no break
        assert second["message"] == ""


def test_a_candidate_that_breaks_a_test_of_the_package_that_re_exports_it_breaks(tmp_path, docker_engine):
    """The package's __init__ imports add from its module, and a test imports add from the package, not the
    module: that test is one the candidate can break, so it is run beside the check's."""
    files = {"pkg/__init__.py": "from .calc import add\n", "pkg/calc.py": CALC["calc.py"],
             "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
             "tests/test_api.py": "from pkg import add\n\n\ndef test_add_zero():\n    assert add(5, 0) == 5\n"}
    with own_sandbox(tmp_path, "reexport", files) as box:
        four = "def add(a, b):\n    return 4\n"  # passes test_add (2 + 2), breaks test_add_zero in test_api.py
        tried = box.run_tool("try_fixes", {"path": "pkg/calc.py", "symbol": "add", "candidates": [four],
                                           "tests": ["tests/test_calc.py::test_add"]}, 120)
        assert tried.success, tried.error
        (outcome,) = tried.details["outcomes"]
        assert outcome["passes"] and outcome["breaks"] == ["tests/test_api.py::test_add_zero"]


def test_a_failing_candidates_message_is_its_assertion_without_the_tests_code(tmp_path, docker_engine):
    """try_fixes runs the check's tests with brief traces (formatting a full one per failing test costs half of a run
    of hundreds): what a failing candidate is told is the assertion and its values, as before; the test's lines
    around it are left out."""
    files = {"calc.py": CALC["calc.py"], "test_calc.py": "from calc import add\n\n\ndef test_add():\n"
             "    total = add(2, 2)\n    assert total == 4, 'two and two make four'\n"}
    with own_sandbox(tmp_path, "brief", files) as box:
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "tests": ["test_calc.py::test_add"],
                                           "candidates": [WRONG_1[10:-4], RIGHT[10:-4]]}, 120)
        assert tried.success, tried.error
        wrong, right = tried.details["outcomes"]
        assert wrong["failing"] == ["test_calc.py::test_add"] and right["passes"]
        assert "two and two make four" in wrong["message"] and "assert 5 == 4" in wrong["message"]
        assert "total = add(2, 2)" not in wrong["message"]


def test_the_next_round_hears_how_the_test_a_passing_candidate_broke_fails(tmp_path, fake, docker_engine):
    """Round 1's one passing candidate breaks test_add_zero beside test_add: round 2 is told which test, and how
    it fails (its assertion), not only its name."""
    files = {**CALC, "test_calc.py": CALC["test_calc.py"] + "\n\ndef test_add_zero():\n    assert add(5, 0) == 5\n"}
    repo = make_repo(tmp_path / "repo", files)
    zero = "```python\ndef add(a, b):\n    return a + b if b else a - 1\n```"  # add(5, 0) gives 4
    fake.add(PLAN, PROPOSE, {"choices": [zero, WRONG_1]}, {"choices": [WRONG_2, RIGHT]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    again = fake.requests[3]["messages"][-1]["content"].split("Write a corrected version")[-1]
    assert "broke test_calc.py::test_add_zero, the first so: test_calc.py::test_add_zero" in again
    assert "assert 4 == 5" in again and [c["passes"] for c in candidates(run)] == [True, False, False, True]


REV = "def rev(x):\n    if isinstance(x, str):\n        return x[::-1]\n    return list(x)\n"


def test_of_two_passing_candidates_the_one_that_changes_less_beside_the_example_is_applied(tmp_path, fake,
                                                                                             docker_engine):
    """Both make rev([1, 2, 3]) right; the first (smaller diff) also turns every string into a list. The
    probes (rev('abc'), rev(''), ...) show it: the one that leaves them as they were is applied."""
    repo = make_repo(tmp_path / "repo", {"seqs.py": REV})
    lists_only = "```python\ndef rev(x):\n    if isinstance(x, list):\n        return x[::-1]\n    return list(x)\n```"
    both = "```python\ndef rev(x):\n    return x[::-1] if isinstance(x, str) else list(reversed(x))\n```"
    fake.add(PLAN, {"choices": [lists_only, both]})
    goal = "rev([1, 2, 3]) gives [1, 2, 3] instead of [3, 2, 1]. Fix rev in seqs.py."
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    first, second = candidates(run)
    assert first["passes"] and second["passes"] and first["diff_lines"] < second["diff_lines"]
    sampled = fake.requests[0]
    assert sampled["n"] == 2
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert "candidate 2 passes the check" in observation["output"]
    assert "list(reversed(x))" in (repo / "seqs.py").read_text()


def test_a_one_change_fix_of_the_goals_example_alone_waits_for_the_samples_and_the_likelier_behaviour_wins(
        tmp_path, fake, docker_engine):
    """The check is the goal's one example, and a one-change candidate makes it hold by negating the type test:
    strings then come back as lists. It does not settle the call alone: the samples are asked too, and their
    rewrite, which leaves the string probes as they were, is applied."""
    repo = make_repo(tmp_path / "repo", {"seqs.py": REV})
    right = "```python\ndef rev(x):\n    return x[::-1] if isinstance(x, str) else list(reversed(x))\n```"
    fake.add(PLAN, {"choices": [right, right]})
    goal = "rev([1, 2, 3]) gives [1, 2, 3] instead of [3, 2, 1]. Fix rev in seqs.py."
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True,
                   mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    passing = [(c["asked"], c["code"].strip()) for c in candidates(run) if c["passes"]]
    assert ("mechanical", "def rev(x):\n    if not isinstance(x, str):\n        return x[::-1]\n    return list(x)") \
        in passing and ("n", right.strip("`\n").removeprefix("python\n")) in passing
    assert [r["n"] for r in fake.requests if r.get("n")] == [2]  # one round of samples, after the mechanical one
    assert "list(reversed(x))" in (repo / "seqs.py").read_text()


def test_a_passing_candidate_must_not_break_a_test_that_reaches_the_module_through_another_one(tmp_path, fake,
                                                                                              docker_engine):
    """The check is test_util's failing test. Making `and` an `or` passes it and every test of test_util, but breaks
    test_app, which imports app, which imports util: no test file that names util. The suite runs in seconds, so
    it is what a candidate must not break, whole; that one-change fix does not settle the call, and the samples'
    rewrite is applied."""
    util = ("def unquote(val):\n    if val[0] in ('\"', \"'\") and val[0] == val[-1]:\n        return val[1:-1]\n"
            "    return val\n")
    repo = make_repo(tmp_path / "repo", {
        "util.py": util, "app.py": "from util import unquote\n\n\ndef name(text):\n    return unquote(text)\n",
        "test_util.py": "from util import unquote\n\n\ndef test_backtick():\n    assert unquote('`a`') == 'a'\n\n\n"
                        "def test_plain():\n    assert unquote('ab') == 'ab'\n",
        "test_app.py": "from app import name\n\n\ndef test_same_ends():\n    assert name('xyzx') == 'xyzx'\n"})
    right = "```python\n" + util.replace("\"'\")", "\"'\", '`')") + "```"
    fake.add(PLAN, {"tool": "propose_fixes", "args": {"path": "util.py", "symbol": "unquote"}},
             {"choices": [right, right]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "unquote leaves backticks on", fake=fake, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    either = [c for c in seen if c["asked"] == "mechanical" and c["passes"]]
    assert either and all("test_app.py::test_same_ends" in c["breaks"] for c in either)
    assert [c["passes"] and not c["breaks"] for c in seen if c["asked"] == "n"] == [True, True]
    assert "'`')" in (repo / "util.py").read_text()


def test_a_near_miss_that_replaced_a_branch_is_tried_again_with_that_branch_kept(tmp_path, fake, docker_engine):
    """Both samples turn the http branch into the ftp one the failing test is about: they pass the check and break
    test_http. The merge that keeps the http branch and adds the sample's as an `elif` passes and breaks nothing,
    with no second round of samples asked; it is applied."""
    links = ("def bare(url):\n    if url.startswith('http://'):\n        # the scheme off\n        return url[7:]\n"
             "    return url\n")
    repo = make_repo(tmp_path / "repo", {
        "links.py": links,
        "test_links.py": "from links import bare\n\n\ndef test_http():\n    assert bare('http://a.org') == 'a.org'\n"
                         "\n\ndef test_ftp():\n    assert bare('ftp://a.org') == 'a.org'\n"})
    wrong = "```python\ndef bare(url):\n    if url.startswith('ftp://'):\n        return url[6:]\n    return url\n```"
    fake.add(PLAN, {"tool": "propose_fixes", "args": {"path": "links.py", "symbol": "bare"}},
             {"choices": [wrong, wrong]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "bare() leaves ftp:// on", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [c["asked"] for c in seen] == ["n", "n", "merged", "merged"]
    assert seen[0]["passes"] and seen[0]["breaks"] == ["test_links.py::test_http"]
    assert all(c["passes"] and not c["breaks"] for c in seen[2:])
    assert "    elif url.startswith('ftp://'):" in (repo / "links.py").read_text()


def test_when_rewrites_find_no_fix_the_model_is_asked_once_which_lines_are_missing_and_where(tmp_path, fake,
                                                                                                 docker_engine):
    """mean() lacks its guard for an empty list. Both rewrites change a line and still divide by zero; asked where
    lines are missing, the model names the line after the def and writes the guard, which goes in at the body's
    indentation, passes, and is applied before any second round of rewrites."""
    stats = ("def mean(values):\n    total = 0\n    for v in values:\n        total += v\n"
             "    return total / len(values)\n")
    repo = make_repo(tmp_path / "repo", {"stats.py": stats, "test_stats.py": (
        "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n\n\n"
        "def test_empty():\n    assert mean([]) == 0.0\n")})
    wrong = "```python\ndef mean(values):\n    return sum(values) / len(values)\n```"
    guard = "The guard, after line 1:\n```python\nif not values:\n    return 0.0\n```"
    fake.add(PLAN, {"tool": "propose_fixes", "args": {"path": "stats.py", "symbol": "mean"}},
             {"choices": [wrong, wrong]}, {"choices": [guard, "after line 9\n```python\npass\n```"]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "--missing-lines",
                   "the mean of an empty list raises ZeroDivisionError", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [(c["asked"], c["passes"]) for c in seen] == [("n", False), ("n", False), ("lines added", True)]
    (asked,) = [r["messages"][-1]["content"] for r in fake.requests if "after line N" in r["messages"][-1]["content"]]
    assert "1| def mean(values):\n2|     total = 0" in asked
    assert (repo / "stats.py").read_text().startswith("def mean(values):\n    if not values:\n        return 0.0\n")


TAKE = ("def take(spec, items):\n    parts = [int(p) if p else None for p in spec.strip('[]').split(':')]\n"
        "    return items[slice(*parts[:2])]\n")


def take_rounds(tmp_path, fake, wrong: str):
    """Two opening rounds on take: both candidates `wrong`, then the right rewrite and `wrong`. The run
    ends well, the first candidate was applied in the scratch copy and does not pass, the third passes
    and is the one in slices.py. The first candidate."""
    repo = make_repo(tmp_path / "repo", {"slices.py": TAKE})
    head = "```python\n" + TAKE.rsplit("    return", 1)[0]  # the same parsing of the spec
    right = head + "    return items[slice(*parts)]\n```"
    fake.add(PLAN, {"choices": [head + wrong, head + wrong]}, {"choices": [right, head + wrong]})
    goal = ("take('[::2]', [0, 1, 2, 3, 4]) returns the whole list instead of [0, 2, 4], and '[::-1]' does not "
            "reverse. Fix take in slices.py.")
    run = run_omni(repo, "--yes", "--samples", "2", goal, fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    first, _, third, fourth = candidates(run)
    assert first["applied"] and not first["passes"] and third["passes"] and not fourth["passes"]
    assert "return items[slice(*parts)]" in (repo / "slices.py").read_text()
    return first


def test_a_candidate_that_leaves_a_call_the_goal_says_goes_wrong_as_it_was_does_not_pass(tmp_path, fake,
                                                                                           docker_engine):
    """The example holds with a step > 0 only; '[::-1]' still gives the list unchanged, and the goal says
    it does not reverse: the candidate does not pass, the next round hears why, and its fix is applied."""
    first = take_rounds(tmp_path, fake, "    if len(parts) == 3 and parts[2] and parts[2] > 0:\n"
                        "        return items[slice(*parts)]\n    return items[slice(*parts[:2])]\n```")
    said = "take('[::-1]', [0, 1, 2, 3, 4]) still gives [0, 1, 2, 3, 4], as before the rewrite"
    assert said in first["message"]
    asked = fake.requests[0]["messages"][-1]["content"]
    assert "- take('[::-1]', [0, 1, 2, 3, 4]) gives something else than now" in asked  # in the check it is shown
    assert said in fake.requests[1]["messages"][-1]["content"].split("Write a corrected version")[-1]


def test_a_candidate_that_tests_for_the_examples_value_does_not_pass(tmp_path, fake, docker_engine):
    """Run U, jmespath: `if step == 2: return value[start:stop:step]`, else the list reversed. It makes
    '[::2]' hold and '[::-1]' reverse, and tests for the 2 the example is written with: it does not pass,
    the next round hears why, and the rewrite that slices with any step is applied."""
    first = take_rounds(tmp_path, fake, "    if parts[2] == 2:\n        return items[slice(*parts)]\n"
                        "    return items[::-1]\n```")
    said = ("it tests `parts[2] == 2`, a value from the goal's example: it answers the example instead of "
            "handling every input")
    assert first["message"] == said
    assert said in fake.requests[1]["messages"][-1]["content"].split("Write a corrected version")[-1]


def test_tests_the_finish_gate_found_broken_join_the_check_and_omni_tries_rewrites_of_that_definition(
        tmp_path, fake, docker_engine):
    """The model's edit makes test_add pass and breaks test_add_zero; the gate sends it back. From then on
    test_add_zero is part of the check, and omni's next action (not the model's) is a round of rewrites of
    add: a candidate that passes test_add alone does not pass."""
    repo = make_repo(tmp_path / "repo", {**CALC, "tests/test_keep.py": "from calc import add\n\n\n"
                                         "def test_add_zero():\n    assert add(5, 0) == 5\n"})
    four = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "4"}}
    fake.add(PLAN, four, FINISH, {"choices": ["```python\ndef add(a, b):\n    return a * b\n```", RIGHT]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    rung = next(e for e in run.events() if e["kind"] == "rung")
    assert (rung["path"], rung["symbol"]) == ("calc.py", "add") and "broke tests" in rung["why"]
    assert "omni tries rewrites of add in calc.py" in run.stdout
    first, second = candidates(run)
    assert not first["passes"] and first["failing"] == ["tests/test_keep.py::test_add_zero"] and second["passes"]
    asked = fake.requests[3]["messages"][-1]["content"]  # plan, edit, finish, then the candidates: no step between
    assert "- the test tests/test_keep.py::test_add_zero passes" in asked and "broke tests that passed" in asked
    assert [e["tool"] for e in run.events() if e["kind"] == "action"] == [
        "replace_in_file", "finish", "propose_fixes", "finish"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_no_round_of_omnis_own_when_the_gate_sends_back_an_edit_for_another_reason(calc_repo, fake, docker_engine):
    """The model's edit makes the check pass and breaks nothing; the gate's review sends it back: the model,
    not omni, takes the next step."""
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
    refine = {"text": json.dumps({"verdict": "refine", "confidence": 0.7, "reasons": ["add a comment"]})}
    approve = {"text": json.dumps({"verdict": "approved", "confidence": 0.9, "reasons": ["add adds"]})}
    fake.add(PLAN, fix, FINISH, refine, FINISH, approve)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake, review=True)
    assert run.code == 0, run.stdout + run.stderr
    assert not [e for e in run.events() if e["kind"] == "rung"] and not candidates(run)
    assert [e["tool"] for e in run.events() if e["kind"] == "action"] == ["replace_in_file", "finish", "finish"]


def test_a_candidate_that_stops_reading_a_parameter_does_not_pass_and_the_next_round_hears_why(calc_repo, fake,
                                                                                                docker_engine):
    """`return b + b` makes add(2, 2) == 4 hold without reading `a` (run S: jmespath's search became
    `return data[::2]`). It does not pass; the second round is told why, and its right rewrite is applied."""
    answers = "```python\ndef add(a, b):\n    return b + b\n```"
    fake.add(PLAN, PROPOSE, {"choices": [answers, WRONG_1]}, {"choices": [answers, RIGHT]}, FINISH)
    run = run_omni(calc_repo, "--yes", "--samples", "2", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = candidates(run)
    assert [(c["id"], c["applied"], c["passes"], c["failing"]) for c in seen] == [
        (1, True, False, []), (2, True, False, ["test_calc.py::test_add"]), (3, True, False, []), (4, True, True, [])]
    said = "it no longer reads `a`, as the code now does: it answers the example instead of computing it"
    assert seen[0]["message"] == said
    assert "candidate 1 for calc.py:add: ✗ it no longer reads `a`" in run.stdout
    assert said in fake.requests[3]["messages"][-1]["content"].split("Write a corrected version")[-1]
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_on_a_llama_cpp_server_a_one_token_request_parks_the_conversation_before_the_samples(calc_repo,
                                                                                               docker_engine):
    """llama.cpp with 3 slots and 4 samples asked: a one-token request with the candidates' prompt goes
    first (the server then saves the run's conversation to its prompt cache, instead of letting the extra
    samples' slots overwrite it), then 3 samples at once (it refuses n above its slots), then the 4th."""
    with FakeOpenAI(slots=3) as fake:
        fake.add(PLAN, PROPOSE, {"text": "`"}, {"choices": [WRONG_1, WRONG_2, WRONG_1]}, {"text": RIGHT}, FINISH)
        run = run_omni(calc_repo, "--samples", "4", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    park, sampled, fourth = fake.requests[2:5]
    assert park["max_tokens"] == 1 and "n" not in park and park["messages"] == sampled["messages"]
    assert sampled["n"] == 3 and "n" not in fourth and fourth["messages"] == sampled["messages"]
    seen = candidates(run)
    assert [c["asked"] for c in seen] == ["3 at once, then one by one"] * 4 and seen[3]["passes"]
    assert next(e for e in run.events() if e["kind"] == "slots")["total"] == 3
    asked = [e["call"]["prompt_tokens"] for e in run.events() if e["kind"] == "usage" and e["purpose"] == "candidates"]
    assert asked[0] == 200  # the one-token request's prompt counts with the first candidate (100 tokens each)
    assert "llama.cpp server with 3 slots: up to 3 candidates per request" in run.stdout
    assert "return a + b" in (run.run_dir / "diff.patch").read_text()


def _long_tally(path, passing: bool = True, returned: str = "total", steps: int = 80) -> Path:
    filler = "".join(f"    step_{i} = seen + {i}\n" for i in range(steps))  # 80: too long to rewrite whole
    return make_repo(path, {
        "tally.py": ("def tally(items):\n    seen = 0\n    for _ in items:\n        seen += 1\n" + filler +
                     "    if seen > 2:\n        total = seen - 1\n    else:\n        total = seen\n"
                     f"    return {returned}\n"),
        "test_tally.py": ("from tally import tally\n\n\ndef test_many():\n    assert tally([1, 2, 3]) == 3\n" +
                          ("\n\ndef test_few():\n    assert tally([1]) == 1\n" if passing else ""))})


def test_block_rewrites_repair_a_definition_too_long_to_rewrite_whole(tmp_path, fake, docker_engine):
    """With --block-rewrites the spectrum's suspect may be longer than a whole rewrite allows: the candidates are
    asked for the few lines around the line only the failing test runs, shown marked in the definition, and the
    reply is put back in their place, checked and applied like any rewrite."""
    repo = _long_tally(tmp_path / "repo")
    block = "```python\nif seen > 2:\n    total = seen\nelse:\n    total = seen\n```"
    fake.add(PLAN, {"choices": [block, block]})
    run = run_omni(repo, "--yes", "--samples", "2", "--block-rewrites", "the tally of three or more items comes out "
                   "one short", fake=fake, finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "tally" and "spectrum score 1.00" in opening["why"]
    asked = next(r for r in fake.requests if r.get("n"))["messages"][-1]["content"]
    assert "# >>> rewrite from here\n    if seen > 2:\n        total = seen - 1\n" in asked
    assert "step_0 = seen + 0" in asked  # the whole definition is shown, around the block
    code = (repo / "tally.py").read_text()
    assert "        total = seen\n    else:" in code and "seen - 1" not in code and "step_79 = seen + 79" in code
    assert len(fake.requests) == 1  # one round: the model took no step, and nothing read a plan


@pytest.mark.parametrize("block_from", [19, 20], ids=["as-long-block", "longer-whole"])
def test_with_block_from_a_definition_shorter_than_it_is_rewritten_whole(tmp_path, fake, docker_engine, block_from):
    """--block-from N: block rewrites only in a definition of at least N lines (without its docstring); tally is 19,
    so at 19 the candidates are asked for the block, and at 20 for the whole definition, as without block rewrites.
    The tests call two functions, so the spectrum names the target (a block needs the lines it points to)."""
    repo = _long_tally(tmp_path / "repo", steps=10)
    (repo / "tally.py").write_text((repo / "tally.py").read_text() + "\n\ndef size(items):\n    return len(items)\n")
    (repo / "test_tally.py").write_text("from tally import size, tally\n\n\ndef test_many():\n"
                                        "    assert size([1]) == 1\n    assert tally([1, 2, 3]) == 3\n\n\n"
                                        "def test_few():\n    assert size([1]) == 1\n    assert tally([1]) == 1\n")
    git(repo, "commit", "-qam", "two functions")
    fixed = "if seen > 2:\n    total = seen\nelse:\n    total = seen\n"
    whole = ("def tally(items):\n    seen = 0\n    for _ in items:\n        seen += 1\n"
             + "".join(f"    step_{i} = seen + {i}\n" for i in range(10)) + textwrap.indent(fixed, "    ")
             + "    return total\n")
    reply = f"```python\n{fixed if block_from == 19 else whole}```"
    fake.add(PLAN, {"choices": [reply, reply]})
    run = run_omni(repo, "--yes", "--samples", "2", "--block-rewrites", "--block-from", str(block_from),
                   "the tally of three or more items comes out one short", fake=fake, finish_on_check=True,
                   opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "tally" and "spectrum score 1.00" in opening["why"]
    asked = next(r for r in fake.requests if r.get("n"))["messages"][-1]["content"]
    assert ("# >>> rewrite from here" in asked) == (block_from == 19)
    assert ("Write a corrected version of `tally`" in asked) == (block_from == 20)
    code = (repo / "tally.py").read_text()
    assert "        total = seen\n    else:" in code and "seen - 1" not in code and "step_9 = seen + 9" in code


def test_an_opening_target_the_spectrum_ranks_below_a_helper_is_swept_and_the_helper_next(tmp_path, fake,
                                                                                          docker_engine):
    """The failing test is named after to_hex, so the opening round goes there; but to_hex also runs for the passing
    test, and only the failing one runs the helper's wrong line: the spectrum ranks the helper higher. The opening
    then tries to_hex by its one-change candidates alone, and the helper's sweep comes next and fixes it: no sample
    of to_hex is asked first."""
    repo = make_repo(tmp_path / "repo", {
        "colors.py": "def _scale(p):\n    if p == 100:\n        return 255\n    return p * 256 // 100\n\n\n"
                     "def to_rgb(ps):\n    return tuple(_scale(p) for p in ps)\n\n\n"
                     "def to_hex(ps):\n    return '#%02x%02x%02x' % to_rgb(ps)\n",
        "test_colors.py": "from colors import to_hex\n\n\ndef test_to_hex():\n"
                          "    assert to_hex((50, 50, 50)) == '#7f7f7f'\n\n\ndef test_white():\n"
                          "    assert to_hex((100, 100, 100)) == '#ffffff'\n"})
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing left"}})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing test: to_hex is wrong for 50%", fake=fake,
                   finish_on_check=True, opening_repair=True, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "to_hex" and "ranks other definitions higher" in opening["why"]
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]
    assert spectrum["suspects"][0]["symbol"] == "_scale"
    assert [e["symbol"] for e in run.events() if e["kind"] == "rung"][0] == "_scale"
    assert {c["asked"] for c in candidates(run)} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    assert "return p * 255 // 100" in (repo / "colors.py").read_text()


def test_a_definition_too_long_to_rewrite_whole_gets_its_one_change_candidates_alone(tmp_path, fake, docker_engine):
    """The one definition the tests point to is longer than a whole rewrite allows: no model is asked for it, and
    its mechanical candidates are tried, those on the line only the failing test runs first; the one that passes
    the check without breaking the other test is applied."""
    repo = _long_tally(tmp_path / "repo")
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing to do"}})
    run = run_omni(repo, "--yes", "--samples", "2", "the tally of three or more items comes out one short", fake=fake,
                   opening_repair=True, mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "tally" and "spectrum score 1.00" in opening["why"]
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]
    assert spectrum["side"] == "failing" and spectrum["suspects"][0]["symbol"] == "tally"
    assert spectrum["suspects"][0]["lines"] == [86]  # `total = seen - 1`: only the failing test runs it
    assert "the failing tests' spectrum: best tally 1.00" in run.stdout
    seen = candidates(run)
    assert {c["asked"] for c in seen} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    assert [c["passes"] for c in seen[:3]] == [False, False, True]  # `seen + 1`, `seen - 2`, then `seen - 0`
    assert "        total = seen - 0\n" in (repo / "tally.py").read_text()
    assert not fake.requests  # the round did the work before any step: no plan, no step
    (status,) = [e for e in run.events() if e["kind"] == "status"]
    assert status["usage"]["cost_kind"] == "local"  # the server is the user's own: said so, though nothing was asked


@pytest.mark.parametrize("blocks", [[], ["--block-rewrites"]], ids=["whole", "block-rewrites"])
def test_when_no_one_change_fixes_a_long_definition_the_model_is_told_where_to_look(tmp_path, fake, docker_engine,
                                                                                     blocks):
    """No one-change edit makes the long definition pass (it returns a string), and with block rewrites no few
    lines hold what the failing test points to (only it runs the definition): the round says so with the lines to
    read, not the code. Its sweep stopped with candidates left, so omni resumes it once; asked again for the same
    definition after that, omni refuses at once (the same call: the loop's guard; another way: verified repair,
    its two sweeps spent), and no sample is ever asked."""
    repo = _long_tally(tmp_path / "repo", passing=False, returned="str(total)")
    again = {"tool": "propose_fixes", "args": {"path": "tally.py", "symbol": "tally"}}
    noted = {"tool": "propose_fixes", "args": {"path": "tally.py", "symbol": "tally", "note": "the count is short"}}
    fake.add(PLAN, again, noted, {"tool": "finish", "args": {"summary": "gave up"}})
    run = run_omni(repo, "--yes", "--samples", "2", *blocks, "the tally of three or more items comes out one short",
                   fake=fake, opening_repair=True, mechanical=True)
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "tally"
    first, resumed, second, third = [e for e in run.events()
                                     if e["kind"] == "observation" and e["tool"] == "propose_fixes"]
    assert "too long to rewrite whole" in resumed["error"], resumed
    assert not first["success"] and "tally is 89 lines, too long to rewrite whole; omni tried" in first["error"]
    assert "none passes the check" in first["error"] and "The failing tests point to line(s) 2, 3, 4" in first["error"]
    assert "def tally" not in first["error"]
    assert not second["success"] and "already failed twice" in second["error"]  # the loop's guard on repeats
    assert not third["success"] and "tally is 89 lines, too long to rewrite whole, and its one-change candidates " \
        "were tried already" in third["error"]  # verified repair's own refusal: no third sweep
    assert candidates(run) and {c["asked"] for c in candidates(run)} == {"mechanical"}
    assert not any(r.get("n") for r in fake.requests)
    assert "return str(total)" in (repo / "tally.py").read_text()


def test_a_long_definitions_sweep_that_stopped_at_its_budget_is_resumed_and_reaches_the_fix(tmp_path, fake,
                                                                                           docker_engine):
    """No passing test, so every line the failing one runs scores alike and the one-change candidates go in the
    catalogue's order: the fix (`seen - 1` as `seen - 0`) is the 68th of 113, past the most one sweep may try (64).
    The sweep stops with candidates left; no other suspect is in line, so the rest of them are tried next, none of
    the first sweep's again, and the fix is among them. No model is asked."""
    notes = "".join(f"    # note {i}\n" for i in range(80))  # too long to rewrite whole: a sweep is all it gets
    steps = "".join(f"    step_{i} = len(items) + {i}\n" for i in range(22))  # their candidates come first
    repo = make_repo(tmp_path / "repo", {
        "tally.py": f"def tally(items):\n{notes}{steps}    seen = len(items)\n    return seen - 1\n",
        "test_tally.py": "from tally import tally\n\n\ndef test_many():\n    assert tally([1, 2, 3]) == 3\n"})
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing to do"}})
    run = run_omni(repo, "--yes", "--samples", "2", "the tally of three items comes out one short", fake=fake,
                   opening_repair=True, mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    rounds = own_rounds(run)
    assert [(kind, symbol) for kind, symbol, _ in rounds] == [("opening", "tally"), ("rung", "tally")], rounds
    assert "its one-change candidates stopped at the time a sweep may take" in rounds[1][2]
    first = [e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes"][0]
    assert not first["success"] and "too long to rewrite whole" in first["error"]
    seen = candidates(run)
    assert {c["asked"] for c in seen} == {"mechanical"} and not fake.requests
    codes = [c["code"] for c in seen]
    assert len(codes) == len(set(codes)) and len(codes) > 64  # each tried once, and past one sweep's most
    assert "    return seen - 0\n" in (repo / "tally.py").read_text()


TWO = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
       "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                       "def test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_add_zero():\n"
                       "    assert add(5, 0) == 5\n"}
BOTH = ["test_calc.py::test_add", "test_calc.py::test_mul"]


def test_a_candidate_that_makes_some_of_the_checks_failing_tests_pass_is_a_step_toward_it(tmp_path, docker_engine):
    """A fault in two places (add and mul): the right add makes test_add pass and leaves test_mul failing, a
    step; one that passes test_add and breaks test_add_zero beside it is a step that breaks; one that fixes
    nothing is none."""
    with own_sandbox(tmp_path, "step", TWO) as box:
        breaks = "def add(a, b):\n    return a + b + (a == 5)\n"
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "tests": BOTH,
                                           "candidates": [RIGHT[10:-4], breaks, WRONG_2[10:-4]]}, 120)
        assert tried.success, tried.error
        right, breaking, none = tried.details["outcomes"]
        assert not right["passes"] and right["progress"] and right["breaks"] == []
        assert right["failing"] == ["test_calc.py::test_mul"]
        assert breaking["progress"] and breaking["breaks"] == ["test_calc.py::test_add_zero"]
        assert not none["progress"] and none["failing"] == BOTH
        assert "candidate 1: fails fewer of the check's tests" in tried.output


def test_a_candidate_that_fixes_some_cases_of_one_parametrized_test_is_no_step(tmp_path, docker_engine):
    """Cases of one test function are one behaviour: passing some and not the others fixes inputs, not a place."""
    files = {"calc.py": TWO["calc.py"], "test_calc.py": "import pytest\nfrom calc import add\n\n\n"
             "@pytest.mark.parametrize('a, b, total', [(2, 3, 5), (1, 1, 2)])\ndef test_add(a, b, total):\n"
             "    assert add(a, b) == total\n"}
    cases = ["test_calc.py::test_add[2-3-5]", "test_calc.py::test_add[1-1-2]"]
    with own_sandbox(tmp_path, "cases", files) as box:
        some = "def add(a, b):\n    return a + b if a == 2 else a - b\n"
        tried = box.run_tool("try_fixes", {"path": "calc.py", "symbol": "add", "tests": cases,
                                           "candidates": [some, RIGHT[10:-4]]}, 120)
        assert tried.success, tried.error
        some_cases, right = tried.details["outcomes"]
        assert some_cases["failing"] == ["test_calc.py::test_add[1-1-2]"] and not some_cases["progress"]
        assert right["passes"] and not right["progress"]


def test_a_fault_in_two_places_is_fixed_one_step_at_a_time(tmp_path, fake, docker_engine):
    """No rewrite of add can pass a check that also needs mul fixed: the right add is a step toward it, applied;
    the spectrum is asked again on what still fails, which points to mul, and omni's next round fixes it, before
    the model takes one step."""
    repo = make_repo(tmp_path / "repo", TWO)
    right_mul = "```python\ndef mul(a, b):\n    return a * b\n```"
    fake.add(PLAN, {"choices": [RIGHT, WRONG_2]}, {"choices": [WRONG_2, WRONG_1]}, {"choices": [right_mul] * 2})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing tests", fake=fake, finish_on_check=True,
                   opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (step,) = [e for e in run.events() if e["kind"] == "step_applied"]
    assert step["target"] == "calc.py:add" and step["still_failing"] == ["test_calc.py::test_mul"]
    assert "◐ candidate 1 for calc.py:add makes part of the check pass and breaks nothing: applied; still failing: " \
           "test_calc.py::test_mul" in run.stdout
    assert all(problems(e) == [] for e in run.events())
    said = [e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes"]
    assert [o["success"] for o in said] == [False, True]
    assert "makes some of its failing tests pass and breaks none, and is applied" in said[0]["error"]
    assert [e["symbol"] for e in run.events() if e["kind"] in ("opening", "rung")] == ["add", "mul"]
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]  # asked after the step: add passes now
    assert [s["symbol"] for s in spectrum["suspects"]] == ["mul"]
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["why"].endswith("; a rewrite before it made part of the check pass")
    code = (repo / "calc.py").read_text()
    assert "return a + b" in code and "return a * b" in code


def test_a_step_found_by_one_change_candidates_alone_is_applied_and_the_other_place_swept_next(tmp_path, fake,
                                                                                               docker_engine):
    """A fault in two places that the tests rank alike (each failing test runs one of them): the opening sweeps the
    first by its one-change candidates alone, and the one that makes its test pass is a step, applied as a sampled
    round's would be; the spectrum asked again points to the other, whose sweep fixes the rest. No sample is asked."""
    files = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef total(xs):\n    return sum(xs) - len(xs)\n\n\n"
                        "def sub(a, b):\n    return a - b\n",
             "test_calc.py": "from calc import add, sub, total\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                             "def test_total():\n    assert total([2, 3]) == 7\n\n\ndef test_sub():\n"
                             "    assert sub(5, 3) == 2\n"}
    repo = make_repo(tmp_path / "repo", files)
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing left"}})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing tests", fake=fake, finish_on_check=True,
                   opening_repair=True, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    first = opening["symbol"]
    assert first in ("add", "total") and "others score as high" in opening["why"]
    (step,) = [e for e in run.events() if e["kind"] == "step_applied"]
    assert step["target"] == f"calc.py:{first}" and len(step["still_failing"]) == 1
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["symbol"] == ({"add", "total"} - {first}).pop()
    assert {c["asked"] for c in candidates(run)} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    code = (repo / "calc.py").read_text()
    assert "def add(a, b):\n    return a + b" in code and "def total(xs):\n    return sum(xs) + len(xs)" in code
    assert "def sub(a, b):\n    return a - b" in code


def test_after_a_step_the_same_definition_gets_its_second_round_when_what_still_fails_points_there(tmp_path, fake,
                                                                                                 docker_engine):
    """Two faults in one function: `a - b` and an off-by-one on negative sums, each with its own failing test.
    The first round's best passes one test and breaks none, a step; the spectrum then ranks the same function first,
    and its second round fixes the rest."""
    code = "def add(a, b):\n    total = a - b\n    if total < 0:\n        total += 1\n    return total\n"
    tests = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
             "def test_add_negative():\n    assert add(-2, -3) == -5\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": code, "test_calc.py": tests})
    half = "```python\ndef add(a, b):\n    total = a + b\n    if total < 0:\n        total += 1\n    return total\n```"
    fake.add(PLAN, {"choices": [half, WRONG_2]}, {"choices": [WRONG_2, WRONG_1]}, {"choices": [RIGHT, RIGHT]})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing tests", fake=fake, finish_on_check=True,
                   opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    assert [e["kind"] for e in run.events() if e["kind"] in ("opening", "rung", "step_applied")] == \
           ["opening", "step_applied", "rung"]
    assert [e["symbol"] for e in run.events() if e["kind"] in ("opening", "rung")] == ["add", "add"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_after_a_step_its_definition_gets_a_second_round_when_what_still_fails_is_a_doctest_in_the_docs(
        tmp_path, fake, docker_engine):
    """The second fault shows only in a doctest of a docs file, which the spectrum's tracer does not run: after the
    step, it ranks nothing. The step's definition gets its second round all the same, which fixes the rest, before
    the model takes a step (which would have edited the docs)."""
    code = "def add(a, b):\n    total = a - b\n    if total < 0:\n        total += 1\n    return total\n"
    files = {"calc.py": code, "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
             "docs/usage.rst": "Adding\n======\n\n.. code-block:: python\n\n    >>> from calc import add\n"
                               "    >>> add(-2, -3)\n    -5\n",
             "pytest.ini": "[pytest]\naddopts = --doctest-glob=*.rst\n"}
    repo = make_repo(tmp_path / "repo", files)
    half = "```python\ndef add(a, b):\n    total = a + b\n    if total < 0:\n        total += 1\n    return total\n```"
    fake.add(PLAN, {"choices": [half, WRONG_2]}, {"choices": [WRONG_2, WRONG_1]}, {"choices": [RIGHT, RIGHT]})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing tests", fake=fake, finish_on_check=True,
                   opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    (step,) = [e for e in run.events() if e["kind"] == "step_applied"]
    assert step["still_failing"] == ["docs/usage.rst::usage.rst"]
    spectra = [e for e in run.events() if e["kind"] == "spectrum"]
    assert spectra and spectra[-1]["suspects"] == []  # asked after the step: it sees nothing failing
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["symbol"] == "add" and rung["why"].startswith("the spectrum does not rank it for what still fails")
    assert "return a + b" in (repo / "calc.py").read_text() and (repo / "docs/usage.rst").read_text() == \
        files["docs/usage.rst"]


CLOCK_TESTS = ("from clock import seconds\n\n\ndef test_seconds():\n    assert seconds(45, 'm') == 2700\n\n\n"
               "def test_hours():\n    assert seconds(2, 'h') == 7200\n")
RIGHT_UNITS = '```python\nUNITS = {"h": 3600, "m": 60, "s": 1}\n```'


def test_when_no_rewrite_of_a_function_fixes_it_omni_tries_the_table_it_reads(tmp_path, fake, docker_engine):
    """The fault is in a module-level table the failing test's function reads: no rewrite of the function passes,
    and the spectrum cannot point to the table (every test runs it on import). The next round of omni's own is on
    the table, asked with the function that reads it, and its right value is applied."""
    code = ('UNITS = {"h": 3600, "m": 3600, "s": 1}\n\n\ndef seconds(count, unit):\n'
            '    return count * UNITS[unit]\n')
    repo = make_repo(tmp_path / "repo", {"clock.py": code, "test_clock.py": CLOCK_TESTS})
    wrong_1 = "```python\ndef seconds(count, unit):\n    return count * UNITS[unit] + 1\n```"
    wrong_2 = "```python\ndef seconds(count, unit):\n    return UNITS[unit] * count\n```"
    fake.add(PLAN, {"choices": [wrong_1, wrong_2]}, {"choices": [wrong_2, wrong_1]},
             {"choices": [RIGHT_UNITS, wrong_1]})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing test", fake=fake,
                   finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    assert [(e["kind"], e["symbol"]) for e in run.events() if e["kind"] in ("opening", "rung")] == \
           [("opening", "seconds"), ("rung", "UNITS")]
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["why"].startswith("seconds reads it, and the rewrites of seconds found no fix")
    assert rung["reader"] == "seconds"
    asked = fake.requests[-1]["messages"][-1]["content"]
    assert "Write a corrected value of `UNITS` in clock.py, which `seconds` reads" in asked
    assert "return count * UNITS[unit]" in asked and "`UNITS = ...`" in asked
    value = [c for c in candidates(run) if c["target"] == "clock.py:UNITS"]
    assert [c["passes"] for c in value] == [True, False]  # the function's rewrite as a value: refused, not run
    assert (repo / "clock.py").read_text() == code.replace('"m": 3600', '"m": 60')


def test_the_spectrum_s_next_suspect_is_tried_before_the_table_a_function_reads(tmp_path, fake, docker_engine):
    """The suspects have the failing tests' evidence, a value only its reader's: when the round on `seconds` finds
    no fix, the next round is on `_unit`, which the failing test runs too, and only then on the table."""
    code = ('UNITS = {"h": 3600, "m": 3600, "s": 1}\n\n\ndef _unit(unit):\n    if unit not in UNITS:\n'
            '        raise ValueError(unit)\n    return unit\n\n\ndef seconds(count, unit):\n'
            '    return count * UNITS[_unit(unit)]\n')
    repo = make_repo(tmp_path / "repo", {"clock.py": code, "test_clock.py": CLOCK_TESTS})
    wrong_1 = "```python\ndef seconds(count, unit):\n    return count * UNITS[_unit(unit)] + 1\n```"
    wrong_2 = "```python\ndef seconds(count, unit):\n    return UNITS[_unit(unit)] * count\n```"
    unit_1 = "```python\ndef _unit(unit):\n    return unit.lower()\n```"
    unit_2 = "```python\ndef _unit(unit):\n    return unit.strip()\n```"
    fake.add(PLAN, {"choices": [wrong_1, wrong_2]}, {"choices": [wrong_2, wrong_1]},
             {"choices": [unit_1, unit_2]}, {"choices": [unit_2, unit_1]}, {"choices": [RIGHT_UNITS, wrong_1]})
    run = run_omni(repo, "--yes", "--samples", "2", "fix the failing test", fake=fake,
                   finish_on_check=True, opening_repair=True)
    assert run.code == 0, run.stdout + run.stderr
    assert [(e["kind"], e["symbol"]) for e in run.events() if e["kind"] in ("opening", "rung")] == \
           [("opening", "seconds"), ("rung", "_unit"), ("rung", "UNITS")]
    (value,) = [e for e in run.events() if e["kind"] == "rung" and e["symbol"] == "UNITS"]
    assert value["reader"] == "seconds"
    assert (repo / "clock.py").read_text() == code.replace('"m": 3600', '"m": 60')


def test_the_one_change_candidates_go_by_the_spectrums_lines_and_where_no_failing_test_went_comes_last(tmp_path, fake,
                                                                                                   docker_engine):
    """The check calls two functions, so the spectrum picks the opening's (rule 7). test_five alone runs price's
    line 6 (the best line, where no one-change edit fixes it); it also runs lines 2, 3, 5 and 7 with the passing tests
    (the fault: `> 5` for `>= 5`), and never line 4: its candidates, if any are tried, come after every one on the
    lines test_five ran, and the boundary's is applied."""
    code = ("def price(qty):\n    total = qty * 10\n    if qty > 5:\n        total = total - 5\n"
            "    if qty % 5 == 0:\n        total = total + 0\n    return total\n\n\ndef fee():\n    return 0\n")
    test = ("from shop import fee, price\n\n\ndef test_five():\n    assert price(5) + fee() == 45\n\n\n"
            "def test_one():\n    assert price(1) + fee() == 10\n\n\ndef test_big():\n    assert price(8) == 75\n")
    repo = make_repo(tmp_path / "repo", {"shop.py": code, "test_shop.py": test})
    fake.add(PLAN, *[{"choices": ["no idea", "no idea"]}] * 4)
    run = run_omni(repo, "--yes", "--samples", "2", "price five right", fake=fake, opening_repair=True,
                   mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    lines = [changed_line(code, c["code"]) for c in candidates(run) if c["asked"] == "mechanical"]
    assert lines[0] == 6 and 3 in lines
    assert max(n for n, line in enumerate(lines) if line in (2, 3, 5, 7)) < (lines + [4]).index(4)
    assert "if qty >= 5:" in (repo / "shop.py").read_text()


def test_the_suspects_are_swept_by_their_one_change_candidates_before_a_second_is_rewritten_whole(tmp_path, fake,
                                                                                             docker_engine):
    """test_total runs four functions, and a passing test runs one of them, half, too: the spectrum ranks the other
    three first, tied, and the faulty half fourth. A tie at the top: the three are swept by their one-change
    candidates alone, then the first is rewritten whole (no sample has code); then the next suspect is tried by its
    one-change candidates alone, with no model request, and one of half's (the divisor one off) is applied: no second
    definition was rewritten whole."""
    code = ("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n"
            "def neg(a):\n    return -a\n\n\ndef half(a):\n    return a // 3\n")
    test = ("from calc import add, half, mul, neg\n\n\n"
            "def test_total():\n    assert add(1, 1) + mul(1, 1) + neg(0) + half(80) == 43\n\n\n"
            "def test_half_of_one():\n    assert half(1) == 0\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": code, "test_calc.py": test})
    fake.add(PLAN, *[{"choices": ["no idea", "no idea"]}] * 6)
    run = run_omni(repo, "--yes", "--samples", "2", "make the total right", fake=fake, opening_repair=True,
                   mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    rounds = own_rounds(run)
    assert rounds[0][0] == "opening" and {r[1] for r in rounds[:3]} == {"add", "mul", "neg"}
    assert all("scores as high as the first" in r[2] for r in rounds[1:3])
    assert rounds[3][:2] == ("rung", rounds[0][1]) and rounds[4][:2] == ("rung", "half") and len(rounds) == 5
    assert "tried by its one-change candidates alone" in rounds[4][2]
    assert [r.get("n") for r in fake.requests] == [2] * 2  # the opening's two rounds of samples; none after it
    assert {c["asked"] for c in candidates(run) if c["target"] == "calc.py:half"} == {"mechanical"}
    assert "return a // 2" in (repo / "calc.py").read_text()


SCALE = {"scale.py": ("class Scale:\n    def __init__(self, factor):\n        self.factor = factor + 1\n\n"
                      "    def apply(self, x):\n        if x is None:\n            return None\n"
                      "        return x * self.factor\n"),
         "test_scale.py": ("from scale import Scale\n\n\ndef test_scaling():\n    assert Scale(2).apply(5) == 10\n\n\n"
                           "def test_nothing_to_scale():\n    assert Scale.__new__(Scale).apply(None) is None\n")}


def test_a_tie_at_the_top_is_swept_before_any_suspect_is_rewritten_whole(tmp_path, fake, docker_engine):
    """Only the failing test runs `apply`'s last line and `__init__`'s one line: both score 1.00. `apply`, the one
    function the check calls, is the opening's target; with a tie the opening sweeps it (one-change
    candidates alone, none fixes it), then `__init__`'s are tried before any sample, and `factor + 0` passes: no
    model request was made for a candidate."""
    repo = make_repo(tmp_path / "repo", SCALE)
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing to do"}})
    run = run_omni(repo, "--yes", "--samples", "2", "scaling by two gives three times the value", fake=fake,
                   opening_repair=True, mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]
    assert [(s["symbol"], s["score"]) for s in spectrum["suspects"][:2]] == [("Scale.apply", 1.0),
                                                                             ("Scale.__init__", 1.0)]
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "Scale.apply" and "the only function of the project that the check calls" in \
        opening["why"] and "others score as high" in opening["why"]
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["symbol"] == "Scale.__init__" and "scores as high as the first" in rung["why"]
    seen = candidates(run)
    assert {c["asked"] for c in seen} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    assert {c["target"].split(":")[1] for c in seen if c["passes"]} == {"Scale.__init__"}
    assert "self.factor = factor + 1" not in (repo / "scale.py").read_text()


PRICING = {"pricing.py": ("BULK = 10\n\n\ndef unit_price(price, quantity):\n    if quantity > BULK:\n"
                          "        return price * 0.5\n    return price\n\n\n"
                          "def order_total(price, quantity):\n"
                          "    return round(unit_price(price, quantity) * quantity, 2)\n"),
           "test_pricing.py": ("from pricing import order_total, unit_price\n\n\ndef test_small_order():\n"
                               "    assert order_total(2.0, 3) == 6.0\n\n\ndef test_one():\n"
                               "    assert unit_price(5.0, 1) == 5.0\n")}


def test_a_check_of_examples_alone_sweeps_the_chain_its_run_goes_through_before_any_rewrite(tmp_path, fake,
                                                                                           docker_engine):
    """No test fails; the goal's example calls order_total, which calls unit_price, where the fault is. Every line
    the example runs, a passing test runs too, so the spectrum puts order_total, the one function the check calls,
    first. The opening sweeps it (one-change candidates alone, none fixes it), then unit_price's are tried before any
    sample, and `quantity >= BULK` makes the example hold: no model request was made for a candidate."""
    repo = make_repo(tmp_path / "repo", PRICING)
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing to do"}})
    run = run_omni(repo, "--yes", "--samples", "2", "bulk orders cost too much: order_total(3.0, 10) should be 15.0",
                   fake=fake, opening_repair=True, mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]
    assert spectrum["side"] == "examples" and spectrum["suspects"][0]["symbol"] == "order_total"
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "order_total" and "the examples' run goes through other definitions" in opening["why"]
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["symbol"] == "unit_price" and "the examples' run went through it too" in rung["why"]
    seen = candidates(run)
    assert {c["asked"] for c in seen} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    assert {c["target"].split(":")[1] for c in seen if c["passes"]} == {"unit_price"}
    assert "if quantity >= BULK:" in (repo / "pricing.py").read_text()


DISCOUNT = {"discount.py": ("BULK = 10\n\n\ndef unit_price(price, quantity):\n    if quantity >= BULK:\n"
                            "        return price / 3\n    return price\n\n\n"
                            "def order_total(price, quantity):\n"
                            "    return round(unit_price(price, quantity) * quantity, 2)\n"),
            "test_discount.py": ("from discount import order_total, unit_price\n\n\ndef test_small_order():\n"
                                 "    assert order_total(2.0, 3) == 6.0\n\n\ndef test_one():\n"
                                 "    assert unit_price(5.0, 1) == 5.0\n")}


def test_a_check_of_examples_alone_that_singles_out_another_definition_sweeps_before_any_rewrite(tmp_path, fake,
                                                                                                docker_engine):
    """The goal's example calls order_total; only its run reaches unit_price's bulk branch, so the spectrum singles
    out unit_price (a line at 1.00 that no passing test runs), not the function the check calls. The opening sweeps
    order_total (one-change candidates alone, none fixes it) instead of sampling it, then unit_price's are tried, and
    `price / 2` makes the example hold: no model request was made for a candidate."""
    repo = make_repo(tmp_path / "repo", DISCOUNT)
    fake.add(PLAN, {"tool": "finish", "args": {"summary": "nothing to do"}})
    run = run_omni(repo, "--yes", "--samples", "2", "the bulk discount is wrong: order_total(3.0, 10) should be 15.0",
                   fake=fake, opening_repair=True, mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    (spectrum,) = [e for e in run.events() if e["kind"] == "spectrum"]
    assert spectrum["side"] == "examples" and (spectrum["suspects"][0]["symbol"], spectrum["suspects"][0]["score"]) \
        == ("unit_price", 1.0) and spectrum["suspects"][1]["score"] < 1.0
    (opening,) = [e for e in run.events() if e["kind"] == "opening"]
    assert opening["symbol"] == "order_total" and "the examples' run goes through other definitions" in opening["why"]
    (rung,) = [e for e in run.events() if e["kind"] == "rung"]
    assert rung["symbol"] == "unit_price"
    seen = candidates(run)
    assert {c["asked"] for c in seen} == {"mechanical"} and not any(r.get("n") for r in fake.requests)
    assert {c["target"].split(":")[1] for c in seen if c["passes"]} == {"unit_price"}
    assert "return price / 2" in (repo / "discount.py").read_text()


def test_a_value_the_rewritten_function_reads_is_swept_before_any_suspect_is_rewritten_whole(tmp_path, fake,
                                                                                            docker_engine):
    """The fault is in a module's pattern, which every test runs on import: the spectrum cannot point to it. The
    failing test is named after `words`, the opening's target; its samples and its one-change candidates find no fix.
    The pattern it reads is then tried by its one-change candidates (`[a-z]` as `[a-z\\d]`), with no model request,
    before any other definition or the pattern is rewritten whole."""
    code = ("import re\n\nWORD = re.compile(r\"[a-z]+\")\n\n\ndef words(text):\n    return WORD.findall(text.lower())\n"
            "\n\ndef shout(text):\n    return text.upper()\n")
    test = ("from text import shout, words\n\n\ndef test_words():\n    assert words('Hi 42 there') == ['hi', '42', "
            "'there']\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n")
    repo = make_repo(tmp_path / "repo", {"text.py": code, "test_text.py": test})
    fake.add(PLAN, *[{"choices": ["no idea", "no idea"]}] * 6)
    run = run_omni(repo, "--yes", "--samples", "2", "the word list is wrong", fake=fake, opening_repair=True,
                   mechanical=True, finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    rounds = own_rounds(run)
    assert rounds[0][:2] == ("opening", "words") and rounds[-1][:2] == ("rung", "WORD")
    assert "a value has few" in rounds[-1][2] and len(rounds) == 2
    assert [r.get("n") for r in fake.requests] == [2] * 2  # the opening's two rounds of samples; none after it
    assert {c["asked"] for c in candidates(run) if c["target"] == "text.py:WORD"} == {"mechanical"}
    assert 'WORD = re.compile(r"[a-z\\d]+")' in (repo / "text.py").read_text()
