"""Whether a reproduction is on the goal's input: a goal often says what a call gives now (`s.upto(3, inclusive=False)
returns [1, 2, 3]`, omni/goal/examples.py: reported), on a state it describes in words ("with items 1 to 5"). A
reproduction that makes the same call on a state of its own may see the call go right, and then asserts that: an
assertion of the goal's call that holds on the starting code and gives another value than the goal reports is on
another input. In a test, such an assertion passes, and the test fails on another one, about a case the goal never
spoke of (a dev task's record: an item its input never had, so no fix could pass it).

The goal's call and the reproduction's are the same when they are written alike but for what a method is called
on and what module a function is reached through (`s.upto(...)` and `Shelf(...).upto(...)`, `parse(...)` and
`parse.parse(...)`): the receiver is the state, which is what differs. Values are compared as Python literals
(a list and a tuple of the same items are alike); a value that is not one (`<map object ...>`) says nothing.

The other way round, a reproduction that shows nothing (an example that holds, a test that passes) on the goal's
call with the very value the goal reports is on the goal's input and asserts the value the goal complains of: it
is told so, not to choose another input (as_reported). Only then: a goal may also report a call that works, and a
test that fails elsewhere and asserts that one is right to."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from omni.check.examples import Evaluation
from omni.goal.examples import Example


def off_input(done: list[Evaluation], reported: list[Example]) -> str:
    """What to tell the model of the first evaluation that holds on the starting code on a call the goal reports
    with another value, or "" when none does."""
    for got, value in _of_the_goals_calls(done, reported):
        if _alike(got.got, value) is False:
            return (f"`{got.example.expression}` gives {got.got} on the code as it is now, but the goal says this "
                    f"call gives {value}: the state or input you built is not the one the goal describes, so it does "
                    "not show the problem. Read again what the goal sets up (the values, the items, the order) and "
                    f"build that, so the call gives {value} now; then assert what it should give.")
    return ""


def as_reported(done: list[Evaluation], reported: list[Example]) -> str:
    """For a reproduction that shows nothing (it holds, or its test passes): what to tell the model of the first
    evaluation that holds on a call the goal reports, giving the value the goal reports. Its input is the goal's,
    and the value it asserts is the one the goal complains of; "" when none does."""
    for got, value in _of_the_goals_calls(done, reported):
        if _alike(got.got, value):
            return (f"`{got.example.expression}` gives {got.got} on the code as it is now, and that is what the "
                    "goal reports this call gives: the problem itself. Your input is the goal's; what you asserted "
                    "is the wrong value. Keep this call on this input, and assert the value it should give once the "
                    "problem is fixed.")
    return ""


def _of_the_goals_calls(done: list[Evaluation], reported: list[Example]) -> Iterator[tuple[Evaluation, str]]:
    """Each evaluation that holds on the starting code, without raising, on a call the goal reports a value of,
    with that value."""
    said = {_shape(e.expression): e.expected for e in reported}
    for got in done:
        value = said.get(_shape(got.example.expression))
        if value is not None and got.holds and not got.raised:
            yield got, value


def _shape(expression: str) -> str:
    """The expression as written, with what each call is made on left out: `_.upto(3)` for both `s.upto(3)` and
    `Shelf(x).upto(3)`; "" for one that is not Python."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return ""

    class Receivers(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.Call:
            self.generic_visit(node)
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else None
            if name is not None:
                node.func = ast.Attribute(ast.Name("_", ast.Load()), name, ast.Load())
            return node

    return ast.dump(Receivers().visit(tree))


def _alike(got: str, value: str) -> bool | None:
    """Whether two values written as Python literals are equal (a list and a tuple of the same items are); None when
    either is not a literal."""
    try:
        left, right = ast.literal_eval(got), ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return list(left) == list(right)
    return left == right
