"""Probes: calls near the goal's examples, evaluated on the code as it is and with each candidate rewrite, to
tell apart candidates that all pass a narrow check.

A goal's example is one case; a rewrite can make it hold and go wrong everywhere else (one that special-cases
the example's list makes it right and turns every string into a list of characters). Two kinds:

- named: a value the goal quotes and says goes wrong ("'--all' is ignored"), put in place of the example
  argument it resembles most. Its result must change: a rewrite that leaves it as it was has not
  fixed what the goal says.
- around: each literal argument of an example replaced by a few ordinary values of several types (an empty
  list, a short string, a small number). A fix changes the example's result; the fewer of these it changes
  as well, the less it breaks beyond what the goal is about.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field

AROUND = ("[]", "[1]", "[2, 1]", "''", "'abc'", "0", "-1", "2", "None")
MAX_AROUND = 24
MAX_NAMED = 3
MIN_LIKENESS = 0.5  # how much a quoted value must resemble the argument it stands in for


@dataclass(frozen=True)
class Probes:
    named: list[str] = field(default_factory=list)  # their result must change
    around: list[str] = field(default_factory=list)  # the fewer whose result changes, the better

    @property
    def all(self) -> list[str]:
        return self.named + self.around


def goal_probes(wrong: tuple[tuple[str, str], ...], expressions: list[str]) -> Probes:
    """The probes of the goal's examples (their expressions, the ones that fail at the start) and the values it
    says go wrong (omni/goal/reading.py: GoalReading.wrong, pairs of the quoted text and its value)."""
    trees = [t for t in (parse_expression(e) for e in expressions) if t is not None]
    named: list[str] = []
    for quoted, value in wrong:
        if any(quoted in e for e in expressions):
            continue
        if (probe := _named(trees, value)) and probe not in named and probe not in expressions:
            named.append(probe)
    groups = [_around(tree, argument) for tree in trees for argument in _literal_arguments(tree)]
    around: list[str] = []
    for probe in (g[i] for i in range(len(AROUND)) for g in groups if i < len(g)):  # each argument in turn
        if probe not in around and probe not in expressions and probe not in named:
            around.append(probe)
    return Probes(named[:MAX_NAMED], around[:MAX_AROUND])


def parse_expression(expression: str) -> ast.Expression | None:
    """An example's expression as a tree, or None when it is not Python."""
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError:
        return None


def _literal_arguments(tree: ast.Expression) -> list[ast.expr]:
    """The arguments of the example's calls that are plain values (a string, a number, a list of them)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                try:
                    ast.literal_eval(argument)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
                found.append(argument)
    return found


def _replaced(tree: ast.Expression, argument: ast.expr, source: str) -> str:
    """The expression with one argument node replaced by `source` (a value as code)."""
    class Swap(ast.NodeTransformer):
        def visit(self, node):
            return ast.parse(source, mode="eval").body if node is argument else super().visit(node)

    copy = ast.parse(ast.unparse(tree), mode="eval")  # a fresh tree: the swap must not touch the original
    index = _literal_arguments(tree).index(argument)
    argument = _literal_arguments(copy)[index]
    return ast.unparse(Swap().visit(copy))


def _named(trees: list[ast.Expression], value: str) -> str | None:
    """The example with the string argument most like `value` replaced by it."""
    best, likeness = None, MIN_LIKENESS
    for tree in trees:
        for argument in _literal_arguments(tree):
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                ratio = difflib.SequenceMatcher(None, argument.value, value).ratio()
                if ratio >= likeness and argument.value != value:
                    best, likeness = (tree, argument), ratio
    return _replaced(best[0], best[1], repr(value)) if best else None


def _around(tree: ast.Expression, argument: ast.expr) -> list[str]:
    same = ast.unparse(argument)
    return [_replaced(tree, argument, value) for value in AROUND if value != same]


def _same(before: dict, after: dict) -> bool:
    """Whether a probe gives the same with a rewrite as before it: the same value, object addresses aside,
    or the same exception type (`list(0)` and `0[::-1]` both refuse an int, in other words)."""
    if before["raised"] or after["raised"]:
        return before["raised"] == after["raised"]
    return _value(before) == _value(after)


def _value(given: dict) -> str:
    """What a probe gave, as the sandbox made it comparable (object addresses left out: tools/example_eval.py)."""
    return given.get("value", given["got"])


def left_as_it_was(probes: Probes, baseline: list[dict], given: list[dict]) -> str:
    """The named probe a passing rewrite leaves giving what it gave before, said for the model; "" when it
    changes them all. A probe that raised before is not asked to change: it may stand in the wrong place."""
    for probe, before, after in zip(probes.named, baseline, given, strict=False):
        if not before["raised"] and _same(before, after):
            return f"{probe} still gives {before['got']}, as before the rewrite (the goal says that goes wrong)"
    return ""


def behaviour(probes: Probes, baseline: list[dict], given: list[dict]) -> tuple[tuple[str, ...], int]:
    """What a rewrite gives on the around probes (rewrites giving the same behave alike), and on how many
    of them that differs from before the rewrite. Empty, 0 when the probes did not run."""
    if len(given) != len(probes.all) or len(baseline) != len(probes.all):
        return (), 0
    start = len(probes.named)
    gives = tuple(g["raised"] or _value(g) for g in given[start:])
    return gives, sum(not _same(b, g) for b, g in zip(baseline[start:], given[start:], strict=True))
