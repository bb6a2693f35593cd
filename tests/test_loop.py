"""The loop end to end: the omni CLI as a subprocess, the scripted model over HTTP, real tools."""

from __future__ import annotations

import json

import pytest
from conftest import git, run_omni

PLAN = {"text": "1. Read calc.py\n2. Fix add\n3. Run the tests"}
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "    return a - b",
                                          "new_text": "    return a + b"}}
FINISH = {"tool": "finish", "args": {"summary": "add() now adds"}}


def last_user_text(request: dict) -> str:
    return request["messages"][-1]["content"]


@pytest.mark.docker
def test_plan_fail_correct_finish_in_docker(calc_repo, fake, docker_engine):
    bad_edit = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a + b",
                                                   "new_text": "return a * b"}}
    fake.add(PLAN, {"tool": "read_file", "args": {"path": "calc.py"}}, bad_edit, FIX,
             {"tool": "run_tests", "args": {}}, FINISH)
    run = run_omni(calc_repo, "--yes", "make add() return the sum", fake=fake)
    assert run.code == 0, run.stdout + run.stderr

    # The correction prompt that reached the server: the failed action and the exact error, with the goal and
    # the plan in view: the first step's prompt holds them and stays in the history, so the correction does
    # not repeat them (the plan has not changed since).
    correction = last_user_text(fake.requests[3])
    first_prompt = fake.requests[3]["messages"][1]["content"]  # the goal message, the first step prompt merged in
    assert "Goal: make add() return the sum" in first_prompt
    assert "1. [>] Read calc.py\n2. [ ] Fix add\n3. [ ] Run the tests" in first_prompt
    assert "Plan:" not in correction and "Goal:" not in correction
    # Every step's request extends the one before it, message for message: one prefix for the server's cache.
    steps = fake.requests[1:6]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after["messages"][:len(before["messages"])] == before["messages"]
    assert 'Action: replace_in_file {"path": "calc.py", "old_text": "return a + b", "new_text": "return a * b"}' \
        in correction
    assert "Failure: edit_failed" in correction
    assert "old_text was not found in calc.py; nothing was written." in correction
    assert "    2|     return a - b" in correction  # the near-miss hint
    assert "the same tool with\ncorrected arguments, another tool, update_plan" in correction
    # The failed call is in the history as a tool message too, with the error's first line only:
    # the correction right after it quotes the whole error, and tokens are prompt time on a CPU model.
    tool_msgs = [m for m in fake.requests[3]["messages"] if m["role"] == "tool"]
    assert tool_msgs[-1]["content"] == ("Result of replace_in_file: FAILED\nold_text was not found in calc.py; "
                                        "nothing was written.\n(the exact error follows below)")
    assert tool_msgs[-1]["content"].endswith("FAILED\nold_text was not found in calc.py; nothing was written.\n"
                                             "(the exact error follows below)")
    assert "Or rewrite the whole def instead (lines 1-2): replace_symbol with path='calc.py', symbol='add'" \
        in correction

    assert (calc_repo / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")
    kinds = run.kinds()
    for kind in ("plan", "step", "action", "observation", "correction", "usage", "status", "summary"):
        assert kind in kinds, kind
    assert kinds.index("plan") < kinds.index("action") < kinds.index("correction")
    observations = [e for e in run.events() if e["kind"] == "observation"]
    assert [o["success"] for o in observations] == [True, False, True, True]
    assert observations[1]["failure"] == "edit_failed"
    assert observations[3]["output"].startswith("pytest: 2 passed, 0 failed")
    summary = run.summary()
    assert summary["status"] == "finished" and summary["applied"] is True and summary["steps"] == 5
    assert summary["usage"]["prompt_tokens"] == 600 and summary["changed_files"][0]["path"] == "calc.py"
    assert "+    return a + b" in (run.run_dir / "diff.patch").read_text()
    assert git(calc_repo, "status", "--porcelain").strip() == "M calc.py"  # .omni is ignored by itself


def test_text_mode_trajectory_with_streaming(calc_repo, fake):
    def call(name, **args):
        return {"text": f"Next step.\n```tool_call\n{json.dumps({'name': name, 'arguments': args})}\n```"}

    fake.add(PLAN, call("read_file", path="calc.py"), {"text": "I am not sure what to do."},
             call("replace_in_file", path="calc.py", old_text="    return a - b", new_text="    return a + b"),
             call("finish", summary="fixed"))
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, sandbox="local", tool_mode="text")
    assert run.code == 0, run.stdout
    assert all("tools" not in r for r in fake.requests)
    system = fake.requests[1]["messages"][0]["content"]
    assert "```tool_call" in system and "replace_symbol(" in system
    correction = last_user_text(fake.requests[3])
    assert "Failure: format_error" in correction and "```tool_call block" in correction
    roles = [m["role"] for m in fake.requests[4]["messages"]]
    assert all(a != b for a, b in zip(roles[1:], roles[2:], strict=False)), roles
    assert "return a + b" in (calc_repo / "calc.py").read_text()


def test_a_reply_cut_off_by_max_tokens_gets_a_correction_and_the_run_goes_on(calc_repo, fake):
    fake.add(PLAN, {"tool": "replace_symbol", "args": '{"path": "calc.py", "new_source": "def add(a, b):',
                    "finish_reason": "length"},
             {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "    return a - b",
                                                  "new_text": "    return a + b"}}, FINISH)
    run = run_omni(calc_repo, "--yes", "--max-tokens", "700", "fix add", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    assert all(r["max_tokens"] == 700 for r in fake.requests)
    correction = last_user_text(fake.requests[2])
    assert "Failure: format_error" in correction and "cut off at the length limit of 700 tokens" in correction
    assert "return a + b" in (calc_repo / "calc.py").read_text()
    cut = [e for e in run.events() if e["kind"] == "observation"][0]  # the record keeps what was cut off
    assert cut["failure"] == "format_error"
    assert cut["details"]["reply"] == '{"path": "calc.py", "new_source": "def add(a, b):'
    # The step after a cut-off samples warmer (a cut-off at temperature 0 is mostly a copying loop), then cools.
    assert [r.get("temperature") for r in fake.requests[1:4]] == [0.0, 0.8, 0.0], fake.requests


def test_unknown_tool_and_bad_arguments_get_model_facing_errors(calc_repo, fake):
    fake.add(PLAN, {"tool": "rm_rf", "args": {"path": "/"}},
             {"tool": "read_file", "args": {"path": "calc.py", "colour": "red"}},
             {"tool": "read_file", "args": '{"path": "calc.py"'}, {"text": "1. Use real tools"},
             {"tool": "create_file", "args": {"path": "x.py"}}, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "--max-steps", "10", "look around", fake=fake, sandbox="local")
    assert run.code == 0
    assert "The current plan is not working" in last_user_text(fake.requests[4])
    unknown, extra, broken, missing = (last_user_text(fake.requests[n]) for n in (2, 3, 5, 6))
    assert "Failure: unknown_tool" in unknown and "Valid tools: list_files, find_files" in unknown
    assert "Failure: invalid_arguments" in extra and "colour: Extra inputs are not permitted" in extra
    assert "Failure: format_error" in broken and "not valid JSON" in broken
    assert "content: Field required" in missing and "'required': ['path', 'content']" in missing
    assert not (calc_repo / "x.py").exists()


def test_the_core_tool_set_offers_fewer_tools_and_refuses_the_others(calc_repo, fake):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "ls"}}, FIX, FINISH)
    run = run_omni(calc_repo, "--yes", "--tools", "core", "--samples", "4", "fix add", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout + run.stderr
    offered = [t["function"]["name"] for t in fake.requests[1]["tools"]]
    assert offered == ["search", "read_file", "read_symbol", "replace_in_file", "insert_lines", "replace_symbol",
                       "create_file", "run_tests", "update_plan", "ask_user", "finish", "propose_fixes"]
    refused = last_user_text(fake.requests[2])
    assert "Failure: unknown_tool" in refused and "Valid tools: search, read_file" in refused
    assert "return a + b" in (calc_repo / "calc.py").read_text()  # the core set still does the job
    bad = run_omni(calc_repo, "--tools", "tiny", "x")
    assert bad.code == 2 and "invalid choice: 'tiny'" in bad.stderr


def test_several_calls_run_only_the_first(calc_repo, fake):
    fake.add(PLAN, {"calls": [{"tool": "read_file", "args": {"path": "calc.py"}},
                              {"tool": "delete_file", "args": {"path": "calc.py"}}]}, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "look", fake=fake, sandbox="local")
    assert run.code == 0
    tool_msg = [m for m in fake.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "only the first (read_file) ran" in tool_msg and "delete_file(path=calc.py)" in tool_msg
    assert (calc_repo / "calc.py").exists()
    assert [e["tool"] for e in run.events() if e["kind"] == "action"] == ["read_file", "finish", "finish"]


def test_repeat_is_refused_and_failures_trigger_a_replan(calc_repo, fake):
    same = {"tool": "shell", "args": {"command": "false"}}
    fake.add(PLAN, same, same, same, {"text": "1. Try another way\n2. Finish"}, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "do it", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    observations = [e for e in run.events() if e["kind"] == "observation"]
    assert [o["failure"] for o in observations[:3]] == ["command_failed", "command_failed", "repeated"]
    assert "already failed twice" in observations[2]["error"]
    assert "Change your approach" in last_user_text(fake.requests[5])
    # At temperature 0 a small model repeats itself; the request after a refusal samples warmer.
    assert [r.get("temperature") for r in fake.requests[1:4]] == [0.0] * 3 and fake.requests[5]["temperature"] == 0.8
    # Nor is the refused call left in the history for it to copy: its failed turns are taken out,
    # and the correction still names the call and its error.
    calls = [c["function"] for m in fake.requests[5]["messages"] for c in m.get("tool_calls") or []]
    assert calls == [] and "shell(command=false)" in last_user_text(fake.requests[5])
    # Warmer is not always enough: the repeated tool is withheld for the next step, and the correction says
    # so. The tools sent stay the same (the prompt's start stays byte-identical for the server's cache).
    offered = [fake.requests[n]["tools"] for n in (3, 5, 6)]
    assert offered[0] == offered[1] == offered[2]
    assert "shell is not offered for your next step" in last_user_text(fake.requests[5])
    replan_request = last_user_text(fake.requests[4])
    assert "The current plan is not working" in replan_request and "shell(command=false)" in replan_request
    plans = [e for e in run.events() if e["kind"] == "plan"]
    assert [p["reason"] for p in plans] == ["initial", "replan"] and plans[1]["version"] == 2


def test_three_format_errors_in_a_row_stop_the_run(calc_repo, fake):
    fake.add(PLAN, {"text": "hmm"}, {"text": "well"}, {"text": "so"})
    run = run_omni(calc_repo, "--yes", "do it", fake=fake, sandbox="local")
    assert run.code == 1
    assert run.summary()["status"] == "format_errors"
    assert "3 unreadable replies in a row" in run.summary()["message"]


def test_step_limit_stops_with_exit_3(calc_repo, fake):
    fake.add(PLAN, *[{"tool": "list_files", "args": {"max_results": n}} for n in range(1, 4)])
    run = run_omni(calc_repo, "--yes", "--max-steps", "3", "loop", fake=fake, sandbox="local")
    assert run.code == 3 and run.summary()["status"] == "limit_steps"
    assert "Budget left: 1 steps." in last_user_text(fake.requests[3])


def test_time_limit_stops_with_exit_3(calc_repo, fake):
    fake.add(PLAN, {"tool": "shell", "args": {"command": "sleep 30", "timeout": 60}}, FINISH)
    run = run_omni(calc_repo, "--yes", "--timeout", "2", "wait", fake=fake, sandbox="local")
    assert run.code == 3 and run.summary()["status"] == "limit_time"
    assert run.summary()["wall_s"] < 20


def test_cost_limit_stops_with_exit_3(calc_repo, fake):
    usage = {"prompt_tokens": 400_000, "completion_tokens": 0}
    fake.add(PLAN, {"tool": "list_files", "args": {}, "usage": usage}, FINISH)
    argv = ["--no-review", "--samples", "1", "--no-reproduce", "--base-url", fake.base_url,  # scripted turns
            "--model", "gpt-4o-mini", "--tool-mode", "native", "--sandbox", "local",
            "--yes", "--max-cost", "0.05", "--price", "0.15,0.60", "spend"]  # a local server: its price given
    run = run_omni(calc_repo, *argv)
    assert run.code == 3 and run.summary()["status"] == "limit_cost"


def test_context_overflow_condenses_and_sends_a_different_request(calc_repo, fake):
    reads = [{"tool": "read_file", "args": {"path": "calc.py", "start_line": n}} for n in (1, 2, 3, 4)]
    fake.add(PLAN, *reads, {"status": 400, "error": "maximum context length is 4096 tokens"}, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "read", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    overflowed, retried = fake.requests[5], fake.requests[6]
    assert retried != overflowed and len(retried["messages"]) < len(overflowed["messages"])
    goal_msg = retried["messages"][1]["content"]
    assert "Goal: read" in goal_msg and "condensed" in goal_msg and "read_file(path=calc.py, start_line=1)" in goal_msg
    # The plan was in a prompt that was condensed away: the condensed history carries it
    assert "1. [>] Read calc.py" in goal_msg and "Goal: read\n\nPlan:" in goal_msg
    assert "condensed" in run.kinds()


def test_ask_user_without_a_terminal_never_waits(calc_repo, fake):
    fake.add(PLAN, {"tool": "ask_user", "args": {"question": "Tabs or spaces?"}}, FINISH, FINISH)
    run = run_omni(calc_repo, "look", fake=fake, sandbox="local", timeout=60)
    assert run.code == 0
    assert "No user is available: choose the most reasonable option" in \
        [m for m in fake.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert run.summary()["assumptions"] == ["Tabs or spaces?"]
    assert [e["kind"] for e in run.events() if e["kind"] in ("question", "answer")] == ["question", "answer"]


def test_update_plan_and_planner_model(calc_repo, fake):
    fake.add(PLAN, {"tool": "update_plan", "args": {"steps": [
        {"text": "Read calc.py", "status": "done"}, {"text": "Fix add", "status": "in_progress"}]}}, FINISH, FINISH)
    run = run_omni(calc_repo, "--yes", "--planner-model", "big-planner", "plan it", fake=fake, sandbox="local")
    assert run.code == 0
    assert fake.requests[0]["model"] == "big-planner" and fake.requests[1]["model"] == "fake-model"
    assert "1. [x] Read calc.py\n2. [>] Fix add" in last_user_text(fake.requests[2])


def test_without_yes_or_terminal_the_users_tree_is_left_alone(calc_repo, fake):
    (calc_repo / "calc.py").write_text((calc_repo / "calc.py").read_text() + "# my uncommitted note\n")
    (calc_repo / "notes.txt").write_text("untracked, mine\n")
    before = {p: (calc_repo / p).read_bytes() for p in ("calc.py", "notes.txt", "test_calc.py")}
    fake.add(PLAN, FIX, FINISH)
    run = run_omni(calc_repo, "fix", fake=fake, sandbox="local")
    assert run.code == 0
    assert {p: (calc_repo / p).read_bytes() for p in before} == before
    summary = run.summary()
    assert summary["applied"] is False and f"omni apply {summary['run_id']}" in run.stdout
    diff = (run.run_dir / "diff.patch").read_text()
    assert "+    return a + b" in diff and "my uncommitted note" not in diff  # seeded, not a change
    branch_file = git(calc_repo, "show", f"{summary['branch']}:calc.py")
    assert "return a + b" in branch_file and "# my uncommitted note" in branch_file
    applied = run_omni(calc_repo, "apply", summary["run_id"][:12])
    assert applied.code == 0, applied.stdout + applied.stderr
    assert (calc_repo / "calc.py").read_text() == before["calc.py"].decode().replace("a - b", "a + b")


def test_an_unchanged_read_is_not_repeated_but_a_read_after_an_edit_is(calc_repo, fake):
    read = {"tool": "read_file", "args": {"path": "calc.py"}}
    fake.add(PLAN, read, read, FIX, read, FINISH)
    run = run_omni(calc_repo, "--yes", "fix", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    observations = [e for e in run.events() if e["kind"] == "observation"]
    assert [o["success"] for o in observations[:4]] == [True, False, True, True]
    assert "already ran at step 1 and nothing has changed since" in observations[1]["error"]
    assert "return a + b" in observations[3]["output"]  # after the edit the same read runs again


def test_a_paged_read_asked_again_reads_on_until_the_end(tmp_path, fake):
    from conftest import CALC, make_repo

    repo = make_repo(tmp_path / "repo", {**CALC, "long.py": "".join(f"x{n} = {n}\n" for n in range(1, 251))})
    read = {"tool": "read_file", "args": {"path": "long.py"}}
    fake.add(PLAN, read, read, read, read, FINISH, FINISH)
    run = run_omni(repo, "--yes", "fix", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    outputs = [o["output"] or o["error"] for o in run.events() if o["kind"] == "observation"]
    assert outputs[0].splitlines()[-1].endswith("read on with start_line=101]")
    assert "Reading on from line 101" in outputs[1] and "101| x101 = 101" in outputs[1]
    assert "Reading on from line 201" in outputs[2] and outputs[2].splitlines()[-1] == "250| x250 = 250"
    assert "already ran at step 3 and nothing has changed since" in outputs[3]  # the end: nothing more to read
    assert git(repo, "status", "--porcelain") == ""  # read-only: the user's tree is untouched


def test_a_long_class_read_again_by_name_reads_on_through_the_lines_it_left_out(tmp_path, fake):
    """read_symbol shows a long class's first lines and its members; a small model asks for it again and again.
    The second ask reads on through the class's lines not shown (a read_file of them, paged); past its end, the
    same ask is refused as a repeat."""
    from conftest import CALC, make_repo

    body = "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(1, 61))
    repo = make_repo(tmp_path / "repo", {**CALC, "shop.py": f"class Shop:\n    kind = 1\n\n{body}\nX = 0\n"})
    read = {"tool": "read_symbol", "args": {"symbol": "Shop", "path": "shop.py"}}
    fake.add(PLAN, read, read, read, read, FINISH, FINISH)
    run = run_omni(repo, "--yes", "fix", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    outputs = [o["output"] or o["error"] for o in run.events() if o["kind"] == "observation"]
    assert "(long; its first lines, then its members" in outputs[0] and "method Shop.m60(self)  [181-182]" in outputs[0]
    assert "Reading on from line 16" in outputs[1] and "16|     def m5(self):" in outputs[1]
    assert "Reading on from line 116" in outputs[2] and outputs[2].splitlines()[-1] == "182|         return 60"
    assert "X = 0" not in outputs[2]  # the class's lines only
    assert "already ran at step 3 and nothing has changed since" in outputs[3]


def test_the_same_test_run_with_nothing_changed_is_not_run_again(calc_repo, fake):
    tests = {"tool": "run_tests", "args": {}}
    fake.add(PLAN, tests, tests, FIX, tests, FINISH)
    run = run_omni(calc_repo, "--yes", "fix", fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    observations = [e for e in run.events() if e["kind"] == "observation"]
    assert [o["tool"] for o in observations] == ["run_tests", "run_tests", "replace_in_file", "run_tests"]
    assert observations[0]["failure"] == "tests_failed" and "1 failed" in observations[0]["error"]
    assert "already ran at step 1 and nothing has changed since" in observations[1]["error"]
    assert observations[3]["success"] and observations[3]["output"].startswith("pytest: 2 passed")
    assert "the tests you ran pass. If that meets the goal, call finish now" in last_user_text(fake.requests[5])


def test_in_text_mode_a_call_to_the_withheld_tool_is_not_run(calc_repo, fake):
    def call(name, **args):
        return {"text": f"```tool_call\n{json.dumps({'name': name, 'arguments': args})}\n```"}

    same = call("shell", command="false")
    fake.add(PLAN, same, same, same, {"text": "1. Try another way\n2. Finish"}, same,
             call("finish", summary="done"), call("finish", summary="done"))
    run = run_omni(calc_repo, "--yes", "do it", fake=fake, sandbox="local", tool_mode="text")
    assert run.code == 0, run.stdout
    observations = [e for e in run.events() if e["kind"] == "observation"]
    assert [o["failure"] for o in observations[:4]] == ["command_failed", "command_failed", "repeated", "repeated"]
    assert "shell is not offered for this step" in observations[3]["error"]
