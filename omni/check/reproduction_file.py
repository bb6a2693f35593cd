"""A reproduction as a short test file, for a problem one expression cannot show (omni/check/reproduction.py asks
for an example first). Asked for in a ```python block: asked for the file as a JSON string (constrained to a
schema), a small model wrote a placeholder for it (`<path>`) or the file escaped twice and fenced inside the
string, until the length cap. A reply in JSON anyway is still read.

The first try is asked once, at the run's temperature. A later try is sampled, a few replies at once at a warm
temperature: asked again at temperature 0, a small model writes the same file again whatever its feedback says.
A file the same as an earlier try's is not run again; the earlier outcome is said for it.

The file lives in the workspace's .omni/check/ folder: pytest runs it when named, the full suite does not collect
it (a dot folder), and it never enters the run's diff."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationError

from omni.box.toolbox import details
from omni.check.asserts import asserted_examples, what_it_asserts
from omni.check.cutoff import salvaged
from omni.check.examples import evaluate
from omni.check.forms import of_another_form, other_form
from omni.check.goal_input import as_reported, off_input
from omni.check.mend import imported, lacking, mended
from omni.goal.examples import Example, reported
from omni.goal.reading import speaks_of_iterators
from omni.model.textmode import code_of, json_object
from omni.prompts import Prompts
from omni.protocols import Events, Model, Sandbox

PATH = ".omni/check/test_reproduce.py"
ASSERTIONS = {"AssertionError", "Failed"}  # a failed assert, or pytest.raises/pytest.fail: the behaviour is wrong
MAX_TOKENS = 384  # a reply's cap: a test file of one or two short tests is 100-300 tokens; a small model that runs
                  # on past that repeats itself to the configured cap (1,024 with --local: two minutes on a CPU), and
                  # the complete part of a reply cut at this cap is still run
RETRY_SAMPLES = 2  # files sampled at once in a later try (a llama.cpp server's slots write them together), at most
RETRY_TEMPERATURE = 0.7  # warm enough that a small model writes another file where the first one missed
LOOKED_UP = 8  # undefined names of a test file looked up in the project, at most (a test's own names are few)
RUN_S = 30  # a reproduction test's run, at most: one short test runs in seconds; tests that slept to see a
            # cache entry expire ran to the old cap of 120 s in both samples of a try (bench/README.md, run CN)


@dataclass(frozen=True)
class Placed:
    """A reproduction prompt in its place: the steps' messages it ends, and their tool list when it is sent along
    (not to be called, so the request extends the prefix the steps' requests read); None when it is left out."""

    messages: list[dict]
    tools: list[dict] | None = None


class ReproductionTest(BaseModel):  # how a reply in JSON is read, though a fenced file is asked for
    test_code: str = Field(description="a complete pytest file: imports, then one or two short test functions")


class ReproductionFile:
    def __init__(self, model: Model, sandbox: Sandbox, prompts: Prompts, events: Events, meter, goal: str,
                 attempts: int, samples: int):
        # meter: as for Reproduction; samples: the run's --samples (1: every try asks one reply, greedy)
        self.model, self.sandbox, self.prompts, self.events, self.meter = model, sandbox, prompts, events, meter
        self.goal, self.attempts = goal, attempts
        self.samples = min(samples, RETRY_SAMPLES)
        self.outcomes: dict[str, str] = {}  # each file run, and what its run said
        self.asserts: list[str] = []  # what the file kept as the reproduction checks (omni/check/asserts.py)
        self.reported = reported(goal)  # what the goal says its call gives now (omni/check/goal_input.py)
        self.lazy = speaks_of_iterators(goal)  # an iterator a call gives may then be the problem, not a form

    def written(self, placed: Callable[[str], Placed], imports: str) -> tuple[list[str], str]:
        """(the failing tests of the first file that fails as it should, what its run said and on which try), or
        ([], "") when no try wrote one; the file of a try that did not is removed."""
        feedback = ""
        for attempt in range(1, self.attempts + 1):
            prompt = self.prompts.render("reproduce", goal=self.goal, path=PATH, feedback=feedback, imports=imports)
            replies = self._replies(placed(prompt), attempt)
            feedback = ""
            for sample, reply in enumerate(replies, 1):
                self.meter.count(reply.usage, "reproduction")
                code, tests, said = self._tried(reply, imports)
                self.events.emit("reproduction_try", attempt=attempt, sample=sample if len(replies) > 1 else 0,
                                 form="test", code=code, fails_as_it_should=bool(tests), outcome=said)
                if tests:
                    self.asserts = what_it_asserts(code)
                    return tests, f"{said}; try {attempt}"
                feedback = feedback or said  # the first sample's mistake, for the next try
        self.sandbox.run_tool("delete_file", {"path": PATH}, 30)
        return [], ""

    def _replies(self, request: Placed, attempt: int) -> list:
        if attempt == 1 or self.samples < 2:
            return [self.model.text(request.messages, tools=request.tools, max_tokens=MAX_TOKENS)]  # a fenced file
        replies, _ = self.model.samples(request.messages, self.samples, RETRY_TEMPERATURE, tools=request.tools,
                                        max_tokens=MAX_TOKENS)
        return replies

    def _tried(self, reply, imports: str) -> tuple[str, list[str], str]:
        """One reply's test written and run: (its code, its failing tests, the run's headline) when it fails on an
        assertion, else (its code, [], what went wrong, for the next try's prompt). A reply cut off at the cap is
        run for its complete part (omni/check/cutoff.py); one with none is not run, and its code is the reply as
        it came, so the record shows where it ran on."""
        cut = reply.finish_reason == "length"
        code = mended(salvaged(reply.text) if cut else _test_code(reply.text), imports)  # a fence, a lacking import
        if cut and not code:
            return reply.text, [], (f"Your reply was cut off at the length limit ({MAX_TOKENS} tokens) before the "
                                    "file was complete. Write a shorter file: the imports and one short test function.")
        if not code:
            return "", [], "Your reply held no test file. Answer with the complete file in one ```python block."
        code = self._defined(code)
        if code in self.outcomes:
            return code, [], f"It is the same file as an earlier try, whose run said: {self.outcomes[code]}"
        code, tests, said = self._ran(code)
        self.outcomes[code] = said
        if cut and tests:
            said += "; the complete part of a reply cut off at the length limit"
        elif cut:
            said = (f"Your reply ran to the length limit ({MAX_TOKENS} tokens): write a shorter file. Its complete "
                    f"part was run. {said}")
        return code, tests, said

    def _defined(self, code: str) -> str:
        """The file with an import of each name it reads and binds nowhere that the project defines (`Ledger`,
        used and never imported: `from books.ledger import Ledger`), asked of the project's Python: where the
        definition omni's examples find by that name lives. A name the project does not define is left to the lint
        guard, whose message goes back to the model."""
        names = sorted(lacking(code))[:LOOKED_UP]
        done, _ = evaluate(self.sandbox, [Example(f"{name}.__module__", "None") for name in names])
        lines = [f"from {module} import {name}" for name, got in zip(names, done, strict=False)
                 if not got.raised and (module := _module_name(got.got))]
        return imported(code, lines)

    def _ran(self, code: str) -> tuple[str, list[str], str]:
        """A test file written and run, as `_tried` returns it."""
        written = self.sandbox.run_tool("create_file", {"path": PATH, "content": code, "overwrite": True}, 60)
        if not written.success:
            return code, [], f"The file could not be written: {written.error[:300]}"
        ran = self.sandbox.run_tool("run_tests", {"selection": [PATH], "timeout": RUN_S}, RUN_S + 30)
        if ran.failure == "timeout":
            return code, [], (f"It ran past {RUN_S} s without finishing. A test that shows a problem runs in a "
                              "second or two: it must not wait for time to pass (no sleep). When the behaviour "
                              "depends on time, give the code a clock the test controls (an argument that takes a "
                              "timer or a clock, when the code has one) and move that clock on.")
        found = details("run_tests", ran)
        counts = found.summary
        wrong = sorted({found.raised.get(t) or "AssertionError" for t in found.failing} - ASSERTIONS)  # unknown: ok
        if counts is not None and counts.failed and not counts.errors and not wrong:
            mistake = self._not_the_problem(code)
            return (code, [], mistake) if mistake else (code, list(found.failing), found.headline)
        if counts is not None and not counts.failed and not counts.errors:
            return code, [], self._passed(code)
        what = f"it raised {', '.join(wrong)}" if wrong else "an error"
        return code, [], (f"It did not fail on an assertion ({what}): the test itself is wrong, in how it imports "
                          "or calls the code. Fix that, and assert the behaviour.\n" + (ran.output or ran.error)[-800:])

    def _passed(self, code: str) -> str:
        """What to tell the model of a test that passed on the starting code: that it shows nothing, and, when one
        of its assertions is of the goal's call (omni/check/goal_input.py), what the goal reports it gives: another
        value says the test's input is not the goal's; the same says its input is right and its value the one the
        goal complains of."""
        done, _ = evaluate(self.sandbox, asserted_examples(code))
        return ("It passed on the starting code, so it does not show the problem: "
                + (off_input(done, self.reported) or as_reported(done, self.reported)
                   or "test the behaviour the goal says is wrong."))

    def _not_the_problem(self, code: str) -> str:
        """What makes a failing test no reproduction of the goal's problem, or "", read from its assertions as
        examples (omni/check/asserts.py): one that compares the code's value with a value of another form, which
        no fix makes pass; one that holds on a call the goal reports another value of (omni/check/goal_input.py),
        so that the test fails on a case the goal never spoke of."""
        done, _ = evaluate(self.sandbox, asserted_examples(code))  # not evaluated: nothing is known against it
        for got in done:
            iterator = got.iterator and not self.lazy
            if not got.holds and not got.raised and (form := other_form(got.example.expected, got.got, iterator)):
                return "One of its assertions: " + of_another_form(got.example.expression, got.got, form, iterator)
        other = off_input(done, self.reported)
        return f"One of its assertions passes: {other}" if other else ""


def _module_name(value: str) -> str:
    """The dotted module name a repr of a text holds (`'pkg.sub'`), else ""."""
    try:
        text = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return ""
    return text if isinstance(text, str) and all(p.isidentifier() for p in text.split(".")) else ""


def _test_code(text: str) -> str:
    try:
        return ReproductionTest.model_validate(json_object(text)).test_code.strip()
    except (ValueError, ValidationError):
        return code_of(text)
