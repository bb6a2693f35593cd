"""More one-change kinds, from the operator catalogues of mutation testing (MutPy's ROR, AOR, AOD, SIR and RIL;
TBar's fix patterns for a variable, a method call and its arguments), which omni/repair/mutants.py's first kinds
lacked: equality as membership and back (`v == seen` as `v in seen`), the two values of `a if c else b` swapped, a
number's sign (`1` as `-1`, `-n` as `n`), one bound of a slice left out (`xs[a:b]` as `xs[:b]`), the other
arithmetic and bitwise operators (`*` and `/`, `&` and `|`, `<<` and `>>`), a wrapping builtin call taken off
(`int(x)` as `x`), an iterable put in order or reversed (`for k in d` as `for k in sorted(d)`), an attribute read as
another the definition reads on the same object (`self.low` as `self.high`), one argument of a call left out, and
two like parts of one expression exchanged (`a[i] * (x - lo) + a[j] * (hi - x)` with the two differences swapped).

Each is a change a bug is made of that the first kinds cannot write back; each kind yields a few edits a site, so
that on the lines the failing tests point to they cost a handful of tries. A kind here takes the node, the
definition's lines and its docstrings' ids, as mutants.py's do; `attribute_siblings` also takes what each object's
attributes are (`receivers`), and `signs` the numbers written with a minus (`negated`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from omni.repair.statements import Edit
from omni.repair.textedit import at, between, exchange, source_of

_MEMBERSHIP = {ast.Eq: ("==", "in"), ast.NotEq: ("!=", "not in"), ast.In: ("in", "=="), ast.NotIn: ("not in", "!="),
               ast.Is: ("is", "=="), ast.IsNot: ("is not", "!=")}
_OPERATORS = {ast.Mult: ("*", "/"), ast.Div: ("/", "*"), ast.Pow: ("**", "*"), ast.Mod: ("%", "//"),
              ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"), ast.BitXor: ("^", "|"), ast.LShift: ("<<", ">>"),
              ast.RShift: (">>", "<<")}
_WRAPPERS = {"abs", "int", "float", "round", "str", "bool", "list", "tuple", "set", "frozenset", "sorted",
             "reversed"}  # builtins that make a new value of their one argument: the value itself may be meant
_ORDERED = ("sorted", "reversed")
_TAKES_ITERABLE = {"list", "tuple", "sum", "set", "enumerate"}
_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


def memberships(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """`==` as `in` and back, `!=` as `not in` and back, `is` as `==`: one value where a collection of them was
    meant, or the other way (ROR's replacements across the two families)."""
    if isinstance(node, ast.Compare):
        for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators, strict=False):
            yield from between(lines, left, right, *_MEMBERSHIP.get(type(op), ("", "")))


def branches(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The two values of `a if c else b` swapped, when the whole expression is on one line: each case given the
    other's answer."""
    if not isinstance(node, ast.IfExp) or node.lineno != node.end_lineno:
        return
    body, other = source_of(node.body, lines), source_of(node.orelse, lines)
    if body and other and body != other:
        yield exchange(lines, node.body, node.orelse)


def signs(node: ast.AST, lines: list[str], docstrings: set[int], negated: frozenset[int]) -> Iterator[Edit]:
    """A number written with a minus, without it (`-1` as `1`), and a number other than zero, with one (`1` as `-1`,
    `xs[0:2]` as `xs[0:-2]`); negated: what negated_numbers gives (those under a minus get the first only)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _number(node.operand) \
            and id(node.operand) in negated:
        yield (node.lineno, node.col_offset, node.operand.lineno, node.operand.col_offset, "")
    elif _number(node) and node.value and id(node) not in negated and id(node) not in docstrings:
        yield at(node, "-" + (source_of(node, lines) or repr(node.value)))


def bounds(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """One bound of a slice with two left out (`xs[a:b]` as `xs[:b]` and as `xs[a:]`): a start or an end that
    should not be there (taking the whole slice off is mutants.py's)."""
    if isinstance(node, ast.Slice) and node.lower is not None and node.upper is not None:
        for bound in (node.lower, node.upper):
            yield at(bound, "")


def operators(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The arithmetic and bitwise operators mutants.py's `+`/`-` and `/`/`//` leave: `*` and `/`, `**` as `*`, `%` as
    `//`, `&` and `|`, `^` as `|`, `<<` and `>>`; also in an augmented assignment (`*=` as `/=`)."""
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        yield from between(lines, node.left, node.right, *_OPERATORS[type(node.op)])
    elif isinstance(node, ast.AugAssign) and type(node.op) in _OPERATORS:
        old, new = _OPERATORS[type(node.op)]
        yield from between(lines, node.target, node.value, old + "=", new + "=")


def unwrapped(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """A call of a builtin that makes a new value of its one argument (`int`, `abs`, `str`, `sorted`, ...) taken
    off, the argument left: `int(a / b)` as `a / b`, a value truncated, made positive or copied that was meant as
    it is."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _WRAPPERS \
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
        inner = source_of(node.args[0], lines)
        if inner and node.lineno == node.end_lineno:
            simple = isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
            yield at(node, inner if simple else f"({inner})")


def ordered(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """An iterable put in order, or reversed (MutPy's RIL): what a `for` or a comprehension goes over, and the one
    argument of `list`, `tuple`, `sum`, `set`, `enumerate` or `str.join`, as `sorted(...)` and `reversed(...)`, when
    it is not one of those calls already."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        iterables = [node.iter]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        iterables = [generator.iter for generator in node.generators]
    elif isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred) and (
            isinstance(node.func, ast.Name) and node.func.id in _TAKES_ITERABLE
            or isinstance(node.func, ast.Attribute) and node.func.attr == "join"):
        iterables = [node.args[0]]
    else:
        return
    for iterable in iterables:
        text = source_of(iterable, lines)
        already = isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
            and iterable.func.id in _ORDERED
        if text and not already and not isinstance(iterable, (ast.GeneratorExp, ast.Starred)):
            for wrapper in _ORDERED:
                yield at(iterable, f"{wrapper}({text})")


def attribute_siblings(node: ast.AST, lines: list[str], docstrings: set[int],
                       receivers: dict[tuple[str, bool], list[str]]) -> Iterator[Edit]:
    """An attribute read as each other attribute the definition reads on the same object (TBar's variable
    mutation, for fields: `self.low` as `self.high`, `opts.width` as `opts.height`); a method called as another
    method called on it (`node.left()` as `node.right()`). receivers: (the object's name, called) -> the attribute
    names read on it so, in the order of the code."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
        for key in ((node.value.id, True), (node.value.id, False)):
            if node.attr not in receivers.get(key, []):
                continue
            end = node.end_col_offset
            for other in receivers[key]:
                if other != node.attr:
                    yield (node.end_lineno, end - len(node.attr), node.end_lineno, end, other)


def receivers_of(nodes: list[ast.AST]) -> dict[tuple[str, bool], list[str]]:
    """For attribute_siblings: (the object's name, whether the attribute is called) -> the attributes read on it so
    (`self.low` -> ("self", False) -> ["low", ...]), in the order of the code."""
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    found: dict[tuple[str, bool], list[str]] = {}
    for n in nodes:
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name):
            names = found.setdefault((n.value.id, id(n) in called), [])
            if n.attr not in names:
                names.append(n.attr)
    return found


def negated_numbers(nodes: list[ast.AST]) -> frozenset[int]:
    """For signs: the ids of the numbers written under a minus (`-1`), and of those right of a `+` or `-` (`n - 1`
    as `n - -1` is `n + 1`, which mutants.py writes already)."""
    minus = [n.operand for n in nodes if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)]
    right = [n.right for n in nodes if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))]
    return frozenset(id(n) for n in minus + right if _number(n))


def dropped_arguments(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Each argument of a call with two or more left out, its comma with it (`f(a, b, key=k)` as `f(a, key=k)`): an
    argument that should not be passed (ManySStuBs' "same function, fewer arguments")."""
    if not isinstance(node, ast.Call):
        return
    given = sorted([*node.args, *node.keywords], key=lambda n: (n.lineno, n.col_offset))
    if len(given) < 2 or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None
                                                                                    for k in node.keywords):
        return
    for n, argument in enumerate(given):
        if n + 1 < len(given):  # up to the next argument
            following = given[n + 1]
            yield (argument.lineno, argument.col_offset, following.lineno, following.col_offset, "")
        else:  # from the end of the one before
            before = given[n - 1]
            yield (before.end_lineno, before.end_col_offset, argument.end_lineno, argument.end_col_offset, "")


def exchanged(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Two like parts of one expression exchanged, one from each of two of its operands, all on one line (MutPy's
    and TBar's swaps, past a call's own two arguments): two differences, products, ... of the same operator
    (`(x - lo)` and `(hi - x)`), two items of the same collection (`a[i]` and `a[j]`), two calls of the same
    function, two attributes of the same object. The two operands of `+`, `*`, `&`, `|` or `^` themselves are not
    exchanged: that writes the same value."""
    if isinstance(node, ast.BinOp):
        operands = [node.left, node.right]
    elif isinstance(node, ast.BoolOp):
        operands = node.values
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
    else:
        return
    if node.lineno != node.end_lineno:
        return
    keys = [{id(part): _likeness(part, lines) for part in ast.walk(operand)} for operand in operands]
    same_value = isinstance(node, ast.BinOp) and isinstance(node.op, _COMMUTATIVE)
    for n, first in enumerate(operands):
        for m in range(n + 1, len(operands)):
            second = operands[m]
            for one in ast.walk(first):
                if (key := keys[n][id(one)]) is None:
                    continue
                for other in ast.walk(second):
                    whole = same_value and one is first and other is second
                    if key == keys[m][id(other)] and not whole and source_of(one, lines) != source_of(other, lines):
                        yield exchange(lines, one, other)


def _likeness(node: ast.AST, lines: list[str]) -> tuple[str, str] | None:
    """What makes two parts alike enough to exchange: the operator of a binary operation, the collection an item
    is read from, the function called, the object an attribute is read on; None for any other part."""
    if isinstance(node, ast.BinOp):
        return ("operation", type(node.op).__name__)
    if isinstance(node, ast.Subscript):
        return ("item", source_of(node.value, lines))
    if isinstance(node, ast.Call):
        return ("call", source_of(node.func, lines))
    if isinstance(node, ast.Attribute):
        return ("attribute", source_of(node.value, lines))
    return None


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
        and not isinstance(node.value, bool)
