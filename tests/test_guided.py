"""Examples the user types at a Ctrl-C pause join the run's check (omni/check/guided.py): through the real CLI in a
pseudo-terminal against the scripted model server, and the piece itself on a real worktree."""

from __future__ import annotations

import json
import sys
import time

import pexpect
import pytest

from conftest import clean_env, make_repo
from omni.box.local import LocalSandbox
from omni.check.examples import GoalExamples
from omni.check.guided import GuidedExamples
from omni.check.reproduction import Reproduction
from omni.check.reproduction_file import PATH as REPRODUCTION_PATH
from omni.check.settled import Check

PRICING = {
    "shop/__init__.py": "",
    "shop/pricing.py": ("BULK_QUANTITY = 10\nBULK_RATE = 0.85\n\n\ndef unit_price(price, quantity):\n"
                        "    if quantity > BULK_QUANTITY:\n        return round(price * BULK_RATE, 2)\n"
                        "    return price\n\n\ndef order_total(price, quantity):\n"
                        "    return round(unit_price(price, quantity) * quantity, 2)\n"),
    "tests/test_pricing.py": ("from shop.pricing import unit_price\n\n\ndef test_one_item_pays_the_price():\n"
                              "    assert unit_price(10.0, 1) == 10.0\n"),
}
GOAL = "customers who order 10 items don't get the bulk discount"
PLAN = {"text": "1. Find the discount rule\n2. Fix it\n3. Finish", "plan": True}
SLOW = {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}}
FIX = {"tool": "replace_in_file", "args": {"path": "shop/pricing.py", "old_text": "quantity > BULK_QUANTITY",
                                           "new_text": "quantity >= BULK_QUANTITY"}}
FINISH = {"tool": "finish", "args": {"summary": "orders of 10 get the bulk rate"}}


def spawn(repo, fake, *flags):
    argv = ["-m", "omni.cli", "--no-review", "--base-url", fake.base_url, "--model", "fake-model",
            "--tool-mode", "native", *flags, GOAL]
    return pexpect.spawn(sys.executable, argv, cwd=str(repo), env=clean_env(COLUMNS="160", LINES="50", TERM="xterm"),
                         encoding="utf-8", timeout=90, dimensions=(50, 160))


def pause_and_type(child, text: str) -> None:
    child.expect("sleep 60")
    time.sleep(1.0)  # the sleep is running in the sandbox
    child.sendintr()
    child.expect("omni paused>")
    child.sendline(text)


def apply_and_end(child) -> None:
    child.expect(r"Apply these changes to your working tree\?", timeout=120)
    child.sendline("y")
    child.expect(pexpect.EOF, timeout=60)
    child.close()


def events_of(repo) -> list[dict]:
    record = next((repo / ".omni" / "runs").iterdir()) / "events.jsonl"
    return [json.loads(line) for line in record.read_text().splitlines()]


@pytest.mark.docker
def test_the_users_examples_replace_a_wrong_reproduction_and_the_right_fix_is_verified(tmp_path, fake,
                                                                                      docker_engine):
    """The model's reproduction example asserts the wrong thing (5 items at the bulk rate). The user's examples,
    typed at a pause, say what is right; the reproduction leaves the check, so the right fix is verified (exit 0);
    kept, it would fail on the right fix and the run could not end verified."""
    repo = make_repo(tmp_path / "repo", PRICING)
    wrong = {"text": json.dumps({"expression": "unit_price(10.0, 5)", "expected": "8.5"})}
    fake.add(PLAN, wrong, SLOW, FIX, FINISH)
    child = spawn(repo, fake, "--sandbox", "docker", "--samples", "1", "--no-finish-on-check")
    child.expect("check: reproduction example")
    pause_and_type(child, "unit_price(10.0, 10) should be 8.5, and unit_price(10.0, 5) should be 10.0")
    child.expect("check: your examples")
    apply_and_end(child)
    assert child.exitstatus == 0, child.before
    assert "quantity >= BULK_QUANTITY" in (repo / "shop" / "pricing.py").read_text()
    told = fake.requests[3]["messages"][-1]["content"]  # the step after the pause
    assert "unit_price(10.0, 10) should be 8.5" in told
    assert "omni's reproduction example `unit_price(10.0, 5) == 8.5` is no longer part of the check" in told
    assert "`unit_price(10.0, 10) == 8.5` does not hold" in told and "`unit_price(10.0, 5) == 10.0` holds" in told
    events = events_of(repo)
    checks = [e for e in events if e["kind"] == "check"]
    assert [c["source"] for c in checks] == ["reproduction example", "your examples"]
    assert checks[1]["asserts"] == ["unit_price(10.0, 10) == 8.5", "unit_price(10.0, 5) == 10.0"]
    (summary,) = [e for e in events if e["kind"] == "summary"]
    assert summary["check"]["source"] == "your examples" and summary["check"]["holds"] is True


def test_a_run_with_no_check_opens_omnis_round_once_the_user_gives_an_example(tmp_path, fake):
    """No check at the start (no reproduction asked), so omni's opening round has nothing to try fixes against and
    the model steps. Once the user's example joins the check, the opening round is owed again: one of its
    mechanical candidates is the fix, and the run ends verified with no further step of the model's."""
    repo = make_repo(tmp_path / "repo", PRICING)
    unreadable = {"choices": ["no code here", "no code here"]}  # the round's samples, after its mechanical ones
    fake.add(PLAN, SLOW, *[unreadable] * 4)
    child = spawn(repo, fake, "--sandbox", "local", "--no-reproduce", "--samples", "2")
    child.expect("check: none")
    pause_and_type(child, "unit_price(10.0, 10) should be 8.5: orders of 10 or more get the bulk rate")
    child.expect("check: your examples")
    child.expect("omni starts by trying rewrites of unit_price")
    apply_and_end(child)
    assert child.exitstatus == 0, child.before
    assert "quantity >= BULK_QUANTITY" in (repo / "shop" / "pricing.py").read_text()
    events = events_of(repo)
    kinds = [e["kind"] for e in events]
    assert kinds.index("guidance") < kinds.index("opening") < kinds.index("candidate")
    fixes = [e for e in events if e["kind"] == "candidate" and e["passes"] and not e["breaks"]]
    assert fixes[0]["asked"] == "mechanical" and "quantity >= BULK_QUANTITY" in fixes[0]["code"]
    assert kinds.count("step") == 2  # the slow step, then omni's round: the model was asked for no step after it


class Recorder:
    def __init__(self):
        self.events: list[tuple[str, dict]] = []

    def emit(self, kind: str, **data) -> None:
        self.events.append((kind, data))


def test_examples_that_cannot_run_check_nothing_and_a_reproduction_test_leaves_with_its_file(tmp_path):
    repo = make_repo(tmp_path / "repo", PRICING)
    (repo / ".omni" / "check").mkdir(parents=True)
    (repo / REPRODUCTION_PATH).write_text("def test_wrong():\n    assert False\n")
    sandbox, events, changed = LocalSandbox(repo), Recorder(), []
    examples = GoalExamples([])
    reproduction = Reproduction(None, sandbox, None, events, None, GOAL, examples)
    reproduction.tests = [f"{REPRODUCTION_PATH}::test_wrong"]

    def check() -> Check:
        return Check(reproduction.tests, [vars(e) for e in examples.examples])

    guided = GuidedExamples(sandbox, examples, reproduction, events, check, lambda: changed.append(True))
    assert guided.take("look at unit_price first") is None  # no example: guidance only
    taken = guided.take("nosuch_function(1) should be 2")
    assert taken.adopted == [] and [str(e.example) for e in taken.left_out] == ["nosuch_function(1) == 2"]
    assert examples.examples == [] and reproduction.tests and changed == []  # the check is as it was
    assert any(kind == "warning" and "nosuch_function(1) == 2" in data["message"] for kind, data in events.events)
    taken = guided.take("unit_price(10.0, 10) should be 8.5")
    assert [str(e) for e in examples.examples] == ["unit_price(10.0, 10) == 8.5"] and changed == [True]
    assert reproduction.tests == [] and not (repo / REPRODUCTION_PATH).exists()
    assert f"omni's reproduction test ({REPRODUCTION_PATH}) is no longer part of the check" in taken.note()
    assert guided.take("unit_price(10.0, 10) should be 8.5") is None  # already in the check
    sandbox.close()
