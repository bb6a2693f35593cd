"""How a reproduction example a small model wrote is read: what it means, where the JSON's two fields hold it in a
form Python would refuse or misread. Each reading is mechanical and keeps the model's own call and value:
- `print(f(x))` is read as `f(x)` (a print gives None whatever the code does);
- `assert f(x) == y` in the expression field is read as the call `f(x)` and the value `y` (the statement says
  what should hold; the expected field beside it is then a copy, often without its quotes, or the input);
- a value of bare words (`hello-world`) is a text without its quotes; the reproduction evaluates it again quoted
  when it raises NameError as written (bare_words says how it reads quoted)."""

from __future__ import annotations

import ast

from omni.goal.examples import Example


def read_example(expression: str, expected: str) -> Example:
    """The example the two fields mean, stripped of the forms above (an unknown form as written)."""
    expression, expected = expression.strip(), expected.strip()
    asserted = unasserted(expression)
    if asserted is not None:
        expression, expected = asserted
    return Example(unprinted(expression), expected)


def unasserted(expression: str) -> tuple[str, str] | None:
    """(call, value) when expression is one `assert <call> == <value>` statement (a message after it is left out),
    else None. Only `==` between two operands: `assert f(x)` or `assert a < b` say no value."""
    try:
        tree = ast.parse(expression)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    test = tree.body[0].test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    call, value = ast.get_source_segment(expression, test.left), ast.get_source_segment(expression,
                                                                                         test.comparators[0])
    return (call, value) if call and value else None


def unprinted(expression: str) -> str:
    """`print(x)` read as `x`: a small model writes the call it means inside a print, which gives None whatever
    the code does. Only a print of one argument and nothing else is unwrapped."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return expression
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "print" \
            and len(tree.args) == 1 and not tree.keywords and not isinstance(tree.args[0], ast.Starred):
        return ast.get_source_segment(expression, tree.args[0]) or expression
    return expression


def bare_words(expected: str) -> str:
    """The value as a quoted text when it is only names joined by dashes (`hello-world`, `Done`), else ""."""
    try:
        tree = ast.parse(expected, mode="eval").body
    except SyntaxError:
        return ""
    parts, leaves = [tree], []
    while parts:
        node = parts.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            parts += [node.left, node.right]
        else:
            leaves.append(node)
    return repr(expected) if all(isinstance(leaf, ast.Name) for leaf in leaves) else ""
