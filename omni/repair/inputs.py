"""How a rewrite answers the goal's example instead of computing it, which a check of one example cannot see:
it stops reading an input the code as it is reads (`return data[::2]` in place of a function of its
arguments), or it tests for a value the example is written with (`if step == 2:` for an example that slices
with a step of 2). Such a candidate does not pass (bench/README.md has the runs that found both).
"""

from __future__ import annotations

import ast
import textwrap

from omni.goal.examples import written_with

_BOUND = ("self", "cls")  # a method that stops reading its instance can still be right


def ignored_parameters(before: str, after: str) -> list[str]:
    """The parameters of the definition `after` that the definition `before` reads and `after` does not,
    in the order of its signature. Empty when either is not a function that parses."""
    old, new = _function(before), _function(after)
    if old is None or new is None:
        return []
    used_before, used_after = _read(old), _read(new)
    return [name for name in _parameters(new)
            if name not in _BOUND and name in used_before and name not in used_after]


_GENERIC = (0, 1, -1, "")  # too common in code to mean the example's answer


def special_cases(before: str, after: str, examples: list[str]) -> list[str]:
    """The comparisons that the definition `after` makes and `before` does not, with `==` or `!=`, of
    something with a value the examples (Python expressions) are written with: a constant of theirs, or a
    number inside one of their strings ('page 3 of 9' is written with 3 and 9). Not the items of a list or other
    container: those are the example's data (`len(parts) == 3` is no special case of [4, 8, 3, 9]).
    As source text; empty when either does not parse."""
    old, new = first_statement(before), first_statement(after)
    if old is None or new is None:
        return []
    values = {v for text in examples for v in written_with(text)} - set(_GENERIC)
    had = {ast.dump(c) for c, _ in _equalities(old)}
    return [ast.unparse(c) for c, value in _equalities(new) if value in values and ast.dump(c) not in had]


def _equalities(node: ast.AST):
    """(comparison, its constant) for each `x == c` or `x != c` under node, c a number or a string."""
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Eq, ast.NotEq)):
            constants = [side.value for side in (n.left, n.comparators[0]) if _valued(side)]
            if len(constants) == 1:
                yield n, constants[0]


def _valued(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) \
        and not isinstance(node.value, bool)


def first_statement(source: str) -> ast.stmt | None:
    """The first statement of a definition's source (a method's as read from its class: indented), or None
    when it does not parse or is empty."""
    try:
        body = ast.parse(textwrap.dedent(source)).body
    except SyntaxError:
        return None
    return body[0] if body else None


def _function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    node = first_statement(source)
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    named = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return named + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def _read(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names the body reads (a default value or an annotation does not count)."""
    return {n.id for statement in node.body for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
