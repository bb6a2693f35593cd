"""The run's check, and whether it passes now.

The check is what a fix is measured against: the failing tests the goal is about, omni's reproduction test, and
the goal's examples (and what the finish gate found broken along the way). The finish gate holds the run to it;
verified repair tries candidates against it, and asks it after an edit (omni/repair/strategy.py: done).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from omni.box.toolbox import details
from omni.check.examples import evaluate
from omni.goal.examples import Example
from omni.protocols import Sandbox
from omni.results import Action

TEST_TIMEOUT = 300
FAILURE = 900  # characters of how_it_fails: a prompt's few lines, not a structure's whole repr


@dataclass
class Check:
    """What a fix must pass: test ids and the goal's examples (expression, expected); and the tests that failed at
    the run's start (the finish gate's baseline; None when it did not run), the only ones a fix may leave failing;
    and what that run of the whole suite took, in seconds (None when it did not run)."""

    tests: list[str]
    examples: list[dict]
    failing_at_start: list[str] | None = None
    suite_s: float | None = None

    def describe(self) -> str:
        parts = [f"- the test {t} passes" for t in self.tests[:5]]
        parts += [f"- {e['expression']} == {e['expected']}" for e in self.examples[:5]]
        return "\n".join(parts)

    def __bool__(self) -> bool:
        return bool(self.tests or self.examples)


class CheckNow:
    """Whether the run's check passes on the workspace as one action left it. Verified repair asks it twice after
    the same edit (after_action, done): the check runs once, and again only after the code changed in between
    (a candidate was applied)."""

    def __init__(self, sandbox: Sandbox, check: Callable[[], Check]):
        self.sandbox, self.check = sandbox, check
        self._after: Action | None = None  # the action the verdict is for
        self._holds = False

    def holds_after(self, action: Action) -> bool:
        if self._after is not action:
            self._after, self._holds = action, holds(self.sandbox, self.check())
        return self._holds

    def changed(self) -> None:
        self._after = None


def holds(sandbox: Sandbox, check: Check) -> bool:
    """Whether the whole check passes on the workspace now: the examples first (one cheap call), then the
    tests, only if the examples hold."""
    return not still_failing(sandbox, check, stop_early=True)


def still_failing(sandbox: Sandbox, check: Check, stop_early: bool = False) -> list[str]:
    """What of the check does not hold on the workspace now, each said for the model and the user: an example
    with what it gives, a test by its id. stop_early: at the first example that fails, the tests are not run."""
    failing = examples_failing(sandbox, check)
    if failing and stop_early:
        return failing
    if check.tests:
        ran = sandbox.run_tool("run_tests", {"selection": check.tests, "timeout": TEST_TIMEOUT}, TEST_TIMEOUT + 30)
        found = details("run_tests", ran)
        if found.summary is None:
            failing.append(f"its tests did not run: {(ran.error or ran.output).strip()[:200]}")
        else:
            failing += [f"the test {t} fails" for t in found.failing]
            if not found.failing and not found.summary.passed:
                failing.append(f"its tests ran none: {found.headline}")
    return failing


def examples_failing(sandbox: Sandbox, check: Check) -> list[str]:
    """The goal's examples that do not hold on the workspace now, each with what it gives; none without examples."""
    if not check.examples:
        return []
    done, error = evaluate(sandbox, [Example(**e) for e in check.examples])
    # they ran at the start: an error now is the change's (an endless loop, a syntax error on import)
    failing = [f"the goal's examples could not be evaluated: {error}"] if error else []
    return failing + [f"the goal's example {e.describe()}" for e in done if not e.holds]


def how_it_fails(sandbox: Sandbox, check: Check) -> str:
    """How the check fails on the workspace now, for a prompt: the goal's examples that do not hold, with what
    they give, or else the first failing test's message and the end of its trace (the first of the check's own
    order); "" when it holds."""
    if wrong := examples_failing(sandbox, check):
        return "\n".join(wrong[:2])[:FAILURE]
    if not check.tests:
        return ""
    ran = sandbox.run_tool("run_tests", {"selection": check.tests, "timeout": TEST_TIMEOUT}, TEST_TIMEOUT + 30)
    found = details("run_tests", ran)  # the first of the check's tests that fails (some may pass after a step)
    first = next((t for t in check.tests if t in found.failing), found.failing[0] if found.failing else None)
    return f"{first}\n{found.failures.get(first, '')}".strip()[:FAILURE] if first else ""
