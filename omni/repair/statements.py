"""Statement-level mechanical candidates, the edits of statement-level repair (as in GenProg), made from the
definition's own statements: one left out, two neighbours swapped, one copied into another of its blocks, one moved
out of its block to after the statement that holds it, and the bodies of two neighbouring branches of a chain
swapped. The copy is the insert, with the code as its only donor: a case one branch handles and its sibling lost (`if
sign == "-": ret = -ret` at the end of an `if`'s body, and not of its `else`) is made of a statement already written
there. omni/repair/mutants.py tries these after its one-change kinds, where the tests point and elsewhere."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import partial

Edit = tuple[int, int, int, int, str]  # first line, first column, last line, end column (1-based lines), new text
Kind = Callable[[ast.AST, list[str], set[int]], Iterator[Edit]]

STOPS = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Pass)  # and `pass`, which does nothing either way
DONOR_LINES = 4  # a statement copied is at most this long


def statement_kinds(tree: ast.AST, docstrings: set[int]) -> tuple[Kind, ...]:
    """The statement kinds, in the order they take turns; the copies' donors are the statements of `tree`, each with
    the statement before it in its block."""
    donors = [(s, before) for node in ast.walk(tree) for block in _blocks(node)
              for before, s in zip(block, block[1:], strict=False)
              if _guard_or_effect(s, docstrings) and s.end_lineno - s.lineno < DONOR_LINES]
    return (_dropped, _reordered, partial(_copied, donors=donors), _moved_out, _branches_swapped)


def _dropped(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Each statement of a block of two or more left out, lines and all: a call made for its effect, an
    assignment, or an `if` with no `else` (a guard), when it has its lines to itself."""
    for block in _blocks(node):
        if len(block) < 2:
            continue
        for statement in block:
            if _guard_or_effect(statement, docstrings) and _alone(statement, lines):
                last = statement.end_lineno
                yield (statement.lineno, 0, last, len(lines[last - 1].encode()), "")


def _reordered(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """Two neighbouring one-line statements of a block swapped, when neither ends the block's flow (`return`, `raise`,
    `break`, `continue`), is a `pass` or is a docstring, they differ, and they share a name (two that share none do the
    same in either order, but for what their calls do out of sight)."""
    for block in _blocks(node):
        for first, second in zip(block, block[1:], strict=False):
            movable = all(s.lineno == s.end_lineno and _alone(s, lines) and not isinstance(s, STOPS)
                          and not _docstring(s, docstrings) for s in (first, second))
            if movable and second.lineno == first.lineno + 1:
                a, b = lines[first.lineno - 1], lines[second.lineno - 1]
                if a.strip() != b.strip() and _named(first) & _named(second):
                    swapped = b + a if b.endswith("\n") else b + "\n" + a.rstrip("\n")  # the last has no line end?
                    yield (first.lineno, 0, second.lineno, len(b.encode()), swapped)


def _copied(node: ast.AST, lines: list[str], docstrings: set[int],
            donors: list[tuple[ast.stmt, ast.stmt]]) -> Iterator[Edit]:
    """A statement of the definition (a guard, an assignment or a call, of at most DONOR_LINES lines, with its lines
    to itself) copied to the end of another block of `node` that computes what it follows: the block's last statement
    (or, when that is a `return`, `raise`, `break` or `continue`, the one before it, and the copy goes in between)
    assigns a name the statement before the donor assigns too (`ret = Duration(...)` and `ret = timedelta(...)`).
    Not into a block inside the donor, nor where the block or the statement that holds it has it already, nor after
    an `elif` (the copy would land outside the chain)."""
    for block in _blocks(node):
        anchor, head = block[-1], lines[block[0].lineno - 1]
        if not (_alone(block[0], lines) and _alone(anchor, lines)) or head.lstrip().startswith("elif"):
            continue
        stop = isinstance(anchor, STOPS)
        computed = _assigned(block[-2] if stop and len(block) > 1 else anchor)
        there = {_plain(s, lines) for s in block} | ({_plain(node, lines)} if isinstance(node, ast.stmt) else set())
        for donor, before in donors:
            rows = _text(donor, lines).splitlines()
            inside = donor.lineno <= block[0].lineno and block[-1].end_lineno <= donor.end_lineno
            if donor in block or inside or not computed & _assigned(before) or not _alone(donor, lines) \
                    or _plain(donor, lines) in there or any(row[:donor.col_offset].strip() for row in rows):
                continue  # the last: a line left of its margin
            copy = "\n".join(" " * block[0].col_offset + row[donor.col_offset:] if row.strip() else "" for row in rows)
            last = lines[anchor.end_lineno - 1].rstrip("\r\n")
            own = "".join(lines[anchor.lineno - 1:anchor.end_lineno - 1]) + last
            text = f"{copy}\n{own}" if stop else f"{own}\n{copy}"
            yield (anchor.lineno, 0, anchor.end_lineno, len(last.encode()), text)


def _moved_out(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The last statement of a block of an `if`, `try`, loop or `with` (a guard, an assignment or a call, with its lines
    to itself, not the block's only one) moved out, to just after the whole statement at its margin: what every branch
    needs, written into one (`entry.seen = now` at the end of an `except` and not after the `try`), or what a loop does
    each round that was meant once after it. An `elif` is left to the `if` that heads its chain."""
    compound = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)
    if not isinstance(node, compound) or lines[node.lineno - 1].lstrip().startswith("elif"):
        return
    end, last = node.end_lineno, lines[node.end_lineno - 1].rstrip("\r\n")
    for block in _blocks(node):
        moved = block[-1]
        rows = _text(moved, lines).splitlines()
        if len(block) < 2 or not _guard_or_effect(moved, docstrings) or not _alone(moved, lines) \
                or any(row[:moved.col_offset].strip() for row in rows):
            continue
        out = "\n".join(" " * node.col_offset + row[moved.col_offset:] if row.strip() else "" for row in rows)
        rest = "".join(lines[moved.end_lineno:end]).rstrip("\r\n")  # the statement's parts after the block
        yield (moved.lineno, 0, end, len(last.encode()), f"{rest}\n{out}" if rest else out)


def _branches_swapped(node: ast.AST, lines: list[str], docstrings: set[int]) -> Iterator[Edit]:
    """The bodies of two neighbouring branches of an `if`/`elif` chain swapped, the conditions kept: each case given
    the other's answer (`elif a_is_int: return 1` / `elif b_is_int: return -1`, the wrong way round). Not an `if`'s
    body with a plain `else`'s, which is the `if` negated (a one-change kind already)."""
    if not isinstance(node, ast.If) or not node.orelse:
        return
    chained = isinstance(node.orelse[0], ast.If) and len(node.orelse) == 1 and \
        lines[node.orelse[0].lineno - 1].lstrip().startswith("elif")
    if not chained and not lines[node.lineno - 1].lstrip().startswith("elif"):
        return
    first, second = node.body, node.orelse[0].body if chained else node.orelse
    if not (_alone(first[0], lines) and _alone(second[0], lines)) or first[0].col_offset != second[0].col_offset:
        return
    start, end = first[0].lineno, second[-1].end_lineno
    between = "".join(lines[first[-1].end_lineno:second[0].lineno - 1])  # the `elif ...:` or `else:` line
    one, other = ("".join(lines[b[0].lineno - 1:b[-1].end_lineno]).rstrip("\r\n") for b in (first, second))
    if one.strip() != other.strip():
        yield (start, 0, end, len(lines[end - 1].rstrip("\r\n").encode()), f"{other}\n{between}{one}")


def _assigned(statement: ast.stmt) -> set[str]:
    """What an assignment binds, as written (`ret`, `self.total`, `row[0]`); nothing for any other statement."""
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else []
    return {ast.unparse(t) for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])}


def _guard_or_effect(statement: ast.stmt, docstrings: set[int]) -> bool:
    """An assignment, a call made for its effect, or an `if` with no `else`: the statements left out or copied."""
    kind = isinstance(statement, (ast.Assign, ast.AugAssign, ast.If)) or (
        isinstance(statement, ast.Expr) and not _docstring(statement, docstrings))
    return kind and not getattr(statement, "orelse", None)


def _text(statement: ast.stmt, lines: list[str]) -> str:
    """A statement's lines, each with its margin, the last without its line end."""
    return "".join(lines[statement.lineno - 1:statement.end_lineno]).rstrip("\r\n")


def _plain(statement: ast.stmt, lines: list[str]) -> str:
    """A statement's lines without their margins: the same statement in any block reads alike."""
    return "\n".join(row.strip() for row in _text(statement, lines).splitlines())


def _docstring(statement: ast.stmt, docstrings: set[int]) -> bool:
    return isinstance(statement, ast.Expr) and id(statement.value) in docstrings


def _named(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement lists a node holds: its body, its `else`, its `finally`, and its handlers' bodies."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", None) or []:
        yield handler.body


def _alone(statement: ast.stmt, lines: list[str]) -> bool:
    """Whether a statement has its lines to itself: nothing before it on its first line, and at most a comment
    after it on its last."""
    head = lines[statement.lineno - 1].encode()[:statement.col_offset].decode()
    tail = lines[statement.end_lineno - 1].encode()[statement.end_col_offset:].decode().strip()
    return not head.strip() and (not tail or tail.startswith("#"))
