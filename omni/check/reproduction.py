"""The run's check, settled before the first edit: the goal's examples and the tests that fail at the start,
and where there are neither (a goal that only describes a symptom), a reproduction the model writes and omni
confirms shows the problem on the starting code. Re-asked, with what went wrong, within a small budget:
- first as an example, one call and the value it should give (a reply of a few dozen tokens, whose names the
  sandbox finds without an import), a few sampled at once and the one they agree on taken; it joins the goal's
  examples, so it is checked, probed and traced as they are;
- then as a short test file, for a problem one expression cannot show (omni/check/reproduction_file.py)."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from omni.box.toolbox import details
from omni.check.agreement import agreed
from omni.check.examples import Evaluation, GoalExamples, evaluate
from omni.check.forms import of_another_form, other_form
from omni.check.goal_input import as_reported, off_input
from omni.check.reproduction_file import PATH as REPRODUCTION_PATH, Placed, ReproductionFile
from omni.check.written import bare_words, read_example
from omni.goal.examples import Example, reported
from omni.goal.reading import names_word, speaks_of_errors, speaks_of_iterators
from omni.model.textmode import json_object
from omni.prompts import Prompts
from omni.protocols import Events, Model, Sandbox

SHOWN_IMPORTS = 6  # the project's tests' most common import lines of its own code, shown to the test's writer
EXAMPLE_TOKENS = 200  # an example's reply: one call and one value, 20-80 tokens
EXAMPLE_SAMPLES = 4  # examples asked at once in a try (a llama.cpp server's slots write them together), at most
EXAMPLE_TEMPERATURE = 0.7  # warm enough that a small model's answers differ where it is unsure
# What a call raises when it is called wrongly, not when the code goes wrong: never a reproduction by itself.
UNKNOWN_NAME = {"NameError", "ModuleNotFoundError"}  # what a name that is nowhere raises in an example
MODEL_WRITTEN = ("reproduction example", "reproduction test")  # the check's sources the model wrote, not the user
MISUSE = {"NameError", "ImportError", "ModuleNotFoundError", "SyntaxError", "TypeError", "AttributeError"}


class ReproductionExample(BaseModel):
    expression: str = Field(description="one Python expression that calls the project's code")
    expected: str = Field(description="the value it should give once the problem is fixed, written in Python")


@dataclass
class Established:
    source: str  # "goal examples", "tests failing at the start", "reproduction example", "reproduction test", "none"
    tests: list[str] = field(default_factory=list)
    result: str = ""
    asserts: list[str] = field(default_factory=list)  # what a check the model wrote asserts (asserts.py)


class Reproduction:
    def __init__(self, model: Model, sandbox: Sandbox, prompts: Prompts, events: Events, meter, goal: str,
                 examples: GoalExamples | None = None, attempts: int = 2, example_attempts: int = 2,
                 example_samples: int = EXAMPLE_SAMPLES):
        # meter: the run's usage meter (omni/loop/state.py), which counts these requests with the rest;
        # examples: the goal's examples, which a reproduction example joins (None: no example is asked for)
        self.model, self.sandbox, self.prompts, self.events, self.meter = model, sandbox, prompts, events, meter
        self.goal, self.attempts = goal, attempts
        self.examples, self.example_attempts = examples, example_attempts if examples is not None else 0
        self.example_samples = min(example_samples, EXAMPLE_SAMPLES)  # the run's --samples: 1 asks one, greedy
        self.reported = reported(goal)  # what the goal says its call gives now: the input's and the value's hint
        self.lazy = speaks_of_iterators(goal)  # an iterator a call gives may then be the problem, not a form
        self.tests: list[str] = []
        self.example: Evaluation | None = None  # the reproduction example, once one shows the problem

    def establish(self, failing: list[str], examples: int, placed: Callable[[str], Placed],
                  reproduce: bool = True, unrelated: list[str] | None = None) -> Established:
        """Settle the check once, say it in the record and the live log, and return it. failing: the tests failing
        at the start that the goal is about; reproduce: whether to ask for a reproduction test when there are none
        (a goal that asks for something new has no failing behaviour to show); unrelated: the tests failing at the
        start that the goal is not about, for the record; placed: each request's prompt in its place (the steps'
        messages, with or without their tool list)."""
        if examples or failing:
            found = Established("goal examples" if examples else "tests failing at the start", failing,
                                f"{examples} example(s) to hold" if examples else f"{len(failing)} test(s) fail")
        elif reproduce:
            found = self._reproduce(placed)
        else:
            found = Established("none", [], "the goal asks for something new: no test can fail before it is done, "
                                "so the tests that pass now and the review check the result")
        self.events.emit("check", source=found.source, tests=found.tests, result=found.result, tried=reproduce
                         and found.source in ("none", "reproduction test"), unrelated=unrelated or [],
                         asserts=found.asserts)
        return found

    def drop(self) -> str:
        """Take the reproduction out of the check (the user's own examples replace it: omni/check/guided.py), its
        test file out of the workspace; what was dropped, said for the model and the log ("" for nothing)."""
        if self.example is not None:
            said = f"omni's reproduction example `{self.example.example}`"
            self.examples.forget(self.example)
            self.example = None
            return said
        if not self.tests:
            return ""
        self.sandbox.run_tool("delete_file", {"path": REPRODUCTION_PATH}, 30)
        self.tests = []
        return f"omni's reproduction test ({REPRODUCTION_PATH})"

    def _reproduce(self, placed: Callable[[str], Placed]) -> Established:
        imports = imports_in_tests(self.sandbox)
        shown = self._by_example(placed, imports)
        if shown:
            return shown
        file = ReproductionFile(self.model, self.sandbox, self.prompts, self.events, self.meter, self.goal,
                                self.attempts, self.example_samples)
        tests, said = file.written(placed, imports)
        if tests:
            self.tests = tests
            return Established("reproduction test", tests, f"fails on the starting code as it should ({said})",
                               file.asserts)
        tried = f"{self.example_attempts} example(s) and " if self.example_attempts else ""
        return Established("none", [], f"no reproduction showed the problem on the starting code ({tried}"
                                       f"{self.attempts} test(s) tried)")

    def _by_example(self, placed: Callable[[str], Placed], imports: str) -> Established | None:
        """The example tries, each a few samples at once: of those whose call does not give what it should on the
        starting code, the one they agree on (omni/check/agreement.py: written by two samples at least, counting
        earlier tries') joins the goal's examples; None when no try has one."""
        feedback, shown = "", []  # the examples that show the problem, of every try: each try's samples vote
        for attempt in range(1, self.example_attempts + 1):
            prompt = self.prompts.render("reproduce_example", goal=self.goal, feedback=feedback, imports=imports)
            replies = self._example_replies(placed(prompt))
            feedback = ""
            for sample, reply in enumerate(replies, 1):
                self.meter.count(reply.usage, "reproduction")
                code, evaluation, said = self._example_tried(reply)
                self.events.emit("reproduction_try", attempt=attempt, sample=sample if len(replies) > 1 else 0,
                                 form="example", code=code, fails_as_it_should=evaluation is not None, outcome=said)
                if evaluation is not None:
                    shown.append(evaluation)
                feedback = feedback or ("" if evaluation else said)  # the first sample's mistake, for the next try
            found = agreed(shown, self.goal, at_least=2 if len(replies) > 1 else 1)
            if found:
                chosen, agree = found
                self.example = chosen
                self.examples.adopt(chosen)
                of = f"; {agree} samples wrote it" if len(replies) > 1 else ""
                return Established("reproduction example", [], f"{chosen.describe()} (try {attempt}{of})",
                                   [str(chosen.example)])
        return None

    def _example_replies(self, request: Placed) -> list:
        """One try's replies: EXAMPLE_SAMPLES at EXAMPLE_TEMPERATURE, or one at the configured temperature when the
        run samples no candidates (--samples 1)."""
        if self.example_samples < 2:
            return [self.model.text(request.messages, schema=ReproductionExample, tools=request.tools,
                                    max_tokens=EXAMPLE_TOKENS)]
        replies, _ = self.model.samples(request.messages, self.example_samples, EXAMPLE_TEMPERATURE,
                                        tools=request.tools, schema=ReproductionExample, max_tokens=EXAMPLE_TOKENS)
        return replies

    def _example_tried(self, reply) -> tuple[str, Evaluation | None, str]:
        """One reply's example evaluated on the starting code: (its text, its evaluation, what it showed) when it
        shows the problem, else (its text, None, what went wrong, for the next try's prompt)."""
        if reply.finish_reason == "length":
            return reply.text, None, (f"Your reply was cut off at the length limit ({EXAMPLE_TOKENS} tokens). "
                                      "Write one short call and one value.")
        try:
            asked = ReproductionExample.model_validate(json_object(reply.text))
        except (ValueError, ValidationError):
            return reply.text[:300], None, ("Your reply held no example. Answer with the JSON object: the "
                                            "expression and the value it should give.")
        example = read_example(asked.expression, asked.expected)
        wrong = _not_a_call(example)
        if wrong:
            return str(example), None, wrong
        done, error = self._evaluated(example)
        if not done:
            return str(example), None, f"It could not be evaluated: {error[:300]}"
        got = done[0]
        example = got.example  # its value quoted, when it was a text written without quotes
        if got.holds and (other := off_input([got], self.reported) or as_reported([got], self.reported)):
            return str(example), None, other
        if got.holds:
            return str(example), None, (f"`{example.expression}` gives {got.got} on the code as it is now, the "
                                        "value you said it should give, so it does not show the problem. Choose "
                                        "an input where the code goes wrong the way the goal says.")
        if got.raised and not self._raise_shows_it(got.raised):
            return str(example), None, (f"`{example.expression}` raised {got.got}. That is a mistake in the call "
                                        "or the value, not the problem the goal describes: call the code the way "
                                        "its tests do, on an input the goal is about.")
        iterator = got.iterator and not self.lazy
        if not got.raised and (form := other_form(example.expected, got.got, iterator)):
            return str(example), None, of_another_form(example.expression, got.got, form, iterator)
        return str(example), got, got.describe()

    def _evaluated(self, example: Example) -> tuple[list[Evaluation], str]:
        """The example evaluated on the starting code. A value of bare words (`hello-world`: a text a small model
        wrote without its quotes) raises NameError (or ModuleNotFoundError, when a name is looked for as a module),
        whatever the code does: it is evaluated again quoted, and that reading is kept when it raises neither."""
        done, error = evaluate(self.sandbox, [example])
        if done and done[0].raised in UNKNOWN_NAME and (text := bare_words(example.expected)):
            again, _ = evaluate(self.sandbox, [Example(example.expression, text)])
            if again and again[0].raised not in UNKNOWN_NAME:
                return again, ""
        return done, error

    def _raise_shows_it(self, raised: str) -> bool:
        """Whether an example that raises shows the goal's problem: the goal names that exception, or speaks of
        an error or a crash and it is not what a wrong call raises."""
        return names_word(self.goal, raised) or (raised not in MISUSE and speaks_of_errors(self.goal))

def _not_a_call(example: Example) -> str:
    """What is wrong with an example as written, or "": both sides Python expressions, the first with a call. Said
    without the example's text, since the next try's prompt says it: shown their last mistake's text, a small
    model's samples all write it again (shown it cut short, they copy the cut value)."""
    for side, text in (("expression", example.expression), ("expected value", example.expected)):
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as error:
            return (f"the {side} you wrote is not one Python expression ({error.msg}). Write the call alone in "
                    "\"expression\", on one line, and the value alone in \"expected\".")
        if side == "expression" and not any(isinstance(node, ast.Call) for node in ast.walk(tree)):
            return "the expression you wrote calls nothing: it must call the project's code."
        if side == "expression" and isinstance(tree.body, ast.Call) and isinstance(tree.body.func, ast.Name) \
                and tree.body.func.id == "print":
            return ("the expression you wrote is a print, which gives None whatever the code does: write the call "
                    "itself, and the value it should give.")
    return ""


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
