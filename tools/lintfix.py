"""A candidate rewrite's own lint: the ruff findings it adds to its file (the project's ruff settings, against the
file as it was), and ruff's fixes for them, applied to the rewritten definition alone.

A rewrite that passes the check can still bring a finding the project's settings report (two `if` branches that
could be one), and the finish gate holds a new finding against the run: a right fix was sent back for one a small
model then did not clear (bench/README.md, runs AL and DL). ruff offers a fix for many. try_fixes applies those
inside the definition, before the check runs, so what is checked is what is applied: the safe fixes first, then
those ruff calls unsafe (`dict((k, v) for ...)` as a comprehension, `!= None` as `is not None`), since they may
change what the code does, and here the check then runs on the code they made, which is the model's and not yet the
user's. The findings left, those with no fix, are the candidate's `lint`, and a candidate without any ranks first.
A line the rewrite made too long (E501), which ruff has no fix for, is formatted by `ruff format` with the
project's settings, that line alone (--range), when that clears it and adds nothing: a right fix that passed every
test was held back for one long line (run BI)."""

from __future__ import annotations

import ast
import difflib
import io
import sys
from collections import Counter

import checks
from context import Context
from pysource import definitions
from workspace import ToolError

MAX_FIXES = 5  # fixes applied to one candidate, one at a time: a fix moves the lines of the next


def findings(ctx: Context, path: str) -> list[dict]:
    """ruff's findings in path as it is now, with the settings the lint tool uses (found from the file's place)."""
    return checks._ruff(ctx, [path], str(ctx.root), None) or []


def added(before: list[dict], after: list[dict]) -> list[dict]:
    """after's findings that before does not have, judged "new" as the lint tool judges it (checks.judged): a rule
    the file broke before is its style, not a new finding."""
    start = Counter((item["rel"], item.get("code"), item["message"]) for item in before)
    return [item for item, label in zip(after, checks.judged(after, start), strict=True) if label == "new"]


def tidy(ctx: Context, path: str, symbol: str, original: str, before: list[dict]) -> tuple[str, list[str]]:
    """After a rewrite of symbol in path (original: the file's text before it; before: its findings then), apply
    ruff's fixes for the findings the rewrite added, safe ones first, when every edit of a fix lies inside the
    definition.
    Returns the definition's source when a fix was applied ("" when none was), and the added findings left,
    'CODE message' each."""
    file, fixed = ctx.root / path, ""
    new = added(before, findings(ctx, path))
    for _ in range(MAX_FIXES):
        text = file.read_text(encoding="utf-8", errors="surrogateescape")
        span = _span(original, text, symbol)
        fixable = sorted((f for f in new if _fix_inside(f, span)), key=lambda f: f["fix"]["applicability"] != "safe")
        if not fixable or not (tidied := _applied(text, fixable[0]["fix"]["edits"])):
            break
        file.write_text(tidied, encoding="utf-8", errors="surrogateescape")
        fixed, new = _source(tidied, _span(original, tidied, symbol)), added(before, findings(ctx, path))
    text = file.read_text(encoding="utf-8", errors="surrogateescape")
    if wrapped := _wrapped(ctx, path, text, _span(original, text, symbol), new, before):
        text, new = wrapped
        fixed = _source(text, _span(original, text, symbol))
    return fixed, [f"{f.get('code') or 'syntax'} {f['message']}" for f in new]


def _wrapped(ctx: Context, path: str, text: str, span: tuple[int, int] | None, new: list[dict],
             before: list[dict]) -> tuple[str, list[dict]] | None:
    """Each line too long (E501) that the rewrite added inside the definition (text: the file now), formatted by
    ruff format alone (bottom up, so the rows above stay where they are); the file's text then and the added
    findings left, or None, and the file as it was, when that does not clear them all or adds another, or changes
    a line outside the definition."""
    rows = sorted({f["location"]["row"] for f in new if f.get("code") == "E501"}, reverse=True)
    if span is None or not rows or not all(span[0] <= row <= span[1] for row in rows):
        return None
    file = ctx.root / path
    for row in rows:
        done = ctx.run([sys.executable, "-m", "ruff", "format", "--no-cache", f"--range={row}-{row + 1}", "--", path],
                       timeout=60)
        if done.exit_code != 0:
            break
    after = file.read_text(encoding="utf-8", errors="surrogateescape")
    left = added(before, findings(ctx, path)) if after != text else new
    grown = len(_lines(after)) - len(_lines(text))
    if any(f.get("code") == "E501" for f in left) or len(left) >= len(new) or _outside(text, after, span, grown):
        file.write_text(text, encoding="utf-8", errors="surrogateescape")
        return None
    return after, left


def _outside(text: str, after: str, span: tuple[int, int], grown: int) -> bool:
    """Whether after differs from text anywhere but in the definition's lines (span, in text; grown by `grown`)."""
    old, new = _lines(text), _lines(after)
    return old[:span[0] - 1] != new[:span[0] - 1] or old[span[1]:] != new[span[1] + grown:]


def _span(original: str, text: str, symbol: str) -> tuple[int, int] | None:
    """The first and last line of the definition named symbol that the lines changed from original fall in."""
    matcher = difflib.SequenceMatcher(None, _lines(original), _lines(text), autojunk=False)
    changed = [j for tag, _, _, j1, j2 in matcher.get_opcodes() if tag != "equal" for j in range(j1 + 1, j2 + 1)]
    if not changed:
        return None
    try:
        rows = definitions(text, "")
    except ToolError:  # a file that does not parse has no definition to tidy
        return None
    name = symbol.rsplit(".", 1)[-1]
    holding = [(start, end) for _, qualified, start, end, _ in rows if qualified.rsplit(".", 1)[-1] == name
               and start <= changed[-1] and changed[0] <= end]
    return min(holding, key=lambda s: s[1] - s[0]) if holding else None


def _fix_inside(item: dict, span: tuple[int, int] | None) -> bool:
    """Whether ruff offers a fix for item, safe or unsafe (not one it only displays), whose edits all lie inside
    span (an edit may end at the start of the line after it: the end of a deleted line)."""
    fix = item.get("fix") or {}
    if span is None or fix.get("applicability") not in ("safe", "unsafe") or not fix.get("edits"):
        return False
    first, last = span
    return all(first <= e["location"]["row"] and (e["end_location"]["row"] <= last or (
        e["end_location"]["row"] == last + 1 and e["end_location"]["column"] == 1)) for e in fix["edits"])


def _applied(text: str, edits: list[dict]) -> str:
    """text with ruff's edits made (rows and columns from 1, columns in characters); "" when the result does not
    parse."""
    starts, size = [0], len(text)
    for line in _lines(text):
        starts.append(starts[-1] + len(line))

    def offset(at: dict) -> int:  # from the end backwards: the text before an edit is as it was
        return min(starts[min(at["row"], len(starts)) - 1] + at["column"] - 1, size)

    for edit in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        text = text[:offset(edit["location"])] + (edit.get("content") or "") + text[offset(edit["end_location"]):]
    try:
        ast.parse(text)
    except SyntaxError:
        return ""
    return text


def _source(text: str, span: tuple[int, int] | None) -> str:
    if span is None:
        return ""
    return "".join(_lines(text)[span[0] - 1:span[1]])


def _lines(text: str) -> list[str]:
    """text's lines with their ends, split where Python and ruff count lines (not at a form feed)."""
    return io.StringIO(text, newline="").readlines()
