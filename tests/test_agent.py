"""The loop in-process: a real Agent, the real openai client talking HTTP to the scripted server, a local
sandbox (the tool server on this machine) over a real worktree. One test per rung of the ladder: retry
after an error, switch tool after a refused repeat, replan after repeated failures, ask_user with nobody
there, and the finish gate sending work back."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from conftest import CALC, make_repo

from omni.box.local import LocalSandbox
from omni.box.toolbox import Toolbox
from omni.box.workspace import Workspace, find_repo
from omni.check.gate import FinishGate
from omni.check.settled import Check
from omni.loop.agent import Agent, AgentConfig, Hooks, Parts, Task
from omni.model.usage import UsageMeter
from omni.model.client import ChatModel
from omni.model.endpoint import ModelConfig
from omni.prompts import Prompts
from omni.results import Action, ToolResult
from omni.run.ui import NoUser

PLAN = {"text": "1. Read calc.py\n2. Fix add\n3. Run the tests"}
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "    return a - b",
                                          "new_text": "    return a + b"}}
FINISH = {"tool": "finish", "args": {"summary": "add() now adds"}}


class Events:
    """Collects every event, as the run record would."""

    def __init__(self):
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: str, **data: Any) -> None:
        self.seen.append((kind, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for k, data in self.seen if k == kind]


@contextlib.contextmanager
def loop(tmp_path, fake, gate: bool = False, strategy=None, price: str | None = None, review: bool = False,
         **config):
    """An Agent over a worktree of the calc repo, with a local sandbox and the scripted model (a server of the
    user's own, free, unless given a price)."""
    repo = make_repo(tmp_path / "repo", CALC)
    workspace = Workspace(find_repo(repo), "agent-test")
    workspace.create()
    sandbox = LocalSandbox(workspace.path, base_rev=workspace.seed)
    events, prompts, toolbox = Events(), Prompts(), Toolbox()
    model = ChatModel(ModelConfig(model="fake-model", base_url=fake.base_url, api_key="k", tool_mode="native",
                                  price=price))
    meter = UsageMeter(events)
    hooks = Hooks(**({"strategy": strategy} if strategy else {}))
    if gate:
        hooks.gate = FinishGate(sandbox, model, prompts, events, workspace.diff_so_far, review=review, meter=meter,
                                check=lambda: Check(sorted(hooks.gate.base_tests.failing), []))  # the goal's test
        hooks.gate.baseline()
    system = prompts.render("system", workspace=str(workspace.path), tool_mode="native",
                            tools=toolbox.signatures(), instructions="")
    parts = Parts(model, model, sandbox, toolbox, prompts, events, NoUser(prompts.render("no_user")))
    limits = {"max_steps": 12, "max_cost": None, "timeout": None, **config}
    agent = Agent(Task("make add() return the sum", system, ["calc.py", "test_calc.py"]), parts, hooks,
                  AgentConfig(**limits), meter)
    try:
        yield agent, events, workspace
    finally:
        sandbox.close()
        workspace.remove()


def corrections(events: Events) -> list[str]:
    return [c["failure"] for c in events.of("correction")]


def test_an_error_is_corrected_and_the_next_try_succeeds(tmp_path, fake):
    wrong = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a ** b", "new_text": "x"}}
    fake.add(PLAN, wrong, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, workspace):
        outcome = agent.run()
        assert outcome.status == "finished" and outcome.steps == 3
        assert corrections(events) == ["edit_failed"]
        retry = fake.requests[2]["messages"][-1]["content"]
        assert "Failure: edit_failed" in retry and "old_text was not found in calc.py" in retry
        assert "return a + b" in (workspace.path / "calc.py").read_text()


def test_the_goal_and_plan_go_out_once_per_version_and_every_request_extends_the_last(tmp_path, fake):
    read = {"tool": "read_file", "args": {"path": "calc.py"}}
    mark = {"tool": "update_plan", "args": {"steps": [{"text": "Read calc.py", "status": "done"},
                                                      {"text": "Fix add", "status": "in_progress"}]}}
    fake.add(PLAN, read, mark, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        assert agent.run().status == "finished"
        prompts = [r["messages"][-1]["content"] for r in fake.requests[1:5]]
        assert "Goal: make add() return the sum\n\nPlan:\n1. [>] Read calc.py" in prompts[0]
        assert "Plan:" not in prompts[1] and "plan step 1: Read calc.py" in prompts[1]  # in view: not again
        assert "Plan:\n1. [x] Read calc.py\n2. [>] Fix add" in prompts[2]  # a new version goes out once
        assert "Plan:" not in prompts[3] and "plan step 2: Fix add" in prompts[3]
        steps = fake.requests[1:5]  # each answered prompt stays: the next request starts with the last one
        for before, after in zip(steps, steps[1:], strict=False):
            assert after["messages"][:len(before["messages"])] == before["messages"]


def test_a_refused_repeat_withholds_the_tool_so_the_model_switches(tmp_path, fake):
    read = {"tool": "read_file", "args": {"path": "test_calc.py"}}
    fake.add(PLAN, read, read, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        assert agent.run().status == "finished"
        assert corrections(events) == ["repeated"]
        # withheld for the next step: said in its prompt, while the tools sent stay the same (a stable prefix)
        assert "read_file is not offered for your next step" in fake.requests[3]["messages"][-1]["content"]
        assert fake.requests[3]["tools"] == fake.requests[2]["tools"] == fake.requests[4]["tools"]
        assert fake.requests[3]["temperature"] == 0.8  # and sampled warmer


def test_the_refused_call_made_again_is_refused_again_and_the_tools_sent_never_change(tmp_path, fake):
    read = {"tool": "read_file", "args": {"path": "test_calc.py"}}
    fake.add(PLAN, read, read, read, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        assert agent.run().status == "finished"
        said = [o["error"] for o in events.of("observation")][1:3]
        assert "already ran at step 1" in said[0] and "read_file is not offered for this step" in said[1]
        # never a list one tool short: on llama.cpp that is a new prompt start, read again from its first token
        assert all(r["tools"] == fake.requests[1]["tools"] for r in fake.requests[1:])
        assert [r["temperature"] for r in fake.requests[3:6]] == [0.8, 0.8, 0.0]  # warmer after each refusal
        assert "read_file is not offered for this step" in fake.requests[4]["messages"][-1]["content"]
        # and neither refusal joins the history: a small model copies the calls it sees there (dev run CJ: 22
        # copies of one refused call, 22 of its 28 steps)
        calls = [c["function"]["name"] for m in fake.requests[4]["messages"] for c in m.get("tool_calls") or []]
        assert calls == ["read_file"]


def test_the_withheld_tool_called_another_way_runs(tmp_path, fake):
    read = {"tool": "read_file", "args": {"path": "test_calc.py"}}
    fake.add(PLAN, read, read, {"tool": "read_file", "args": {"path": "calc.py"}}, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        assert agent.run().status == "finished"
        seen = events.of("observation")
        assert [o["success"] for o in seen[:3]] == [True, False, True]  # the repeat refused, a new read not
        assert "def add" in seen[2]["output"] and agent.guard.withheld_tool is None


def test_repeated_failures_on_one_plan_step_bring_a_new_plan(tmp_path, fake):
    def bad(n: int) -> dict:
        args = {"path": "calc.py", "old_text": f"nothing like {n}", "new_text": "x"}
        return {"tool": "replace_in_file", "args": args}

    fake.add(PLAN, bad(1), bad(2), bad(3), {"text": "1. Read calc.py whole\n2. Rewrite add"}, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        outcome = agent.run()
        assert outcome.status == "finished"
        plans = events.of("plan")
        assert [p["reason"] for p in plans] == ["initial", "replan"] and plans[1]["version"] == 2
        assert events.of("replan")[0]["reason"].startswith("3 failures on plan step 1")
        assert "Read calc.py whole" in fake.requests[5]["messages"][-1]["content"]


def test_ask_user_with_nobody_there_is_answered_and_recorded_as_an_assumption(tmp_path, fake):
    fake.add(PLAN, {"tool": "ask_user", "args": {"question": "Should add() accept strings?"}}, FIX, FINISH)
    with loop(tmp_path, fake) as (agent, events, _):
        outcome = agent.run()
        assert outcome.status == "finished"
        assert outcome.assumptions == ["Should add() accept strings?"]
        assert events.of("answer")[0]["from_user"] is False


def test_the_finish_gate_sends_unfinished_work_back(tmp_path, fake):
    fake.add(PLAN, FINISH, FIX, FINISH)  # finishing before the fix: the failing test still fails
    with loop(tmp_path, fake, gate=True) as (agent, events, _):
        outcome = agent.run()
        assert outcome.status == "finished"
        assert [g["decision"] for g in events.of("gate")] == ["refine", "accept"]
        assert corrections(events) == ["refine"]
        sent_back = fake.requests[2]["messages"][-1]["content"]
        assert "test_calc.py::test_add" in sent_back


def test_a_limit_ends_the_run_with_its_status(tmp_path, fake):
    read = {"tool": "read_file", "args": {"path": "calc.py"}}
    fake.add(PLAN, read, {"tool": "search", "args": {"pattern": "def"}})
    with loop(tmp_path, fake, max_steps=2) as (agent, events, _):
        outcome = agent.run()
        assert outcome.status == "limit_steps" and outcome.steps == 2
        assert events.of("status")[-1]["status"] == "limit_steps"


class ScriptedStrategy:
    """A strategy of the test's own, at the loop's moments (omni/protocols.py: Strategy): the planner's plan, one
    action of its own first, a note after every action, and the work done once an edit lands."""

    def __init__(self, known_plan: list[str] | None = None, first: bool = True):
        self.moments: list[str] = []
        self.own = [Action(name="read_file", args={"path": "calc.py"}, call_id="strategy_1")]
        self.known_plan, self.first = known_plan, first

    def plan(self):
        self.moments.append("plan")
        return self.known_plan

    def acts_first(self):
        return self.first

    def own_action(self):
        self.moments.append("own_action")
        return self.own.pop(0) if self.own else None

    def after_action(self, action, result):
        self.moments.append(f"after {action.name}")
        return result.model_copy(update={"output": result.output + "\n[the strategy's note]"})

    def propose(self, path, symbol, note=""):
        self.moments.append(f"propose {symbol}")
        return ToolResult.fail("tool_error", "not in this test")

    def done(self, action, result):
        self.moments.append("done")
        return "the strategy's summary" if action and action.name == "replace_in_file" else None


def test_the_loop_meets_a_strategy_only_at_its_moments(tmp_path, fake):
    strategy = ScriptedStrategy()
    fake.add(PLAN, FIX, {"tool": "propose_fixes", "args": {"path": "calc.py", "symbol": "add"}})
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and outcome.message == "the strategy's summary"
    assert strategy.moments == ["plan", "own_action", "after read_file", "done", "own_action",
                                "after replace_in_file", "done"]
    assert len(fake.requests) == 2  # the plan and one step: the strategy's own action asked the model nothing
    observations = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert "[the strategy's note]" in observations[0]  # what it added after its own action reached the model


def test_the_first_plan_is_asked_beside_work_that_does_not_read_it(tmp_path, fake):
    """A strategy that does not act first: the plan's request goes out at once and runs beside what does not read it
    (here the strategy's action all the same); the model's first step waits for the plan and sees it."""
    strategy = ScriptedStrategy(first=False)
    fake.add({**PLAN, "plan": True, "delay": 2.0}, FIX)
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and outcome.plan is not None
    kinds = [kind for kind, _ in events.seen]
    first_action, plan = kinds.index("action"), kinds.index("plan")
    assert kinds.index("phase") < first_action < kinds.index("observation") < plan  # asked first, taken later
    assert plan < [n for n, kind in enumerate(kinds) if kind == "step"][1]  # the model's step came after it
    assert "Fix add" in json.dumps(fake.requests[1]["messages"])  # and its prompt shows the plan
    assert [u["purpose"] for u in events.of("usage")] == ["step", "plan", "step"]  # the plan counted once taken


def test_when_omni_acts_first_the_plan_is_asked_when_the_models_first_step_reads_it(tmp_path, fake):
    """omni's own action runs alone on the model server; the planner is asked after it, on the conversation as it
    is then (the action's result in it), and the model's step after the plan."""
    strategy = ScriptedStrategy()
    fake.add(PLAN, FIX)
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and [s.text for s in outcome.plan.steps][0] == "Read calc.py"
    kinds = [kind for kind, _ in events.seen]
    assert kinds.index("observation") < kinds.index("phase") < kinds.index("plan")  # "planning" after the action
    assert "Write a short high-level plan" in fake.requests[0]["messages"][-1]["content"]
    assert "def add(a, b)" in json.dumps(fake.requests[0]["messages"])  # the own read's result: in the plan's view


def test_work_done_by_omnis_own_action_never_asks_for_a_plan_nobody_reads(tmp_path, fake):
    strategy = ScriptedStrategy()
    strategy.own = [Action(name="replace_in_file", args=FIX["args"], call_id="strategy_fix")]
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and fake.requests == [] and outcome.plan is None
    assert events.of("plan") == [] and "planning" not in [p["name"] for p in events.of("phase")]


def test_a_failed_own_action_before_any_plan_is_corrected_when_the_model_is_next_asked(tmp_path, fake):
    """Two of omni's own actions fail one after the other: no plan is asked between them (the second reads none);
    the model's first step asks for the plan, then gets the correction of the last failure, with the plan in view.
    Each failure is a correction event when it happens."""
    strategy = ScriptedStrategy()
    strategy.own = [Action(name="read_file", args={"path": f"{name}.py"}, call_id=f"strategy_{name}")
                    for name in ("missing", "absent")]
    fake.add(PLAN, FIX)
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished"
    assert "Write a short high-level plan" in fake.requests[0]["messages"][-1]["content"]
    corrected = fake.requests[1]["messages"][-1]["content"]
    assert "absent.py" in corrected and "missing.py" not in corrected and "Read calc.py" in corrected
    assert [c["prompt"] for c in events.of("correction")] == ["", ""]
    kinds = [kind for kind, _ in events.seen]
    assert [k for k in kinds if k in ("correction", "plan")] == ["correction", "correction", "plan"]


def test_a_plan_the_user_gives_before_any_is_asked_for_spares_the_planner(tmp_path, fake):
    """omni acts first, so the first plan's request waits for a reader; the user types a plan at a Ctrl-C meanwhile:
    that plan is the run's, and nothing asks the planner for another."""
    with loop(tmp_path, fake, strategy=ScriptedStrategy()) as (agent, events, _):
        agent.planning.start(None, now=False)
        agent.planning.user(["Fix add", "Run the tests"])
        agent.planning.take()
        assert fake.requests == [] and [s.text for s in agent.state.plan.steps] == ["Fix add", "Run the tests"]
        assert not agent.planning.deferred and events.of("plan")[0]["reason"] == "user"


def test_a_plan_asked_for_and_not_read_is_not_waited_for_on_a_local_server(tmp_path, fake):
    """Asked at the start (the strategy does not act first), not read by the end (no model step, no review): on a
    server of the user's own, the run ends without it (it would wait for a plan of work that is done)."""
    strategy = ScriptedStrategy(first=False)
    strategy.own = [Action(name="replace_in_file", args=FIX["args"], call_id="strategy_fix")]
    fake.add({**PLAN, "plan": True, "delay": 60.0})
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and len(fake.requests) == 1  # the plan was asked for: it is being written
    assert outcome.plan is None and events.of("plan") == [] and "plan" not in [u["purpose"] for u in events.of("usage")]


APPROVE = {"text": json.dumps({"verdict": "approved", "confidence": 0.9, "reasons": ["add adds"]})}


def test_a_gate_that_reviews_the_work_waits_for_a_plan_asked_for_and_reads_it(tmp_path, fake):
    strategy = ScriptedStrategy(first=False)
    strategy.own = [Action(name="replace_in_file", args=FIX["args"], call_id="strategy_fix")]
    fake.add({**PLAN, "plan": True, "delay": 1.0}, APPROVE)
    with loop(tmp_path, fake, gate=True, strategy=strategy, review=True) as (agent, events, _):
        outcome = agent.run()
    kinds = [kind for kind, _ in events.seen]
    assert outcome.status == "finished" and kinds.index("plan") < kinds.index("review") < kinds.index("gate")
    assert "Plan:\n1. [>] Read calc.py" in fake.requests[1]["messages"][-1]["content"]  # the review holds it


def test_the_review_of_work_omni_did_before_any_plan_was_asked_does_not_ask_for_one(tmp_path, fake):
    strategy = ScriptedStrategy()
    strategy.own = [Action(name="replace_in_file", args=FIX["args"], call_id="strategy_fix")]
    fake.add(APPROVE)
    with loop(tmp_path, fake, gate=True, strategy=strategy, review=True) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and len(fake.requests) == 1 and events.of("plan") == []
    review = fake.requests[0]["messages"][-1]["content"]
    assert review.startswith("You review a coding agent's work") and "Plan:" not in review


def test_a_priced_plan_asked_for_is_waited_for_shown_and_counted_at_the_end(tmp_path, fake):
    """With a price the request costs whether or not it is read: the run waits for it, shows it and counts it."""
    strategy = ScriptedStrategy(first=False)
    strategy.own = [Action(name="replace_in_file", args=FIX["args"], call_id="strategy_fix")]
    fake.add({**PLAN, "plan": True, "delay": 1.0})
    with loop(tmp_path, fake, strategy=strategy, price="1,2") as (agent, events, _):
        outcome = agent.run()
    kinds = [kind for kind, _ in events.seen]
    assert outcome.status == "finished" and len(fake.requests) == 1  # the plan only: no step asked the model
    assert kinds.index("observation") < kinds.index("plan") < kinds.index("status")
    assert [s.text for s in outcome.plan.steps] == ["Read calc.py", "Fix add", "Run the tests"]
    assert [u["purpose"] for u in events.of("usage")] == ["step", "plan"] and outcome.usage.cost_kind == "priced"


def test_a_strategy_that_knows_the_plan_spares_the_planner(tmp_path, fake):
    strategy = ScriptedStrategy(known_plan=["Read calc.py", "Fix add"])
    fake.add(FIX)
    with loop(tmp_path, fake, strategy=strategy) as (agent, events, _):
        outcome = agent.run()
    assert outcome.status == "finished" and strategy.moments[0] == "plan"
    assert len(fake.requests) == 1  # no plan request: the one request is the step after the strategy's own action
    assert [s["text"] for s in events.of("plan")[0]["steps"]] == ["Read calc.py", "Fix add"]
