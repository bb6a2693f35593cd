"""Inputs a rewrite stops reading. A candidate that no longer uses a parameter the code as it is uses
makes the goal's example hold by answering it rather than computing it. Run S, jmespath-slice-step: two
rewrites of `search(expression, data, options=None)` were `return data[::2]` and a loop taking every
second item; both passed the one-example check and the module's tests, and one was applied. In the
candidates of all runs before it (81 that passed), no other one dropped a parameter.
"""

from __future__ import annotations

import ast
import textwrap

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
