"""The finish gate: baseline, validation (only new failures count), reviewer verdicts, refine or flag."""

from __future__ import annotations

import json
import os

import pytest

from conftest import make_repo, run_omni
from omni.check.gate import parse_verdict

PLAN = {"text": "1. Fix add\n2. Check\n3. Finish"}
FINISH = {"tool": "finish", "args": {"summary": "fixed add"}}
FIX_ADD = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                              "new_text": "return a + b"}}


def verdict(v: str, confidence: float = 0.9, *reasons: str) -> dict:
    return {"text": json.dumps({"verdict": v, "confidence": confidence, "reasons": list(reasons) or ["ok"]})}


def gates(run) -> list[str]:
    return [e["decision"] for e in run.events() if e["kind"] == "gate"]


def test_breaking_a_passing_test_is_sent_back_then_approved(calc_repo, fake):
    break_mul = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a * b",
                                                    "new_text": "return a ** b"}}
    restore_mul = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a ** b",
                                                      "new_text": "return a * b"}}
    fake.add(PLAN, FIX_ADD, break_mul, FINISH, restore_mul, FINISH, verdict("approved", 0.92, "add fixed"))
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local", review=True)
    assert run.code == 0, run.stdout
    baseline = next(e for e in run.events() if e["kind"] == "baseline")
    assert baseline["failing"] == ["test_calc.py::test_add"]  # failing before the run: not held against it
    assert gates(run) == ["refine", "accept"]
    sent_back = fake.requests[4]["messages"][-1]["content"]
    assert "Failure: refine" in sent_back
    assert "tests that passed before now fail: test_calc.py::test_mul" in sent_back
    review_prompt = fake.requests[6]["messages"][0]["content"]
    assert "Goal: fix add" in review_prompt and "+    return a + b" in review_prompt
    assert "newly passing: test_calc.py::test_add" in review_prompt
    review = next(e for e in run.events() if e["kind"] == "review")
    assert review["verdict"] == "approved" and review["confidence"] == 0.92
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_run_that_keeps_failing_review_is_flagged_after_the_limit(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH, verdict("refine", 0.7, "no test for the fix"), FINISH,
             verdict("refine", 0.6, "still no test"))
    run = run_omni(calc_repo, "--max-refinements", "1", "fix add", fake=fake, sandbox="local", review=True)
    assert run.code == 1
    summary = run.summary()
    assert summary["status"] == "flagged"
    assert "flagged for human review" in summary["message"] and "still no test" in summary["message"]
    assert gates(run) == ["refine", "flag"]
    assert "no test for the fix" in fake.requests[4]["messages"][-1]["content"]
    assert summary["applied"] is False  # flagged work is never applied


def test_unreadable_review_is_retried_once_then_flagged_with_the_raw_reply(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH, {"text": "Looks good to me!"}, {"text": "Yes, approved."})
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local", review=True)
    assert run.code == 1 and run.summary()["status"] == "flagged"
    assert "Your reply could not be read: no JSON object" in fake.requests[4]["messages"][-1]["content"]
    warning = next(e for e in run.events() if e["kind"] == "warning" and "reviewer" in e["message"])
    assert warning["raw"] == ["Looks good to me!", "Yes, approved."]


def test_no_review_still_validates_new_lint_problems(calc_repo, fake):
    sloppy = {"tool": "add_import", "args": {"path": "calc.py", "statement": "import os"}}
    tidy = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "import os\n", "new_text": ""}}
    fake.add(PLAN, FIX_ADD, sloppy, FINISH, tidy, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    assert gates(run) == ["refine", "accept"]
    sent_back = fake.requests[4]["messages"][-1]["content"]
    assert "new lint problems: " in sent_back and "calc.py: F401 `os` imported but unused" in sent_back
    assert not any(e["kind"] == "review" for e in run.events())


@pytest.mark.parametrize("text,error", [('{"verdict": "maybe", "confidence": 0.5}', "verdict"),
                                        ('{"verdict": "approved", "confidence": 3}', "confidence"),
                                        ("no json", "no JSON object")])
def test_verdict_parsing_is_strict(text, error):
    with pytest.raises(ValueError, match=error):
        parse_verdict(text)
    assert parse_verdict('Sure: {"verdict": "flag", "confidence": 0.1, "reasons": ["x"]}').verdict == "flag"


def test_finishing_without_a_change_is_asked_once_and_a_failing_test_of_the_goal_never_passes(calc_repo, fake):
    fake.add(PLAN, FINISH, FINISH)
    looked = run_omni(calc_repo, "--yes", "say whether mul is tested", fake=fake, sandbox="local")
    assert looked.code == 0, looked.stdout
    assert gates(looked) == ["refine", "accept"]  # asked once; finishing again means it was considered
    assert "no file has changed yet" in fake.requests[2]["messages"][-1]["content"]
    assert looked.summary()["changed_files"] == []
    fake.add(PLAN, FINISH, FINISH, FINISH)
    (calc_repo / ".omni" / "runs").rename(calc_repo / ".omni" / "runs-before")
    fixed = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local")
    assert fixed.code == 1 and fixed.summary()["status"] == "unverified"  # no finish argues past the check
    asked = fake.requests[-1]["messages"][-1]["content"]
    assert "the run's check still fails" in asked and "the test test_calc.py::test_add fails" in asked


def test_the_briefing_gives_the_failing_test_and_the_named_code_before_the_first_step(calc_repo, fake):
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(calc_repo, "--yes", "add() in calc.py returns the wrong result", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    goal_message = fake.requests[2]["messages"][1]["content"]  # (in the first request it has the step prompt too)
    assert "Tests that fail before any change" in goal_message
    assert "FAILED test_calc.py::test_add" in goal_message
    assert 'To run only these: run_tests with selection=["test_calc.py::test_add"]' in goal_message
    assert "calc.py lines 1-2: def add\n1| def add(a, b):\n2|     return a - b" in goal_message
    assert fake.requests[1]["messages"][1]["content"].startswith(goal_message)  # in the first request too
    # the plan request extends the steps' prefix: system prompt, tools, the goal message up to the code
    plan = fake.requests[0]
    assert plan["messages"][0] == fake.requests[1]["messages"][0] and plan["tools"] == fake.requests[1]["tools"]
    assert plan["tool_choice"] == "none" and "Write a short high-level plan" in plan["messages"][1]["content"]
    shared = os.path.commonprefix([plan["messages"][1]["content"], goal_message])
    assert "1| def add(a, b):" in shared and "Tests that fail before any change" not in shared
    assert plan["messages"][1]["content"].count("Goal: ") == 1  # the plan prompt leaves out what is in view
    assert "run the tests (run_tests) to check it" in fake.requests[2]["messages"][-1]["content"]  # after an edit
    code, tests = [e for e in run.events() if e["kind"] == "briefing"]  # before the plan, and after it
    assert "1| def add(a, b):" in code["text"] and "FAILED test_calc.py::test_add" in tests["text"]
    assert all(e["lines"] == len(e["text"].splitlines()) for e in (code, tests))


def test_a_symptom_goal_is_briefed_with_the_code_whose_names_share_its_words(tmp_path, fake):
    from conftest import make_repo
    repo = make_repo(tmp_path / "repo", {
        "labels.py": "def check_hyphen_ok(label):\n    return True\n\n\ndef check_length(label):\n"
                     "    return len(label) < 64\n\n\ndef encode(name):\n    return name.encode()\n",
        "test_labels.py": "from labels import check_hyphen_ok\n\n\ndef test_hyphen_check():\n"
                          "    assert not check_hyphen_ok('a-')\n"})
    fake.add(PLAN, FINISH, FINISH, FINISH)  # the goal's test still fails at every finish
    run = run_omni(repo, "--yes", "encoding accepts labels that end with a hyphen", fake=fake, sandbox="local")
    assert run.code == 1 and run.summary()["status"] == "unverified", run.stdout
    goal_message = fake.requests[1]["messages"][1]["content"]
    assert "Code whose names share a word with the goal" in goal_message
    assert "def check_hyphen_ok(label):" in goal_message
    assert "def check_length" not in goal_message  # shares no word with the goal
    named = goal_message.split("share a word")[1].split("Tests that fail")[0]  # the code, before the failing tests
    assert "def check_hyphen_ok(label):" in named and "def test_hyphen_check" not in named  # not where bugs live


def test_a_symptom_word_that_begins_a_name_briefs_that_name(tmp_path, fake):
    """"slugs" is not a word of `slugify`, but it begins it: the code that makes slugs is shown, not only the
    code that shares a whole word with the goal."""
    from conftest import make_repo
    repo = make_repo(tmp_path / "repo", {
        "text.py": "def slugify(title):\n    return title.lower().replace(' ', '-')\n\n\n"
                   "def wrap_words(text, width):\n    return [text]\n\n\ndef count_lines(text):\n"
                   "    return text.count(chr(10))\n",
        "test_text.py": "from text import count_lines\n\n\ndef test_count():\n    assert count_lines('a') == 0\n"})
    fake.add(PLAN, FINISH)
    run = run_omni(repo, "--yes", "Titles with two spaces between words come out as slugs with two dashes",
                   fake=fake, sandbox="local")
    assert run.code in (0, 1), run.stdout
    briefed = "".join(e["text"] for e in run.events() if e["kind"] == "briefing")
    named = briefed.split("share a word")[1]
    assert "def slugify(title):" in named and "def wrap_words" in named
    assert "def count_lines" not in named  # "lines" is not in the goal


def test_the_gate_and_the_lint_tool_share_one_baseline(tmp_path, fake):
    """A file ruff's own config leaves out of a whole-tree run still has its old problems when the model
    edits it; the lint tool calls them "there before this run", and the gate must agree, not flag them."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[tool.ruff]\nextend-exclude = [\"legacy\"]\n",
        "legacy/old.py": "import os\nimport sys\n\n\ndef f():\n    return 1\n",
        "test_old.py": "from legacy.old import f\n\n\ndef test_f():\n    assert f() == 1\n",
    })
    edit = {"tool": "replace_in_file", "args": {"path": "legacy/old.py", "old_text": "return 1",
                                                "new_text": "return 1  # checked"}}
    lint = {"tool": "lint", "args": {}}
    fake.add(PLAN, edit, lint, FINISH, FINISH)
    run = run_omni(repo, "--yes", "note that f is checked", fake=fake, sandbox="local")
    linted = [e for e in run.events() if e["kind"] == "observation" and e["tool"] == "lint"][0]
    assert linted["success"] and "all there before this run" in linted["output"]
    validation = [e for e in run.events() if e["kind"] == "validation"][0]
    assert validation["lint"] == 0, validation
    assert gates(run) == ["accept"] and run.code == 0, run.stdout
