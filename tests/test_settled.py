"""Finishing when the run's check passes: after an edit that lands, omni runs the check (the goal's examples,
the tests that failed at the start) and, when it all passes, asks the finish gate at once. The gate still
decides: what it sends back is the next step's correction."""

from __future__ import annotations

from conftest import make_repo, run_omni

PLAN = {"text": "1. Fix add\n2. Finish"}
FIX_ADD = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                              "new_text": "return a + b"}}
WRONG_ADD = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                "new_text": "return b - a"}}
FINISH = {"tool": "finish", "args": {"summary": "fixed add"}}
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def test_an_edit_that_makes_the_goals_example_hold_finishes_without_another_model_turn(tmp_path, fake):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    fake.add(PLAN, FIX_ADD)  # no finish call scripted: a turn more would be a request the script cannot answer
    run = run_omni(repo, "--yes", "add(2, 3) == 5 does not hold", fake=fake, sandbox="local",
                   finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    assert len(fake.requests) == 2  # the plan and one step
    kinds = run.kinds()
    assert kinds.index("observation") < kinds.index("check_passes") < kinds.index("gate")
    passed = next(e for e in run.events() if e["kind"] == "check_passes")
    assert passed["tests"] == [] and passed["examples"] == 1
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["accept"]
    summary = run.summary()
    assert summary["status"] == "finished" and summary["steps"] == 1 and summary["applied"] is True
    assert "the run's check passes" in summary["message"] and "add(2, 3) == 5" in summary["message"]
    assert (repo / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")


def test_an_edit_that_leaves_a_failing_test_failing_does_not_finish(calc_repo, fake):
    fake.add(PLAN, WRONG_ADD, {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return b - a",
                                                                  "new_text": "return a + b"}})
    run = run_omni(calc_repo, "--yes", "make test_add pass", fake=fake, sandbox="local", finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    assert len(fake.requests) == 3
    assert run.kinds().count("check_passes") == 1
    passed = next(e for e in run.events() if e["kind"] == "check_passes")
    assert passed["tests"] == ["test_calc.py::test_add"]
    assert run.summary()["steps"] == 2


def test_what_the_gate_sends_back_is_the_next_correction(tmp_path, fake):
    """The check (test_add) passes, but the edit broke test_mul, which passed at the start."""
    repo = make_repo(tmp_path / "repo", {
        "calc.py": CALC, "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 2) == 4"
        "\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"})
    breaks_mul = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": CALC.split(":\n", 1)[1],
                                                      "new_text": CALC.split(":\n", 1)[1].replace("a - b", "a + b")
                                                      .replace("a * b", "a + b")}}
    mend_mul = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "def mul(a, b):\n    return a + b",
                                                    "new_text": "def mul(a, b):\n    return a * b"}}
    fake.add(PLAN, breaks_mul, mend_mul)
    run = run_omni(repo, "--yes", "make test_add pass", fake=fake, sandbox="local", finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["refine", "accept"]
    correction = fake.requests[2]["messages"][-1]["content"]
    assert "Action: finish" in correction and "tests that passed before now fail: test_calc.py::test_mul" \
        in correction
    assert run.summary()["steps"] == 2 and run.summary()["status"] == "finished"


def test_no_finish_on_check_waits_for_the_models_finish(tmp_path, fake):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    fake.add(PLAN, FIX_ADD, FINISH)
    run = run_omni(repo, "--yes", "add(2, 3) == 5 does not hold", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout + run.stderr
    assert len(fake.requests) == 3 and "check_passes" not in run.kinds()
    assert run.summary()["steps"] == 2 and run.summary()["message"] == "fixed add"
