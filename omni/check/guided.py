"""Examples the user types at a Ctrl-C pause ("unit_price(10.0, 10) should be 8.5"), read as the goal's are
(omni/goal/examples.py) and made part of the run's check from then on.

The person who knows what the code should do outranks the model: when one of their examples does not hold on the
code as it is, omni's reproduction (a test or an example the model wrote) leaves the check, since it may assert the
wrong value (a model-written test that asserted `order_total(10, 11) == 110` certified a fix that removed the bulk
discount). Examples that hold now join too: a fix must keep them holding. An example the sandbox cannot run (an
import it lacks, a name that is nowhere) checks nothing and is left to the guidance. The strategy is then told the
check changed (omni/repair/strategy.py: check_changed), so omni's own rounds start again against it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from omni.check.examples import Evaluation, GoalExamples, evaluate
from omni.check.reproduction import Reproduction
from omni.check.settled import Check
from omni.goal.examples import goal_examples
from omni.protocols import Events, Sandbox

CANNOT_RUN = {"ImportError", "ModuleNotFoundError", "NameError"}


@dataclass(frozen=True)
class Taken:
    adopted: list[Evaluation]  # the examples now part of the check
    left_out: list[Evaluation]  # the ones the sandbox cannot run: guidance only
    dropped: str  # what of the model's reproduction left the check ("" for nothing)

    def note(self) -> str:
        """What the model is told, after the user's words."""
        lines = []
        if self.adopted:
            lines.append("omni made the user's examples part of the run's check (finishing is checked against "
                         "them), run on the code as it is now:")
            lines += [f"- {e.describe()}" for e in self.adopted]
        if self.dropped:
            lines.append(f"{self.dropped} is no longer part of the check: the user's examples replace it.")
        if self.left_out:
            lines.append("These could not be run here, so they check nothing: "
                         + "; ".join(f"`{e.example}` ({e.raised})" for e in self.left_out))
        return "\n".join(lines)


class GuidedExamples:
    def __init__(self, sandbox: Sandbox, examples: GoalExamples, reproduction: Reproduction, events: Events,
                 check: Callable[[], Check], changed: Callable[[], None]):
        # check: the run's check as it is now; changed: told when it changed (the strategy then forgets what it
        # learnt against the old one)
        self.sandbox, self.examples, self.reproduction = sandbox, examples, reproduction
        self.events, self.check, self.changed = events, check, changed

    def take(self, text: str) -> Taken | None:
        """The examples in the user's words, evaluated and taken into the check; None when there are none new."""
        found = [e for e in goal_examples(text) if e not in self.examples.examples]
        if not found:
            return None
        done, error = evaluate(self.sandbox, found)
        if error:
            self.events.emit("warning", message=f"your examples could not be run ({error[:200]}); they go to the "
                             "agent as guidance only")
            return None
        adopted = [e for e in done if e.raised not in CANNOT_RUN]
        left_out = [e for e in done if e.raised in CANNOT_RUN]
        for evaluation in left_out:
            self.events.emit("warning", message=f"your example `{evaluation.example}` cannot run here (it raises "
                             f"{evaluation.got}): it checks nothing; write the call as the project's tests do")
        if not adopted:
            return Taken([], left_out, "")
        dropped = self.reproduction.drop() if any(not e.holds for e in adopted) else ""
        for evaluation in adopted:
            self.examples.adopt(evaluation)
        holding = sum(e.holds for e in adopted)
        self.events.emit("check", source="your examples", tests=self.check().tests, tried=False, unrelated=[],
                         result=f"{len(adopted) - holding} of yours to make hold, {holding} to keep holding"
                         + (f"; {dropped} left the check" if dropped else ""),
                         asserts=[str(e.example) for e in adopted])
        self.changed()
        return Taken(adopted, left_out, dropped)
