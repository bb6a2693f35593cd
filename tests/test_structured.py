"""Structured output: where the server constrains replies to a JSON schema, omni asks for its schemas
(plan, verdict, text-mode action); where it refuses, omni asks as before. Both runs end well."""

from __future__ import annotations

import json

import pytest
from conftest import run_omni
from fake_server import FakeOpenAI

FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}}
FINISH = {"tool": "finish", "args": {"summary": "add() adds"}}
APPROVED = {"text": json.dumps({"verdict": "approved", "confidence": 0.9, "reasons": ["fixed"]})}


def schema_name(request: dict) -> str | None:
    return (request.get("response_format") or {}).get("json_schema", {}).get("name")


def test_a_server_with_structured_output_gets_the_schemas(calc_repo, fake):
    fake.add({"text": json.dumps({"steps": ["Fix add in calc.py", "Run the tests"]})}, FIX, FINISH, APPROVED)
    run = run_omni(calc_repo, "--yes", "make add() return the sum", fake=fake, sandbox="local", review=True)
    assert run.code == 0, run.stdout + run.stderr
    assert len(fake.probes) == 1  # asked once per endpoint, for every request of the run
    assert schema_name(fake.requests[0]) == "PlanReply"
    assert schema_name(fake.requests[1]) is None  # native tool calls need no schema
    assert schema_name(fake.requests[-1]) == "Verdict"
    plan = next(e for e in run.events() if e["kind"] == "plan")
    assert [s["text"] for s in plan["steps"]] == ["Fix add in calc.py", "Run the tests"]
    assert next(e for e in run.events() if e["kind"] == "structured_output")["supported"] is True


def test_a_server_without_it_is_asked_as_before(calc_repo):
    with FakeOpenAI(structured=False) as fake:
        fake.add({"text": "1. Fix add\n2. Run the tests"}, FIX, FINISH, APPROVED)
        run = run_omni(calc_repo, "--yes", "make add() return the sum", fake=fake, sandbox="local", review=True)
    assert run.code == 0, run.stdout + run.stderr
    assert all("response_format" not in r for r in fake.requests)
    assert next(e for e in run.events() if e["kind"] == "structured_output")["supported"] is False
    assert [s["text"] for s in next(e for e in run.events() if e["kind"] == "plan")["steps"]] == [
        "Fix add", "Run the tests"]


@pytest.mark.parametrize("structured", [True, False])
def test_text_mode_actions_are_constrained_to_the_offered_tools(calc_repo, structured):
    action = {"text": json.dumps({"name": "replace_in_file", "arguments": FIX["args"]})}
    done = {"text": json.dumps({"name": "finish", "arguments": FINISH["args"]})}
    with FakeOpenAI(structured=structured) as fake:
        fake.add({"text": "1. Fix add"}, action, done)
        run = run_omni(calc_repo, "--yes", "make add() return the sum", fake=fake, sandbox="local",
                       tool_mode="text")
    assert run.code == 0, run.stdout + run.stderr
    step = fake.requests[1]
    if structured:
        choices = step["response_format"]["json_schema"]["schema"]["anyOf"]
        names = [c["properties"]["name"]["const"] for c in choices]
        assert "replace_in_file" in names and "finish" in names
        assert choices[names.index("finish")]["properties"]["arguments"]["required"] == ["summary"]
    else:
        assert "response_format" not in step
    assert "return a + b" in (calc_repo / "calc.py").read_text()
