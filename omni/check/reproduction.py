"""The run's check, settled before the first edit: the goal's examples and the tests that fail at the start,
and where there are neither (a goal that only describes a symptom), a short reproduction test the model
writes and omni confirms fails on the starting code. Re-asked, with what went wrong, within a small budget.

The reproduction test lives in the workspace's .omni/check/ folder: pytest runs it when named, the full
suite does not collect it (a dot folder), and it never enters the run's diff."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from omni.box.toolbox import details
from omni.model.textmode import code_of, json_object
from omni.prompts import Prompts
from omni.protocols import Events, Model, Sandbox

PATH = ".omni/check/test_reproduce.py"
ASSERTIONS = {"AssertionError", "Failed"}  # a failed assert, or pytest.raises/pytest.fail: the behaviour is wrong
SHOWN_IMPORTS = 6  # the project's tests' most common import lines of its own code, shown to the test's writer
MAX_TOKENS = 512  # a reply's cap: a test file of one or two short tests is 100-300 tokens; a small model that runs
                  # on past that repeats itself to the configured cap (1,024 with --local: two minutes on a CPU)


class ReproductionTest(BaseModel):
    test_code: str = Field(description="a complete pytest file: imports, then one or two short test functions")


@dataclass
class Established:
    source: str  # "goal examples", "tests failing at the start", "reproduction test", or "none"
    tests: list[str] = field(default_factory=list)
    result: str = ""


class Reproduction:
    def __init__(self, model: Model, sandbox: Sandbox, prompts: Prompts, events: Events, meter,
                 goal: str, attempts: int = 2, tools: list[dict] | None = None):
        # meter: the run's usage meter (omni/loop/state.py), which counts these requests with the rest;
        # tools: the steps' tool list, sent along so the request extends the steps' cached prefix
        self.model, self.sandbox, self.prompts, self.events, self.meter = model, sandbox, prompts, events, meter
        self.goal, self.attempts, self.tools = goal, attempts, tools
        self.tests: list[str] = []

    def establish(self, failing: list[str], examples: int, messages: Callable[[str], list[dict]],
                  reproduce: bool = True, unrelated: list[str] | None = None) -> Established:
        """Settle the check once, say it in the record and the live log, and return it. failing: the tests failing
        at the start that the goal is about; reproduce: whether to ask for a reproduction test when there are none
        (a goal that asks for something new has no failing behaviour to show); unrelated: the tests failing at the
        start that the goal is not about, for the record."""
        if examples or failing:
            found = Established("goal examples" if examples else "tests failing at the start", failing,
                                f"{examples} example(s) to hold" if examples else f"{len(failing)} test(s) fail")
        elif reproduce:
            found = self._reproduce(messages)
        else:
            found = Established("none", [], "the goal asks for something new: no test can fail before it is done, "
                                "so the tests that pass now and the review check the result")
        self.events.emit("check", source=found.source, tests=found.tests, result=found.result, tried=reproduce
                         and found.source in ("none", "reproduction test"), unrelated=unrelated or [])
        return found

    def _reproduce(self, messages: Callable[[str], list[dict]]) -> Established:
        feedback, imports = "", imports_in_tests(self.sandbox)
        for attempt in range(1, self.attempts + 1):
            prompt = self.prompts.render("reproduce", goal=self.goal, path=PATH, feedback=feedback, imports=imports)
            reply = self.model.text(messages(prompt), schema=ReproductionTest, tools=self.tools,
                                    max_tokens=MAX_TOKENS)
            self.meter.count(reply.usage, "reproduction")
            code, tests, said = self._tried(reply)
            self.events.emit("reproduction_try", attempt=attempt, code=code, fails_as_it_should=bool(tests),
                             outcome=said)  # the record says what each try's test did, so such runs can be read
            if tests:
                self.tests = tests
                return Established("reproduction test", tests,
                                   f"fails on the starting code as it should ({said}; try {attempt})")
            feedback = said
        self.sandbox.run_tool("delete_file", {"path": PATH}, 30)
        return Established("none", [], f"no reproduction test failed on the starting code in {self.attempts} tries")

    def _tried(self, reply) -> tuple[str, list[str], str]:
        """One reply's test written and run: (its code, its failing tests, the run's headline) when it fails on an
        assertion, else (its code, [], what went wrong, for the next try's prompt). A reply cut off at the cap is
        not run; its code is the reply as it came."""
        if reply.finish_reason == "length":  # the cut text as the code, so the record shows where it ran on
            return reply.text, [], (f"Your reply was cut off at the length limit ({MAX_TOKENS} tokens) before the file was "
                            "complete. Write a shorter file: the imports and one short test function.")
        code = _test_code(reply.text)
        if not code:
            return "", [], "Your reply held no test file. Answer with the JSON object and the complete file."
        written = self.sandbox.run_tool("create_file", {"path": PATH, "content": code, "overwrite": True}, 60)
        if not written.success:
            return code, [], f"The file could not be written: {written.error[:300]}"
        ran = self.sandbox.run_tool("run_tests", {"selection": [PATH], "timeout": 120}, 150)
        found = details("run_tests", ran)
        counts = found.summary
        wrong = sorted({found.raised.get(t) or "AssertionError" for t in found.failing} - ASSERTIONS)  # unknown: ok
        if counts is not None and counts.failed and not counts.errors and not wrong:
            return code, list(found.failing), found.headline
        if counts is not None and not counts.failed and not counts.errors:
            return code, [], ("It passed on the starting code, so it does not show the problem: test the behaviour "
                              "the goal says is wrong.")
        what = f"it raised {', '.join(wrong)}" if wrong else "an error"
        return code, [], (f"It did not fail on an assertion ({what}): the test itself is wrong, in how it imports "
                          "or calls the code. Fix that, and assert the behaviour.\n" + (ran.output or ran.error)[-800:])


def _test_code(text: str) -> str:
    try:
        return ReproductionTest.model_validate(json_object(text)).test_code.strip()
    except (ValueError, ValidationError):
        return code_of(text)


def imports_in_tests(sandbox: Sandbox) -> str:
    """The import lines the project's own tests use most for its code (not the standard library's or pytest's),
    most common first: how a new test reaches the code, which a small model otherwise guesses (an ImportError is
    no reproduction)."""
    found = sandbox.run_tool("search", {"pattern": r"^(from|import)\s+\w", "glob": "test*.py", "max_results": 400},
                             60)
    if not found.success:
        return ""
    lines = Counter(m.text.strip() for m in details("search", found).matches)
    own = [line for line, _ in lines.most_common() if _root(line) not in _NOT_OWN]
    return "\n".join(own[:SHOWN_IMPORTS])


_NOT_OWN = set(sys.stdlib_module_names) | {"__future__", "pytest", "_pytest", "mock", "hypothesis"}


def _root(line: str) -> str:
    """The top module an import line names: `from a.b import c` -> a, `import a.b as c` -> a."""
    return line.split()[1].split(".")[0].rstrip(",")
