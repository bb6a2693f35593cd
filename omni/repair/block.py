"""Block rewrites: when the failing tests point to lines of a definition (tools/spectrum.py), the candidates
rewrite only the few lines around them, shown marked inside the whole definition, and each reply is put back in
their place. Asked for a 90-line function, a 1.5B model rewrites 90 lines and mostly changes nothing (or is too
long to ask at all: omni/repair/localize.py's MAX_LINES); asked for a block of a few lines, it writes a few.
On with --block-rewrites (settings.block_rewrites), in definitions of at least --block-from lines, until runs on
both halves of the benchmark show it helps (bench/README.md)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from omni.repair.rewritten import indent_of, parses

BLOCK_LINES = 8  # a block is the outermost statement (or run of them) around the lines this short
LONGEST_STATEMENT = 30  # a block that cannot be shorter may span this many lines
MAX_DEFINITION = 400  # a definition this long can still be repaired by blocks (whole rewrites: MAX_LINES)
START, END = "# >>> rewrite from here", "# <<< to here"
_HEADS = ("def ", "async def ", "class ")


@dataclass(frozen=True)
class Block:
    """Lines `first` to `last` (1-based, inclusive) of a definition's source."""

    first: int
    last: int


def around(source: str, lines: list[int]) -> Block | None:
    """The block of `source` (one definition) around its lines `lines` (1-based within source; the spectrum's
    equally best lines): going down from the body, the statement that holds them all, or, where they part, the run of
    statements from the first that holds one to the last. Of those, the outermost that spans at most BLOCK_LINES
    lines, else the innermost when it spans at most LONGEST_STATEMENT; never an `elif`/`else`/`except` branch alone,
    which cannot stand where it is put back. None when no line is in the body, or the block would be longer."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    text = source.splitlines()
    spans: list[tuple[int, int]] = []  # outermost first
    body = tree.body[0].body
    while holders := [s for s in body if any(s.lineno <= line <= (s.end_lineno or s.lineno) for line in lines)]:
        first, last = holders[0].lineno, holders[-1].end_lineno or holders[-1].lineno
        if not text[first - 1].lstrip().startswith(("elif", "else", "except")):
            spans.append((first, last))
        if len(holders) > 1:
            break
        body = [child for field in ("body", "orelse", "finalbody", "handlers", "cases")
                for child in getattr(holders[0], field, None) or [] if isinstance(child, ast.stmt)]
    fits = [span for span in spans if span[1] - span[0] < BLOCK_LINES]
    span = fits[0] if fits else spans[-1] if spans and spans[-1][1] - spans[-1][0] < LONGEST_STATEMENT else None
    return Block(*span) if span else None


def marked(source: str, block: Block) -> str:
    """The definition with its block between two marker comments, indented as the block's first line."""
    lines = source.splitlines()
    indent = indent_of(lines[block.first - 1])
    return "\n".join([*lines[:block.first - 1], indent + START, *lines[block.first - 1:block.last], indent + END,
                      *lines[block.last:]])


def inside(source: str, block: Block) -> str:
    """The block's own lines, dedented."""
    return textwrap.dedent("\n".join(source.splitlines()[block.first - 1:block.last]))


def spliced(source: str, block: Block, code: str) -> str:
    """The definition with its block replaced by `code` (a reply's lines, at any indentation, marker comments
    dropped). A reply that is a whole definition (a small model often writes one) is taken as it is. "" when the
    result does not parse: that candidate is not tried."""
    new = [line for line in textwrap.dedent(code).strip("\n").splitlines()
           if not line.lstrip().startswith((START[:5], END[:5]))]
    first = next((line for line in new if line.strip()), "")
    if first.lstrip().startswith(_HEADS) and not source.splitlines()[block.first - 1].lstrip().startswith(_HEADS):
        return _parsing(code)
    lines = source.splitlines()
    indent = indent_of(lines[block.first - 1])
    body = textwrap.dedent("\n".join(new)).splitlines()
    return _parsing("\n".join([*lines[:block.first - 1], *(indent + line if line.strip() else "" for line in body),
                               *lines[block.last:]]))


def _parsing(code: str) -> str:
    return code if parses(code) else ""
