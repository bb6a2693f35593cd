"""Infilled candidates: cloze-style repair. A suspicious line, or one expression on it, is cut out of the file, and
the model fills the hole from the code on both sides (omni/model/infill.py: fill in the middle). What a code model
writes there is the code most natural in that place, and a fault is often the unnatural code: a bound one off, the
wrong name, an operator, a clause left out. Where a line is missing, an empty hole beside a suspicious line asks what
goes there. AlphaRepair (Xia and Zhang, 2022) showed the idea with a masked model; a fill-in-the-middle model takes
holes of any size.

The holes of one line, in the order they are asked: the line's expressions, each cut out alone (the largest first:
the whole condition before one of its operands; the line's start and end kept, so the fill is one expression), then
the whole line (or the whole statement that begins there), then the gaps before and after it. Each hole gives the
greedy fill and a few sampled ones; each fill is put in its place and the definition that results is one candidate,
checked like any other (omni/repair/verified.py).
"""

from __future__ import annotations

import ast
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from omni.box.toolbox import details
from omni.errors import ContextLengthExceeded, ModelError
from omni.model.infill import Masked
from omni.model.usage import UsageMeter
from omni.protocols import Model, Sandbox
from omni.repair.rewritten import parses, shape, without_docstring
from omni.repair.worded import worded_lines

PARTS = 2  # expressions cut out of one line, the largest first
MIN_PART = 1  # characters an expression must have to be cut out
LINES = 4  # suspicious lines of one definition whose holes are filled, best first
UNRANKED = 8  # a definition with no line the tests or the goal's words point to: its lines, when it has so few
SAMPLES = 2  # sampled fills of each hole, beside the greedy one
TEMPERATURE = 0.8
ROUND_S = 90  # seconds one definition's fills may take in all; the holes left are not asked
SWEPT_S = 30  # in a sweep (a definition too long to rewrite whole): its best line alone, this long at most


class Infilling:
    """The infilled candidates of a definition, a round per suspicious line (omni/repair/verified.py tries each
    round's candidates before the next line is asked, so a fix on the first line ends the call), once a
    definition. The model's infilling (omni/model/infill.py) is probed when first needed; where the endpoint
    cannot fill, there are no such rounds."""

    def __init__(self, model: Model, sandbox: Sandbox, meter: UsageMeter, words: frozenset[str]):
        self.model, self.sandbox, self.meter, self.words = model, sandbox, meter, words
        self.infill = None  # the model's Infill, once a round wants it
        self.done: set[tuple[str, str]] = set()  # definitions whose holes were filled

    def rounds(self, path: str, symbol: str, start: int, whole: str, best: Iterable[int],
               ran: Iterable[Iterable[int]], swept: bool = False) -> list[Callable[[], tuple[list[str], str]]]:
        """The rounds of the definition `whole` at file line start: one per line the failing tests point to (file
        lines: its best, then the others they ran, by tier; none known: those whose names share a word with the
        goal; none of those either: a short definition's lines in order), up to LINES; swept: a definition's sweep,
        its best line alone, SWEPT_S at most. None when it was filled before, or its file cannot be read as the
        definition's text."""
        if (path, symbol) in self.done or (self.infill or self.model.infill()) is None:
            return []
        self.infill = self.model.infill()
        self.done.add((path, symbol))
        end = start + len(whole.splitlines()) - 1
        text = self._text(path, end)
        if "".join(text.splitlines(keepends=True)[start - 1:end]).rstrip() != whole.rstrip() or "\ufffd" in text:
            return []  # not the definition read (or bytes that are not UTF-8, which a candidate would not keep)
        wanted = [n for n in dict.fromkeys([*best, *(n for tier in ran for n in tier)]) if start < n <= end] or \
            [start + n - 1 for n in sorted(worded_lines(whole, self.words))] or _short(text, start, end)
        budget = Budget(SWEPT_S if swept else ROUND_S)
        return [lambda line=line: (self._fill(text, line, start, end, whole, budget), "infilled")
                for line in [n for n in wanted if start < n <= end][:1 if swept else LINES]]

    def _text(self, path: str, end: int) -> str:
        """The file's lines 1..end, as read_file gives them (a page at a time); "" when they cannot be read."""
        text, line = "", 1
        while line and line <= end:
            found = self.sandbox.run_tool("read_file", {"path": path, "start_line": line, "end_line": end}, 60)
            if not found.success:
                return ""
            read = details("read_file", found)
            text, line = text + read.text, read.next_start_line
        return text

    def _fill(self, text: str, line: int, start: int, end: int, whole: str, budget: Budget) -> list[str]:
        """The candidates of one line's holes (without the definition's docstring, as every candidate is written),
        while the definition's budget lasts."""
        original, made = without_docstring(whole), []
        for hole in holes(text, [line]):
            if budget.spent():
                break
            cut = masked(text, hole, start, end)
            try:
                fills, usage = self.infill.fill(cut, SAMPLES, TEMPERATURE, one_line=hole.one_line)
            except (ModelError, ContextLengthExceeded):  # no more fills of it; the samples ask as without them
                budget.seconds = 0
                break
            self.meter.count(usage, "candidates")
            made += [without_docstring(code) for code in candidates(cut, hole, fills, whole)]
        seen, kept = {shape(original)}, []
        for code in made:
            if shape(code) not in seen:
                seen.add(shape(code))
                kept.append(code)
        return kept


@dataclass
class Budget:
    """The seconds one definition's fills may take, from its first."""

    seconds: float
    began: float | None = None

    def spent(self) -> bool:
        self.began = self.began or time.monotonic()
        return time.monotonic() - self.began > self.seconds


@dataclass(frozen=True)
class Hole:
    """Characters start..end of a file cut out (end == start: a gap where something may be added); line: the file
    line it is on; one_line: whether the fill is one line's part (the model stops at the line's end)."""

    start: int
    end: int
    line: int
    kind: str  # "part" (an expression), "line" (the line's code after its indentation), "statement" (one that
    # spans several lines, from its first line's code), "gap" (before the line)

    @property
    def one_line(self) -> bool:
        return self.kind in ("part", "line")


def holes(text: str, lines: Iterable[int], parts: int = PARTS) -> list[Hole]:
    """The holes of a file's lines (1-based, best first): each code line's expressions, largest first, then the
    whole statement that begins there, then the gaps before and after the line, each hole once."""
    offsets = _line_offsets(text)
    rows = text.splitlines(keepends=True)
    spans, statements = _expressions(text), _statements(text)
    found: list[Hole] = []
    for line in lines:
        if not 1 <= line <= len(rows):
            continue
        row, base = rows[line - 1], offsets[line - 1]
        after = offsets[line] if line < len(rows) else len(text)
        if _code(row):
            code_start = base + len(row) - len(row.lstrip())
            last = statements.get(line, line)
            code_end = offsets[last - 1] + len(rows[last - 1].rstrip("\r\n"))
            whole = (code_start, code_end)
            inside = sorted({s for s in spans.get(line, ()) if s != whole and s[1] - s[0] >= MIN_PART},
                            key=lambda s: (s[0] - s[1], s[0]))
            found += [Hole(a, b, line, "part") for a, b in inside[:parts]]
            found.append(Hole(*whole, line, "line" if last == line else "statement"))
        found += [Hole(base, base, line, "gap"), Hole(after, after, line + 1, "gap")]
    unique: dict[tuple[int, int], Hole] = {}
    for hole in found:
        unique.setdefault((hole.start, hole.end), hole)
    return list(unique.values())


def masked(text: str, hole: Hole, start: int, end: int) -> Masked:
    """The file with hole cut out, for the definition of lines start..end (1-based, inclusive)."""
    offsets = _line_offsets(text)
    first, last = offsets[start - 1], offsets[end] if end < len(offsets) else len(text)
    return Masked(prefix=text[:hole.start], suffix=text[hole.end:last], head=text[first:hole.start],
                  tail=text[hole.end:last], first=hole.line, last=hole.line - (hole.kind == "gap"))


def candidates(hole_text: Masked, hole: Hole, fills: list[str], original: str) -> list[str]:
    """The definitions the fills of one hole make, in order, without those that do not parse, repeat one before,
    or are the code as it is (original). A one-line hole takes a fill's first line; a gap takes its first line,
    then its first two lines."""
    made: list[str] = []
    seen = {shape(original)}
    for fill in fills:
        rows = fill.splitlines(keepends=True)
        if hole.one_line:  # the fill's first line; also without the rest of the hole's line, when it wrote it again
            line, rest = (rows[0].rstrip("\r\n") if rows else ""), hole_text.tail.split("\n", 1)[0].rstrip()
            options = [line, line[:-len(rest)]] if rest.strip() and line.endswith(rest) else [line] if rows else []
        elif hole.kind == "statement":
            options = [fill.rstrip("\r\n")] if fill.strip() else []
        else:
            options = ["".join(rows[:k]) for k in (1, 2) if len(rows) >= k and rows[k - 1].strip()]
            options = [o if o.endswith("\n") else o + "\n" for o in options]
        for middle in options:
            code = hole_text.head + middle + hole_text.tail
            if (hole.one_line and not middle.strip()) or not parses(code) or shape(code) in seen:
                continue
            seen.add(shape(code))
            made.append(code)
    return made


def _short(text: str, start: int, end: int) -> list[int]:
    """The code lines of a definition (lines start..end of text) after its first, in order, when it has at most
    UNRANKED of them; else none (its first lines would be a guess). A docstring's lines are not code."""
    try:
        tree = ast.parse(textwrap.dedent("".join(text.splitlines(keepends=True)[start - 1:end])))
    except SyntaxError:
        return []
    doc = ast.get_docstring(tree.body[0], clean=False) if tree.body and hasattr(tree.body[0], "body") else None
    skip = range(tree.body[0].body[0].lineno, tree.body[0].body[0].end_lineno + 1) if doc is not None else range(0)
    rows = text.splitlines()
    lines = [n for n in range(start + 1, end + 1) if _code(rows[n - 1]) and n - start + 1 not in skip]
    return lines if len(lines) <= UNRANKED else []


def _code(row: str) -> bool:
    stripped = row.strip()
    return bool(stripped) and not stripped.startswith("#") and stripped not in (")", "]", "}", "):", "),", "],",
                                                                               "},", "else:", "try:", "finally:")


def _line_offsets(text: str) -> list[int]:
    """The character offset where each line begins."""
    offsets, at = [], 0
    for row in text.splitlines(keepends=True):
        offsets.append(at)
        at += len(row)
    return offsets


def _statements(text: str) -> dict[int, int]:
    """Per line a simple statement that spans several lines begins on, the line it ends on (a call's arguments on
    lines of their own, a long condition)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    spans = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.end_lineno and \
                node.end_lineno > node.lineno:
            spans[node.lineno] = node.end_lineno
    return spans


def _expressions(text: str) -> dict[int, set[tuple[int, int]]]:
    """Per line, the character spans of the expressions that begin and end on it (a statement's own parts: a
    condition, an operand, a call's argument, a returned value)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    offsets = _line_offsets(text)
    rows = text.splitlines(keepends=True)
    spans: dict[int, set[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or node.lineno != node.end_lineno or isinstance(node, ast.JoinedStr):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            continue
        row = rows[node.lineno - 1]
        start = offsets[node.lineno - 1] + _chars(row, node.col_offset)
        end = offsets[node.lineno - 1] + _chars(row, node.end_col_offset)
        spans.setdefault(node.lineno, set()).add((start, end))
    return spans


def _chars(row: str, byte_offset: int) -> int:
    """A UTF-8 byte offset into a line (what ast gives) as a character offset."""
    return len(row.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
