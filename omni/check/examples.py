"""The goal's examples (omni/goal/examples.py reads them), run in the sandbox: at the start, the ones that already
hold describe what works and are dropped, and so are the ones the sandbox cannot import; the rest are a reproduction
for the model to see, re-run after every edit, and part of the run's check (omni/check/settled.py)."""

from __future__ import annotations

from dataclasses import dataclass

from omni.goal.examples import Example
from omni.protocols import Sandbox

EXAMPLE_TIMEOUT = 30


@dataclass(frozen=True)
class Evaluation:
    example: Example
    holds: bool
    got: str
    raised: str = ""
    iterator: bool = False  # what it gave is an iterator (tools/example_eval.py), which equals no list

    def describe(self) -> str:
        if self.holds:
            return f"`{self.example}` holds"
        outcome = f"raises {self.got}" if self.raised else f"gives {self.got}"
        return f"`{self.example}` does not hold: {self.example.expression} {outcome}"


def evaluate(sandbox: Sandbox, examples: list[Example]) -> tuple[list[Evaluation], str]:
    """The evaluations, or none and why they could not run at all (no Python in the sandbox, a timeout)."""
    if not examples:
        return [], ""
    result = sandbox.run_tool("check_examples", {"examples": [vars(e) for e in examples],
                                                 "timeout": EXAMPLE_TIMEOUT}, EXAMPLE_TIMEOUT + 15)
    if not result.success:
        return [], result.error
    return [Evaluation(example, bool(r["holds"]), str(r["got"]), str(r.get("raised") or ""), bool(r.get("iterator")))
            for example, r in zip(examples, result.details.get("results", []), strict=False)], ""


class GoalExamples:
    """The examples that fail at the start, for the briefing and the finish gate."""

    def __init__(self, examples: tuple[Example, ...] | list[Example]):
        self.examples = list(examples)
        self.at_start: list[Evaluation] = []

    def start(self, sandbox: Sandbox) -> str:
        """Evaluate on the untouched code; keep what fails for a reason the code can change. The briefing text."""
        done, _ = evaluate(sandbox, self.examples)  # examples that cannot run at all check nothing
        self.at_start = [e for e in done if not e.holds and e.raised not in ("ImportError", "ModuleNotFoundError")]
        self.examples = [e.example for e in self.at_start]
        if not self.at_start:
            return ""
        return ("The goal's examples, run on the code as it is now (finishing is checked against them):\n"
                + "\n".join(f"- {e.describe()}" for e in self.at_start))

    def adopt(self, shown: Evaluation) -> None:
        """An example the goal did not state but that shows its problem on the untouched code (a reproduction):
        checked from now on like the goal's own."""
        self.examples.append(shown.example)
        self.at_start.append(shown)

    def forget(self, shown: Evaluation) -> None:
        """An adopted example that no longer belongs to the check (a reproduction the user's examples replace)."""
        self.examples = [e for e in self.examples if e != shown.example]
        self.at_start = [e for e in self.at_start if e.example != shown.example]

    def now(self, sandbox: Sandbox, unchanged: bool = False) -> str:
        """For an edit's result: what the change did to the examples, as a test run would say. After an edit
        that changed nothing (a small model copies the code it was shown), that the code is not right yet."""
        if not self.examples:
            return ""
        done, error = evaluate(sandbox, self.examples)
        if error:
            return f"The goal's examples could not be evaluated now: {error}"
        text = "The goal's examples now:\n" + "\n".join(f"- {e.describe()}" for e in done)
        if unchanged and not all(e.holds for e in done):
            text += ("\nSo the code is not right yet, and new code that reads like it cannot be: change the lines "
                     "that give this result.")
        return text
