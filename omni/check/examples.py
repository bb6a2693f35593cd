"""The goal's own examples, as checks. A bug report often states the expected result as code:
`normalize_file('./src/a.py') == 'src/a.py'`, or `search('reverse(@)', [1, 2, 3]) gives [1, 2, 3] instead of
[3, 2, 1]`. Those are taken from the goal and evaluated in the sandbox at the start: the ones that already hold
describe what works and are dropped, and so are the ones the sandbox cannot import. The rest are a
reproduction for the model to see, and the finish gate checks that they hold at the end."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from omni.protocols import Sandbox

MAX_EXAMPLES = 4
WINDOW = 200  # characters an expression may span
EXAMPLE_TIMEOUT = 30
_INSTEAD = re.compile(r"\s+instead of\s+", re.I)
_VERB = re.compile(r"\s+(?:returns?|gives?|yields?|produces?|evaluates to|is)\s+", re.I)
_EQUALS = re.compile(r"(?<![=!<>])==(?!=)")
_SHOULD = re.compile(r"\s+(?:should|must)\s+(?:be\s+equal\s+to|equal|return|give|be)\s+", re.I)
_CONDITIONS = {"when", "whenever", "if", "unless", "for"}
_PRONOUN = re.compile(r"(?:^|\W)(?:it|this|that)\s*$", re.I)
# Endings of a stated value: the character after it.
_ENDS = set(" \t\n,.;:)`!?'\"")


@dataclass(frozen=True)
class Example:
    expression: str
    expected: str

    def __str__(self) -> str:
        return f"{self.expression} == {self.expected}"


@dataclass(frozen=True)
class Evaluation:
    example: Example
    holds: bool
    got: str
    raised: str = ""

    def describe(self) -> str:
        if self.holds:
            return f"`{self.example}` holds"
        outcome = f"raises {self.got}" if self.raised else f"gives {self.got}"
        return f"`{self.example}` does not hold: {self.example.expression} {outcome}"


def _tree(text: str) -> ast.expr | None:
    """The expression `text` is, if it is one as code is written: on one line, with no `x. y` attribute."""
    if "\n" in text or text.endswith((".", ",")):
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    data = text.encode()  # offsets are in bytes
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and \
                data[node.value.end_col_offset:node.end_col_offset - len(node.attr.encode())] != b".":
            return None  # "[3, 2, 1]. Fix" is a sentence going on, not an attribute
    if isinstance(tree, (ast.Compare, ast.BoolOp, ast.IfExp, ast.Tuple)):
        return None  # one side of one comparison, not a chain of them ("3 and f(y) == 4")
    return tree


def _expression_before(goal: str, end: int) -> str | None:
    """The longest expression with a call in it that ends at `end`: English before it does not parse."""
    text = goal[max(0, end - WINDOW):end].rstrip()
    for start in range(len(text)):
        if (start and not (text[start - 1].isspace() or text[start - 1] in "(`\"'")) \
                or not (text[start].isalpha() or text[start] == "_"):
            continue
        tree = _tree(text[start:])
        if tree is not None and any(isinstance(node, ast.Call) for node in ast.walk(tree)):
            return text[start:]
    return None


def _value_after(goal: str, start: int) -> str | None:
    """The longest value that starts at `start`, not a comparison or a chain of them (`3 and f(y) == 4`)."""
    text = goal[start:start + WINDOW].lstrip()
    best = None
    for end in range(1, len(text) + 1):
        if end < len(text) and text[end] not in _ENDS:
            continue
        piece = text[:end].strip()
        if piece and _tree(piece) is not None:
            best = piece
    return best


def bare_calls(expression: str) -> set[str]:
    """The names an example's expression calls directly (`count_reps(...)`, not `pkg.parse(...)`)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _subject(goal: str, end: int) -> str | None:
    """What "should equal" is said of: the expression just before it, or, after "it", "this" or "that",
    the last expression with a call in the WINDOW before the pronoun."""
    if direct := _expression_before(goal, end):
        return direct
    start = max(0, end - 20)
    pronoun = _PRONOUN.search(goal[start:end])
    if not pronoun:
        return None
    before = start + pronoun.start()
    for close in range(before, max(0, before - WINDOW), -1):
        if goal[close - 1:close] == ")" and (found := _expression_before(goal, close)):
            return found
    return None


def _stated(expression: str, expected: str, after: str) -> bool:
    """Whether "expression should equal expected" states one case: a value, not a word ("should be
    quiet"); a call with arguments, not a function named in prose ("wcswidth() should return -1 when the
    string has a control character"); and not a condition after it."""
    calls = [n for n in ast.walk(_tree(expression) or ast.Constant(0)) if isinstance(n, ast.Call)]
    rest = after.lstrip()[len(expected):].split()
    return (not isinstance(_tree(expected), ast.Name) and any(c.args or c.keywords for c in calls)
            and not (rest and rest[0].lower() in _CONDITIONS))


def goal_examples(goal: str) -> list[Example]:
    """`expression == value`, `expression gives X instead of value`, and `expression should equal value`
    (or "X(...) is wrong: it should equal value"), in the order the goal states them."""
    found: list[tuple[int, Example]] = []
    for match in _EQUALS.finditer(goal):
        expression, expected = _expression_before(goal, match.start()), _value_after(goal, match.end())
        if expression and expected:
            found.append((match.start(), Example(expression, expected)))
    for match in _INSTEAD.finditer(goal):
        verbs = list(_VERB.finditer(goal, max(0, match.start() - 100), match.start()))
        if not verbs:
            continue
        expression, expected = _expression_before(goal, verbs[-1].start()), _value_after(goal, match.end())
        if expression and expected:
            found.append((match.start(), Example(expression, expected)))
    for match in _SHOULD.finditer(goal):
        expression, expected = _subject(goal, match.start()), _value_after(goal, match.end())
        if expression and expected and _stated(expression, expected, goal[match.end():]):
            found.append((match.start(), Example(expression, expected)))
    unique = list(dict.fromkeys(example for _, example in sorted(found, key=lambda item: item[0])))
    return unique[:MAX_EXAMPLES]


def evaluate(sandbox: Sandbox, examples: list[Example]) -> tuple[list[Evaluation], str]:
    """The evaluations, or none and why they could not run at all (no Python in the sandbox, a timeout)."""
    if not examples:
        return [], ""
    result = sandbox.run_tool("check_examples", {"examples": [vars(e) for e in examples],
                                                 "timeout": EXAMPLE_TIMEOUT}, EXAMPLE_TIMEOUT + 15)
    if not result.success:
        return [], result.error
    return [Evaluation(example, bool(r["holds"]), str(r["got"]), str(r.get("raised") or ""))
            for example, r in zip(examples, result.details.get("results", []), strict=False)], ""


class GoalExamples:
    """The examples that fail at the start, for the briefing and the finish gate."""

    def __init__(self, goal: str):
        self.examples = goal_examples(goal)
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
