"""YAML task specs: validation, dependency order, criteria, resume, the understanding check."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from conftest import clean_env

CHECK_ADD = "run: python3 -c 'from calc import add; assert add(2, 2) == 4'"
CHECK_SUB = "run: python3 -c 'from calc import sub; assert sub(5, 3) == 2'"


def step(step_id, description, depends_on=(), criteria=(), inputs=()):
    return {"step_id": step_id, "description": description, "depends_on": list(depends_on),
            "agent_spec": {"type": "coder", "input_artifacts": list(inputs), "output_artifacts": ["calc.py"],
                           "instructions": f"Do this: {description}.", "constraints": ["keep it small"],
                           "validation_criteria": list(criteria),
                           "model_preference": {"model": None, "temperature": 0.0, "max_tokens": 2048}}}


SPEC = {"task_id": "calc-fixes", "natural_language_goal": "Make calc complete", "overall_context": "tiny module",
        "plan": [step("docs", "Write NOTES.md", ["add_sub"]),
                 step("add_sub", "Add sub()", ["fix_add"], [CHECK_SUB], ["calc.py"]),
                 step("fix_add", "Fix add()", [], [CHECK_ADD], ["calc.py"])]}


def omni(repo, fake, *args, timeout=300):
    argv = [sys.executable, "-m", "omni.cli", *args]
    if fake is not None:
        argv += ["--base-url", fake.base_url, "--model", "fake-model", "--tool-mode", "native", "--sandbox", "local",
                 "--no-review", "--no-reproduce", "--no-finish-on-check", "--samples", "1"]  # scripted turns
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=timeout, env=clean_env())


def write_spec(repo, data, name="task.yaml"):
    path = repo / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def plan_text(n):
    return {"text": f"1. Part {n}\n2. Finish"}


FINISH = {"tool": "finish", "args": {"summary": "done"}}


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["plan"][0].update(depends_on=["nope"]), "step docs, field depends_on: unknown step nope"),
    (lambda d: d["plan"][2].update(depends_on=["docs"]), "form a cycle"),
    (lambda d: d["plan"][1].update(step_id="docs"), "duplicate step_id docs"),
    (lambda d: d["plan"][1].update(colour="red"), "step add_sub, field colour: Extra inputs are not permitted"),
    (lambda d: d["plan"][2]["agent_spec"].pop("instructions"), "step fix_add, field agent_spec.instructions"),
    (lambda d: d.pop("task_id"), "field task_id: Field required"),
])
def test_invalid_specs_are_refused_before_anything_runs(calc_repo, fake, mutate, message):
    data = json.loads(json.dumps(SPEC))
    mutate(data)
    path = write_spec(calc_repo, data)
    done = omni(calc_repo, fake, "run", str(path), "--yes")
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and str(path) in done.stderr
    assert fake.requests == [] and not (calc_repo / ".omni").exists()


def test_spec_runs_in_order_refines_on_a_failing_criterion_and_resumes(calc_repo, fake):
    path = write_spec(calc_repo, SPEC)
    wrong = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                "new_text": "return b - a"}}
    right = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return b - a",
                                                "new_text": "return a + b"}}
    fake.add(plan_text(1), wrong, FINISH, right, FINISH,          # fix_add: sent back once, then passes
             plan_text(2), {"text": "hmm"}, {"text": "hmm"}, {"text": "hmm"})  # add_sub: gives up
    first = omni(calc_repo, fake, "run", str(path), "--yes")
    assert first.returncode == 1, first.stdout + first.stderr
    assert 'This is step "fix_add"' in fake.requests[0]["messages"][1]["content"]
    sent_back = fake.requests[3]["messages"][-1]["content"]
    assert "Failure: refine" in sent_back and "criterion `python3 -c 'from calc import add" in sent_back
    state = yaml.safe_load((calc_repo / "task.state.yaml").read_text())
    status = {s["step_id"]: s["refinement_state"]["status"] for s in state["plan"] if "refinement_state" in s}
    assert status == {"fix_add": "passed", "add_sub": "failed"}
    assert "return a + b" in (calc_repo / "calc.py").read_text()

    before = len(fake.requests)
    add_sub = {"tool": "insert_lines", "args": {"path": "calc.py", "line": 7,
                                                "text": "\n\ndef sub(a, b):\n    return a - b"}}
    notes = {"tool": "create_file", "args": {"path": "NOTES.md", "content": "add, mul, sub\n"}}
    fake.add(plan_text(2), add_sub, FINISH, plan_text(3), notes, FINISH)
    second = omni(calc_repo, fake, "run", str(path), "--yes")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "step fix_add: skipped, passed before and its inputs are unchanged" in " ".join(second.stdout.split())
    goals = [r["messages"][-1]["content"] for r in fake.requests[before:] if "Write a short high-level plan"
             in r["messages"][-1]["content"]]
    assert ['"add_sub"' in goals[0], '"docs"' in goals[1]] == [True, True]
    state = yaml.safe_load((calc_repo / "task.state.yaml").read_text())
    assert all(s["refinement_state"]["status"] == "passed" for s in state["plan"])
    assert (calc_repo / "NOTES.md").read_text() == "add, mul, sub\n"

    again = omni(calc_repo, fake, "run", str(path), "--yes")  # nothing changed: nothing runs
    assert again.returncode == 0 and len(fake.requests) == before + 6
    assert "3/3 steps passed" in again.stdout

    (calc_repo / "calc.py").write_text((calc_repo / "calc.py").read_text() + "# edited by the user\n")
    # no change: asked once
    fake.add(plan_text(1), FINISH, FINISH, plan_text(2), FINISH, FINISH, plan_text(3), FINISH, FINISH)
    changed = omni(calc_repo, fake, "run", str(path), "--yes")  # an input changed outside the spec
    assert changed.returncode == 0, changed.stdout
    redone = [r["messages"][-1]["content"] for r in fake.requests[before + 6:]
              if "Write a short high-level plan" in r["messages"][-1]["content"]]
    assert ['"fix_add"' in redone[0], '"add_sub"' in redone[1], '"docs"' in redone[2]] == [True] * 3


def test_understanding_check_refines_instructions_once_then_proceeds(calc_repo, fake):
    path = write_spec(calc_repo, {**SPEC, "plan": [step("fix_add", "Fix add()", [], [CHECK_ADD])]})
    fix = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                              "new_text": "return a + b"}}
    fake.add({"text": "I will rewrite mul."},
             {"text": json.dumps({"verdict": "needs_refinement", "feedback": "the step is about add, not mul"})},
             {"text": "Change add() in calc.py so add(2, 2) == 4; leave mul() alone."},
             {"text": "I will fix add in calc.py and check add(2, 2) == 4."},
             {"text": json.dumps({"verdict": "satisfactory", "feedback": ""})},
             plan_text(1), fix, FINISH)
    done = omni(calc_repo, fake, "run", str(path), "--yes", "--check-understanding")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The agent's summary:\nI will rewrite mul." in fake.requests[1]["messages"][0]["content"]
    assert "leave mul() alone" in fake.requests[3]["messages"][0]["content"]  # re-checked with new instructions
    assert "leave mul() alone" in fake.requests[5]["messages"][1]["content"]  # and the run's plan used them
    state = yaml.safe_load((calc_repo / "task.state.yaml").read_text())["plan"][0]
    assert [u["verdict"] for u in state["refinement_state"]["understanding"]] == ["needs_refinement",
                                                                                 "satisfactory"]
    assert state["agent_spec"]["instructions"].startswith("Change add() in calc.py")


def test_plan_writes_a_valid_spec_after_one_retry(calc_repo, fake):
    fake.add({"text": '{"task_id": "x", "plan": []}'}, {"text": json.dumps(SPEC)})
    out = calc_repo / "planned.yaml"
    done = omni(calc_repo, fake, "plan", "make calc complete", "--spec", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not a valid task spec" in fake.requests[1]["messages"][-1]["content"]
    written = yaml.safe_load(out.read_text())
    assert written["task_id"] == "calc-fixes" and [s["step_id"] for s in written["plan"]] == ["docs", "add_sub",
                                                                                              "fix_add"]
    assert "fix_add: Fix add()" in done.stdout
    exists = omni(calc_repo, fake, "plan", "again", "--spec", str(out))
    assert exists.returncode == 2 and "pass --force" in exists.stderr


def test_run_without_yes_and_without_a_terminal_refuses(calc_repo, fake):
    path = write_spec(calc_repo, SPEC)
    done = omni(calc_repo, None, "run", str(path), "--model", "m", "--base-url", fake.base_url)
    assert done.returncode == 2 and "pass --yes" in done.stderr
