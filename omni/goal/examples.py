"""The examples a goal states as code: a report of a bug often says what a call gives and what it should give.
Three ways of saying it are read: `expression == value`; `expression gives A instead of B` (any verb: returns,
yields, is...; B is the expected value); `expression should equal value` (or "X(...) is wrong: it should be Y",
where "it" points back at the last call). An expression must contain a call, and the English around it does not
parse, so it is left out. (omni/check/examples.py runs them in the sandbox.)"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


MAX_EXAMPLES = 4
WINDOW = 200  # characters an expression may span
_INSTEAD = re.compile(r"\s+instead of\s+", re.I)
_VERB = re.compile(r"\s+(?:returns?|gives?|yields?|produces?|evaluates to|is)\s+", re.I)
_EQUALS = re.compile(r"(?<![=!<>])==(?!=)")
_SHOULD = re.compile(r"\s+(?:should|must)\s+(?:be\s+equal\s+to|equal|return|give|be)\s+", re.I)
_CONDITIONS = {"when", "whenever", "if", "unless", "for"}  # "f(x) should be 3 when ...": a rule, not one case
_PRONOUN = re.compile(r"(?:^|\W)(?:it|this|that)\s*$", re.I)  # "... is wrong: it should be ..." refers back
# Endings of a stated value: the character after it.
_ENDS = set(" \t\n,.;:)`!?'\"")


@dataclass(frozen=True)
class Example:
    expression: str
    expected: str

    def __str__(self) -> str:
        return f"{self.expression} == {self.expected}"


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
            return None  # "[1, 2]. Then" is a sentence going on, not an attribute
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
    quiet"); a call with arguments, not a function named in prose ("width() should return -1 for a control
    character"); and not a condition after it."""
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


def written_with(expression: str) -> set:
    """The values an example's expression is written with: its constants (numbers and strings, not the items of a
    list or other container, which are its data) and the numbers inside its strings ('[::2]' is written with 2)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return set()
    data = {id(e) for n in ast.walk(tree) if isinstance(n, (ast.List, ast.Tuple, ast.Set, ast.Dict))
            for e in ast.walk(n) if e is not n}
    values = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, str))
              and not isinstance(n.value, bool) and id(n) not in data}
    return values | {int(x) for v in values if isinstance(v, str) for x in re.findall(r"-?\d+", v)}


def spelled(expression: str) -> list[str]:
    """Every identifier-like word an example is written with, inside its strings too (`search('reverse(@)', x)`
    spells search, reverse and x): the words the goal spells out in code."""
    return re.findall(r"[A-Za-z_]\w*", expression)
