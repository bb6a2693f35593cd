"""The finish gate: validation against the starting state (only NEW test and lint failures count) and against
the run's check (what the goal is about: its examples, the tests it is about, the reproduction test), then a
reviewer's structured verdict. It accepts, sends the work back with consolidated feedback, or, after a bounded
number of refinements, ends the run: `unverified` while the check still fails (no `finish` argues past it),
`flagged` for anything else. Every decision is an event in the run record."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Literal

from pydantic import BaseModel, Field, ValidationError

from omni.box.toolbox import details
from omni.errors import StopRun
from omni.check.settled import Check, still_failing
from omni.prompts import Prompts
from omni.model.textmode import json_object

DIFF_CHARS = 15_000


class Verdict(BaseModel):
    verdict: Literal["approved", "refine", "flag"]
    confidence: float = Field(ge=0, le=1)
    reasons: list[str] = Field(default_factory=list)


def parse_verdict(text: str) -> Verdict:
    try:
        return Verdict.model_validate(json_object(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(str(exc).splitlines()[0] if isinstance(exc, json.JSONDecodeError) else
                         "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from exc


@dataclass
class TestState:
    ran: bool
    failing: set[str] = field(default_factory=set)
    headline: str = ""
    report: str = ""  # the failing tests with their messages, as run_tests shows them
    missing: dict[str, str] = field(default_factory=dict)  # failing test -> a module it needs that is not installed
    unbound: dict[str, str] = field(default_factory=dict)  # failing test -> a name its own code never binds
    order: list[str] = field(default_factory=list)  # the failing tests in the order the suite ran them
    seconds: float | None = None  # what the whole run took (None: not run)

    def in_order(self) -> list[str]:
        """The failing tests in the order the suite ran them: run alone, a test can need what an earlier one set up
        (a conftest's session fixture fills doctest_namespace for the doctests collected after it). Any the order
        lacks (a state built by hand) come last, sorted."""
        ran = list(dict.fromkeys(t for t in self.order if t in self.failing))
        return ran + sorted(self.failing - set(ran))


class FinishGate:
    def __init__(self, sandbox, planner, prompts: Prompts, events, diff: Callable[[], str], review: bool = True,
                 max_refinements: int = 2, criteria: list[str] | None = None, test_timeout: int = 600,
                 check: Callable[[], Check] | None = None, meter=None):
        self.sandbox, self.planner, self.prompts, self.events, self.diff = sandbox, planner, prompts, events, diff
        self.review_enabled, self.max_refinements = review, max_refinements
        self.commands = [c[4:].strip() for c in criteria or [] if c.startswith("run:")]
        self.judged = [c for c in criteria or [] if not c.startswith("run:")]
        self.test_timeout = test_timeout
        self.check = check  # the run's check, settled before the first step: it must hold at the end
        self.meter = meter  # counts the reviewer's tokens with the run's
        self.refinements = 0
        self.noticed: set[str] = set()
        self.base_tests = TestState(ran=False)
        self.base_lint: Counter = Counter()
        self.broken: set[str] = set()  # tests that passed at the start and failed at a finish: the check's now
        self.unrelated: list[str] = []  # failing at the start, and not what the goal is about: reported only
        self.check_fails: list[str] = []  # what of the check failed at the last finish

    # ---- validation -------------------------------------------------------------------------------
    def _tests(self) -> TestState:
        result = self.sandbox.run_tool("run_tests", {"timeout": self.test_timeout}, self.test_timeout + 30)
        found = details("run_tests", result)
        if result.failure == "timeout" or found.summary is None or result.exit_code == 5:
            said = (result.error or result.output).strip()
            return TestState(ran=False, headline=said.splitlines()[0][:200] if said else "no tests")
        return TestState(ran=True, failing=set(found.failing), headline=found.headline, report=result.output,
                         missing=dict(found.missing), unbound=dict(found.unbound), order=list(found.failing),
                         seconds=result.duration_s)

    def _lint(self, paths: list[str] | None) -> tuple[Counter, list[str] | None]:
        """(every finding as (path, 'CODE message'), the ones the lint tool judged new or None if it could not)"""
        found = details("lint", self.sandbox.run_tool("lint", {"paths": paths} if paths else {}, 180))
        return Counter((f.path, f"{f.code} {f.message}") for f in found.findings), found.new_findings

    def _new_lint(self) -> list[str]:
        """Lint problems the run added. The lint tool compares the changed files with the starting state
        and says which findings are new; the gate takes that judgment, so a finding the model was told
        was "there before this run" never fails the gate. Only without it (no per-file comparison) does
        the gate fall back to its whole-tree baseline."""
        now, new = self._lint(None)
        if new is not None:
            return list(new)
        return [f"{path}: {rest}" for (path, rest), n in (now - self.base_lint).items() for _ in range(n)]

    def baseline(self) -> None:
        self.base_tests = self._tests()
        self.base_lint, _ = self._lint(["."])
        self.events.emit("baseline", tests=self.base_tests.headline, failing=sorted(self.base_tests.failing),
                         lint_problems=sum(self.base_lint.values()))

    def start_baseline(self) -> None:
        """Record the baseline in the background, while the planner thinks."""
        self._baseline_thread = threading.Thread(target=self._baseline_safely, daemon=True)
        self._baseline_thread.start()

    def _baseline_safely(self) -> None:
        try:
            self.baseline()
        except Exception as exc:  # noqa: BLE001 - reported, and validation then has no baseline
            self.base_tests = TestState(ran=False, headline=f"baseline failed: {exc}")
            if not getattr(self.sandbox, "closed", False):  # a run that ended first needs no word of it
                self.events.emit("warning", message=f"recording the baseline failed: {exc}")

    def wait_baseline(self) -> None:
        """Called before the first action: nothing may change the workspace while the baseline runs."""
        thread = getattr(self, "_baseline_thread", None)
        if thread is not None:
            thread.join()

    def validate(self) -> tuple[list[str], str]:
        problems = []
        tests = self._tests() if self.base_tests.ran else TestState(ran=False, headline="not run (no baseline)")
        new_failures = sorted(tests.failing - self.base_tests.failing)
        self.broken.update(new_failures)
        if new_failures:
            problems.append(f"tests that passed before now fail: {', '.join(new_failures[:10])}")
        new_lint = self._new_lint()
        if new_lint:
            problems.append("new lint problems: " + "; ".join(new_lint[:10]))
        for command in self.commands:
            done = self.sandbox.run_tool("shell", {"command": command, "timeout": self.test_timeout},
                                         self.test_timeout + 30)
            if not done.success:
                problems.append(f"criterion `{command}` failed ({done.error}): {done.output.strip()[-600:]}")
        check = self.check() if self.check else Check([], [])
        self.check_fails = still_failing(self.sandbox, check) if check else []
        if self.check_fails:
            problems.append("the run's check still fails, so the goal is not met yet: "
                            + "; ".join(self.check_fails[:6]) + ". Read the failure, fix the code, run it again")
        problems += self.notices()
        fixed = sorted(self.base_tests.failing - tests.failing) if tests.ran else []
        still = sorted(set(self.unrelated) & tests.failing) if tests.ran else []
        report = (f"tests before: {self.base_tests.headline or 'none'}; after: {tests.headline or 'none'}"
                  + (f"; newly passing: {', '.join(fixed[:10])}" if fixed else "")
                  + f"; new lint problems: {len(new_lint)}"
                  + ("; the run's check holds" if check and not self.check_fails else "")
                  + (f"; failing before the run and not what the goal is about (left as they are): "
                     f"{', '.join(still[:5])}" if still else ""))
        self.events.emit("validation", new_failures=problems, tests=tests.headline, lint=len(new_lint))
        self.events.emit("verification", holds=None if not check else not self.check_fails,
                         failing=self.check_fails, unrelated=still)
        return problems, report

    def notices(self) -> list[str]:
        """Things that are often, but not always, unfinished work. Each is raised once: finishing again after it
        means the model has considered it (a question needs no change)."""
        found = []
        if not self.diff().strip() and "no_change" not in self.noticed:
            found.append("no file has changed yet. If the goal needs a change, make it now (read the code, then "
                         "edit it). If it truly needs none, call finish again and say why.")
            self.noticed.add("no_change")
        return found

    # ---- review -----------------------------------------------------------------------------------
    def review(self, goal: str, plan: str, summary: str, report: str) -> Verdict:
        diff = self.diff()
        prompt = self.prompts.render("review", goal=goal, plan=plan, summary=summary,
                                     validation=report, criteria=self.judged, diff=diff[:DIFF_CHARS],
                                     diff_cut=len(diff) > DIFF_CHARS)
        messages = [{"role": "user", "content": prompt}]
        raw = []
        for _ in range(2):  # one retry for an unreadable verdict
            reply = self.planner.text(messages, schema=Verdict)
            self.meter.count(reply.usage, "review")
            raw.append(reply.text)
            try:
                return parse_verdict(reply.text)
            except ValueError as exc:
                messages += [{"role": "assistant", "content": reply.text},
                             {"role": "user", "content": self.prompts.render("review_retry", error=str(exc))}]
        self.events.emit("warning", message="the reviewer's reply did not parse twice; flagging", raw=raw)
        return Verdict(verdict="flag", confidence=0.0, reasons=["the reviewer's reply could not be read: "
                                                                 + raw[-1][:300]])

    # ---- the decision -----------------------------------------------------------------------------
    def __call__(self, goal: str, plan: Callable[[], str], summary: str) -> str | None:
        problems, report = self.validate()
        if problems:
            decision, reasons, confidence = "refine", problems, 1.0
        elif not self.review_enabled:
            decision, reasons, confidence = "accept", ["validation passed; review skipped (--no-review)"], 1.0
        else:
            verdict = self.review(goal, plan(), summary, report)
            self.events.emit("review", verdict=verdict.verdict, confidence=verdict.confidence,
                             reasons=verdict.reasons)
            decision = {"approved": "accept"}.get(verdict.verdict, verdict.verdict)
            reasons, confidence = verdict.reasons, verdict.confidence
        if decision == "refine" and self.refinements >= self.max_refinements:
            decision = "unverified" if self.check_fails else "flag"
            reasons = [f"still not accepted after {self.refinements} refinement(s)"] + reasons
        self.events.emit("gate", decision=decision, attempt=self.refinements + 1, reasons=reasons,
                         confidence=confidence, validation=report)
        if decision == "accept":
            return None
        if decision == "unverified":
            said = f"; the model said: {summary.strip()[:300]}" if summary.strip() else ""
            raise StopRun("unverified", f"unverified: the run's check still fails ({'; '.join(self.check_fails[:4])})"
                          f" after {self.refinements} refinement(s){said}")
        if decision == "flag":
            raise StopRun("flagged", "flagged for human review: " + "; ".join(reasons))
        self.refinements += 1
        return self.prompts.render("refine", attempt=self.refinements, limit=self.max_refinements, reasons=reasons)
