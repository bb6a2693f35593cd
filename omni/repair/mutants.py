"""Mechanical candidates: the definition with one small change a bug is often made of, written into its own text
(formatting and comments kept): a comparison's boundary (`<` and `<=`, `==` and `!=`, `in` and `not in`), `and` and
`or`, a `not` dropped, `+` and `-`, an integer one more or one less, a name one more or one less where it counts or
indexes (an index, a slice's bound, `range`'s end, the left of `%` and `//`), the two arguments of a call swapped,
`True` and `False`, one operand of `and`/`or` left out (`x = x or y` for `x = y`), a slice taken off (`rows[:1]` as
`rows`), a parameter the function never reads passed on by name to a call it makes (`f(s)` as `f(s, limit=limit)`: an
argument dropped), a `re` call's pattern with one change (omni/repair/patterns.py: `[a-z]` as `[a-z\\d]`); then a
comparison turned the other way or negated (`<` as `>` or `>=`), a call of one of a pair of twins as the other (`min`
and `max`, `startswith` and `endswith`, `lstrip` and `rstrip`, `int` and `round`, ...), `break` and `continue`, and a
condition negated (`if x:` as `if not x:`), and last a name read as a sibling name the definition also uses (one word
more, less or other: `LowerBound` and `UpperBound`, `start_index` and `end_index`), the operators mutation testing
tools apply beside the first; after all of those, the statement kinds (omni/repair/statements.py: one left out, two
swapped, one copied into another block, one moved out of its block). They cost no model call; verified repair tries
them beside the sampled rewrites, judged the same way, when a round of samples found none that passes
(omni/repair/verified.py). A 1.5B model asked for a 40-line rewrite mostly writes the code back unchanged; a
one-token fix is among these. Only so many are tried: the changes on the lines the failing tests point to (the
spectrum's best lines, when known), else on those the goal's words name (omni/repair/worded.py), come first."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from functools import partial

from omni.repair.catalogue import (attribute_siblings, bounds, branches, dropped_arguments, exchanged,
                                   memberships, negated_numbers, operators, ordered, receivers_of, signs, unwrapped)
from omni.repair.patterns import patterns
from omni.repair.statements import Edit, statement_kinds
from omni.repair.textedit import apply, at, between, exchange, source_of

MAX_MUTANTS = 64  # at most, when trying one is quick (verified repair tries as many as fit in a minute)

_COMPARE = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
            ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
            ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is")}
_BOOL = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
_BINARY = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.FloorDiv: ("//", "/"), ast.Div: ("/", "//")}
_DIRECTIONS = {ast.Lt: ("<", (">", ">=")), ast.LtE: ("<=", (">=", ">")), ast.Gt: (">", ("<", "<=")),
               ast.GtE: (">=", ("<=", "<"))}  # the other way, then negated (the boundary is _COMPARE's)
_PAIRS = [("min", "max"), ("any", "all"), ("startswith", "endswith"), ("lstrip", "rstrip"), ("upper", "lower"),
          ("isupper", "islower"), ("find", "rfind"), ("index", "rindex"), ("split", "rsplit"),
          ("partition", "rpartition"), ("ljust", "rjust"), ("floor", "ceil"), ("removeprefix", "removesuffix"),
          ("int", "round")]  # truncated and rounded
_TWINS = {a: b for pair in _PAIRS for a, b in (pair, pair[::-1])}



def mutants(source: str, limit: int = MAX_MUTANTS, near: frozenset[int] = frozenset(),
            then: tuple[frozenset[int], ...] = ()) -> list[str]:
    """Up to `limit` one-change variants of the definition `source`, in the order of the kinds above, those that
    touch a line in `near` (lines of source, from 1) first, then those on the lines of each of `then` in turn (the
    other lines the failing tests ran, by the spectrum's score: a change where no failing test goes cannot make one
    pass); each parsing; none when source does not parse."""
    indent = len(source) - len(source.lstrip(" "))
    code = textwrap.dedent(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    lines = code.splitlines(keepends=True)
    found: list[str] = []
    for edit in _edits(tree, lines, (near, *then)):
        text = apply(lines, edit)
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        variant = textwrap.indent(text, " " * indent) if indent else text
        if variant not in found and variant != source:
            found.append(variant)
        if len(found) == limit:
            break
    return found


def _edits(tree: ast.AST, lines: list[str], tiers: tuple[frozenset[int], ...]) -> Iterator[Edit]:
    """Each kind's edits in the order of the code, the kinds taken in turn (a long function's constants do not
    crowd out its one swapped call): first those that touch a line of the first tier, then of the next, and so on,
    then the others; in each, the catalogue's kinds (omni/repair/catalogue.py) and the statement kinds, in turn with
    each other, after the first kinds."""
    typed = {id(n) for a in _annotations(tree) for n in ast.walk(a)}  # types, not values: `Iterable[T]` is no index
    nodes = sorted((n for n in ast.walk(tree) if hasattr(n, "lineno") and id(n) not in typed),
                   key=lambda n: (n.lineno, n.col_offset))
    docstrings = {id(b.body[0].value) for b in ast.walk(tree)
                  if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and b.body
                  and isinstance(b.body[0], ast.Expr) and isinstance(b.body[0].value, ast.Constant)}
    siblings = partial(_siblings, names=_names(nodes))
    one_change = (_comparisons, _logic, _arithmetic, _constants, _off_by_one, _swaps, _operands, _unsliced, _forwarded,
                  patterns, _directions, _twins, _negations, siblings)
    catalogue = (memberships, branches, partial(signs, negated=negated_numbers(nodes)), bounds, operators, unwrapped,
                 partial(attribute_siblings, receivers=receivers_of(nodes)), ordered, dropped_arguments, exchanged)
    groups = [[[edit for node in nodes for edit in kind(node, lines, docstrings)] for kind in group]
              for group in (one_change, catalogue + statement_kinds(tree, docstrings))]
    for tier in range(len(tiers) + 1):
        for kinds in groups:
            yield from _in_turn([[edit for edit in kind if _tier(edit, tiers) == tier] for kind in kinds])


def _tier(edit: Edit, tiers: tuple[frozenset[int], ...]) -> int:
    """The first of the tiers with a line the edit touches; len(tiers) when none has."""
    touched = range(edit[0], edit[2] + 1)
    return next((n for n, lines in enumerate(tiers) if any(line in lines for line in touched)), len(tiers))


def _in_turn(kinds: list[list[Edit]]) -> Iterator[Edit]:
    """The kinds' edits taken in turn: each kind's first, then each kind's second, and so on."""
    for turn in range(max(map(len, kinds), default=0)):
        for kind in kinds:
            if turn < len(kind):
                yield kind[turn]


def _annotations(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            yield node.returns
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            yield node.annotation


def _comparisons(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    if isinstance(node, ast.Compare):
        for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators, strict=False):
            yield from between(lines, left, right, *_COMPARE.get(type(op), ("", "")))


def _logic(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    if isinstance(node, ast.BoolOp):
        for left, right in zip(node.values, node.values[1:], strict=False):
            yield from between(lines, left, right, *_BOOL[type(node.op)])
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield (node.lineno, node.col_offset, node.operand.lineno, node.operand.col_offset, "")


def _arithmetic(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        yield from between(lines, node.left, node.right, *_BINARY[type(node.op)])
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BINARY:
        old, new = _BINARY[type(node.op)]
        yield from between(lines, node.target, node.value, old + "=", new + "=")


def _constants(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    if isinstance(node, ast.Constant) and id(node) not in docstrings:
        if isinstance(node.value, bool):
            yield at(node, str(not node.value))
        elif isinstance(node.value, int):
            yield at(node, str(node.value + 1))
            if node.value > 0:
                yield at(node, str(node.value - 1))


def _off_by_one(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """A name (or attribute) one less and one more where it counts or indexes: `xs[i]`, `xs[:n]`, `range(n)`, and
    the left of `%` and `//` (in brackets there: `(n - 1) % size`)."""
    counted: list[tuple[ast.AST, bool]] = []  # (operand, whether it needs brackets)
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        counted.append((node.slice, False))
    elif isinstance(node, ast.Slice):
        counted += [(bound, False) for bound in (node.lower, node.upper) if bound is not None]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        counted.append((node.args[-1] if len(node.args) < 3 else node.args[1], False))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.FloorDiv)):
        counted.append((node.left, True))
    for operand, bracket in counted:
        if isinstance(operand, (ast.Name, ast.Attribute)) and operand.lineno == operand.end_lineno:
            text = lines[operand.lineno - 1].encode()[operand.col_offset:operand.end_col_offset].decode()
            for sign in ("-", "+"):
                yield at(operand, f"({text} {sign} 1)" if bracket else f"{text} {sign} 1")


def _swaps(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """A call's two positional arguments swapped, when both are on one line and differ."""
    if not isinstance(node, ast.Call) or len(node.args) != 2 or node.keywords \
            or any(isinstance(a, ast.Starred) for a in node.args):
        return
    first, second = node.args
    if first.lineno == first.end_lineno == second.lineno == second.end_lineno \
            and source_of(first, lines) != source_of(second, lines):
        yield exchange(lines, first, second)


def _operands(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Each operand of `and`/`or` left out with its operator, where only the operator stands between operands."""
    if not isinstance(node, ast.BoolOp):
        return
    word = _BOOL[type(node.op)][0]
    values = node.values
    for n, (left, right) in enumerate(zip(values, values[1:], strict=False)):
        if left.end_lineno != right.lineno or lines[right.lineno - 1].encode()[
                left.end_col_offset:right.col_offset].decode().split() != [word]:
            continue
        if n == 0:  # the first operand and the operator after it
            yield (left.lineno, left.col_offset, right.lineno, right.col_offset, "")
        yield (left.end_lineno, left.end_col_offset, right.end_lineno, right.end_col_offset, "")


def _unsliced(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """A slice that is read taken off (`rows[:1]` as `rows`, `text[1:]` as `text`): one element, or one too few,
    where all of them were meant."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and isinstance(node.ctx, ast.Load):
        yield (node.value.end_lineno, node.value.end_col_offset, node.end_lineno, node.end_col_offset, "")


def _forwarded(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Each parameter a function takes and its body never uses, passed on by name to each call of its body that
    does not pass it yet (`unsign(s)` as `unsign(s, max_age=max_age)`): the parameter was meant for that call and
    dropped on the way, so it does nothing. `self`, `cls` and a call with `**kwargs` are left alone."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    body = [inner for statement in node.body for inner in ast.walk(statement)]
    used = {n.id for n in body if isinstance(n, ast.Name)}
    taken = (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
    unused = [a.arg for a in taken if a.arg not in used and a.arg not in ("self", "cls")]
    calls = [n for n in body if isinstance(n, ast.Call) and all(k.arg is not None for k in n.keywords)]
    for name in unused:
        for call in calls:
            if any(k.arg == name for k in call.keywords):
                continue
            given = [*call.args, *(k.value for k in call.keywords)]
            if given:  # after the last argument (before a trailing comma)
                last = max(given, key=lambda n: (n.end_lineno, n.end_col_offset))
                yield (last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset,
                       f", {name}={name}")
            elif lines[call.end_lineno - 1].encode()[call.end_col_offset - 1:call.end_col_offset] == b")":
                at = call.end_col_offset - 1
                yield (call.end_lineno, at, call.end_lineno, at, f"{name}={name}")


def _directions(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    if isinstance(node, ast.Compare):
        for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators, strict=False):
            old, news = _DIRECTIONS.get(type(op), ("", ()))
            for new in news:
                yield from between(lines, left, right, old, new)


def _twins(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The called name of one of a pair as the other: `min(xs)` as `max(xs)`, `s.lstrip()` as `s.rstrip()`."""
    called = node.func if isinstance(node, ast.Call) else None
    if isinstance(called, ast.Name) and called.id in _TWINS:
        yield at(called, _TWINS[called.id])
    elif isinstance(called, ast.Attribute) and called.attr in _TWINS:
        end = called.end_col_offset
        yield (called.end_lineno, end - len(called.attr), called.end_lineno, end, _TWINS[called.attr])
    elif isinstance(node, ast.Break):
        yield at(node, "continue")
    elif isinstance(node, ast.Continue):
        yield at(node, "break")


def _negations(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The condition of an `if`, `while` or `x if c else y` negated, when it is on one line and is not already a
    `not` (dropping that is _logic's) or a comparison (turning its operator is _COMPARE's and _DIRECTIONS')."""
    test = node.test if isinstance(node, (ast.If, ast.While, ast.IfExp)) else None
    if test is None or test.lineno != test.end_lineno or isinstance(test, (ast.Compare, ast.Constant)) \
            or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):  # `while True:` stays
        return
    text = lines[test.lineno - 1].encode()[test.col_offset:test.end_col_offset].decode()
    simple = isinstance(test, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    yield at(test, f"not {text}" if simple else f"not ({text})")


def _siblings(node: ast.AST, lines: list[str], docstrings: set[int], names: dict[str, list[str]]) -> Iterator[Edit]:
    """A name read as each sibling of it among the definition's names (names: each with its words): one word
    more, one less or one other, at least one word shared (`LowerBound` as `UpperBound`, `max_width` as
    `min_width`, `pre` as `_pre`); a mix-up of two names a bug is often made of that no operator above writes."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        words = names[node.id]
        for other, its in names.items():
            if other != node.id and _one_word_apart(words, its):
                yield at(node, other)


def _names(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """The names the definition binds, reads or takes as parameters (not those of its type annotations), in the
    order of the code, with their words."""
    found = [n.id if isinstance(n, ast.Name) else n.arg for n in nodes if isinstance(n, (ast.Name, ast.arg))]
    return {name: _words(name) for name in found}


def _words(name: str) -> list[str]:
    """A name's words, in lower case: split at underscores and where a capital follows a small letter or a digit
    (`UpperBound`: upper, bound; `max_width`: max, width)."""
    words, word = [], ""
    for before, letter in zip(" " + name, name, strict=False):
        if letter == "_" or (letter.isupper() and (before.islower() or before.isdigit())):
            words, word = words + [word], ""
        word += letter if letter != "_" else ""
    return [w.lower() for w in [*words, word] if w]


def _one_word_apart(first: list[str], second: list[str]) -> bool:
    """Whether two names' words are the same but for one word added, left out or changed (or none: `pre` and
    `_pre`), and share one at least."""
    if not set(first) & set(second) or abs(len(first) - len(second)) > 1:
        return False
    if len(first) == len(second):
        return sum(a != b for a, b in zip(first, second, strict=True)) <= 1
    short, long = sorted((first, second), key=len)
    return any(long[:n] + long[n + 1:] == short for n in range(len(long)))
