"""Exact edits (replace, insert, create, delete) and the edit gate that every Python edit passes."""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import sys
import tempfile
from collections import Counter
from typing import Callable

from context import Context, result
from pysource import changed_definitions, definitions
from workspace import ToolError, not_utf8, read_text, resolve, write_atomic

# Syntax errors and the pyflakes checks that mean "this code cannot run".
FATAL_RULES = "E9,F63,F7,F82"


def _fatal_problems(ctx: Context, texts: list[str], rel: str) -> list[list[dict]]:
    """ruff's fatal findings for each text, checked as files named like rel."""
    with tempfile.TemporaryDirectory(prefix="omni-gate-") as tmp:
        paths = []
        for n, text in enumerate(texts):
            folder = os.path.join(tmp, str(n))
            os.makedirs(folder)
            path = os.path.join(folder, os.path.basename(rel))
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
                handle.write(text)
            paths.append(path)
        done = ctx.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select",
                        FATAL_RULES, "--output-format", "json", "--exit-zero", *paths], timeout=60)
        try:
            findings = json.loads(done.output[done.output.find("["):] or "[]")
        except json.JSONDecodeError:
            findings = []
        found: list[list[dict]] = [[] for _ in texts]
        for item in findings:
            for n, path in enumerate(paths):
                if os.path.samefile(item["filename"], path):
                    found[n].append(item)
        return found


def _key(item: dict) -> tuple[str, str]:
    return (item.get("code") or "syntax", item.get("message", ""))


def new_fatal_errors(ctx: Context, before: str, after: str, rel: str) -> list[dict]:
    """ruff's fatal findings in `after` that `before` does not have (counted by code and message)."""
    old, new = _fatal_problems(ctx, [before, after], rel)
    remaining = [_key(i) for i in old]
    introduced = []
    for item in new:
        if _key(item) in remaining:
            remaining.remove(_key(item))
        else:
            introduced.append(item)
    return introduced


def gated_write(ctx: Context, file, rel: str, before: str | None, after: str, what: str) -> dict:
    """Write `after` unless it changes nothing, or adds a syntax error or a fatal lint error to a Python file."""
    if before is not None and after == before:
        return result(False, failure="edit_failed", error=(
            f"{what} changed nothing: {rel} already reads exactly like that; nothing was written. "
            "If the code is already right, move on (run the tests, or finish)."), unchanged=True)
    where = not_utf8(before or "")
    if where and _new_non_ascii(before or "", after):
        raise ToolError(f"{rel} is not UTF-8 ({where}), and the new text has non-ASCII characters, which would "
                        "mix two encodings in one file; nothing was written. Write the new text in ASCII only "
                        "(escapes such as \\xe9 in code), or convert the file to UTF-8 with shell first.")
    if rel.endswith(".py"):
        introduced = new_fatal_errors(ctx, before or "", after, rel)
        if introduced:
            lines = after.splitlines()
            report = []
            for item in introduced[:2]:  # later ones are mostly the first one's echoes
                row = item["location"]["row"]
                code = item.get("code") or "syntax error"
                report.append(f"{rel}:{row}:{item['location']['column']}: {code} {item['message']}")
                for n in range(max(1, row - 2), min(len(lines), row + 2) + 1):
                    report.append(f"  {'>' if n == row else ' '}{n:>5}| {lines[n - 1]}")
            return result(False, failure="lint_failed", error=(
                f"{what} was rolled back: it would add {len(introduced)} new error(s) to {rel}; "
                "the file is unchanged.\n" + "\n".join(report)
                + "\nFix these lines in your new text (indentation, brackets, undefined names) and try again."
                + _dropped(before or "", after, introduced)), new_errors=len(introduced))
    write_atomic(file, after)
    return result(True, f"{what}: {rel} written ({len(after.splitlines())} lines)" + _changed_lines(before, after),
                  symbols=changed_definitions(before, after) if rel.endswith(".py") else [])


def _new_non_ascii(before: str, after: str) -> bool:
    def count(text: str) -> Counter:
        return Counter(c for c in text if ord(c) > 127 and not "\udc80" <= c <= "\udcff")
    return bool(count(after) - count(before))


def _dropped(before: str, after: str, problems: list[dict]) -> str:
    """What to say when an edit deleted a definition that is still used: a small model asked to add a
    function often writes it over a neighbouring one."""
    names = {m.group(1) for item in problems for m in [re.search(r"Undefined name `(\w+)`", item["message"])] if m}
    gone = sorted(n for n in names if _defined(before, n) and not _defined(after, n))
    if not gone:
        return ""
    listed = ", ".join(f"`{n}`" for n in gone)
    return (f"\nYour new text removes the definition of {listed}, which the code still uses. Keep it: to add "
            "code next to a definition, write the old definition and then the new code in new_text, or add the "
            "new code with insert_lines.")


def _defined(text: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b", text, re.MULTILINE) is not None


DIFF_LINES = 24


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def unescaped(text: str) -> str | None:
    """text as a model meant it when it escaped it twice: one line holding \\n as two characters."""
    if "\n" in text or "\\n" not in text:
        return None
    return re.sub(r"""\\([nt"'\\])""", lambda m: _ESCAPES[m.group(1)], text)


def parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _uses_tabs(text: str) -> bool:
    indents = [line[0] for line in text.splitlines() if line[:1] in ("\t", " ") and line.strip()]
    return indents.count("\t") > len(indents) / 2


def _tabbed(text: str) -> str:
    """Leading spaces as tabs, in the smallest step the text indents by."""
    lines = text.split("\n")
    widths = [len(line) - len(line.lstrip(" ")) for line in lines]
    step = min([w for w in widths if w], default=4)
    return "\n".join("\t" * (w // step) + " " * (w % step) + line[w:] for w, line in zip(widths, lines, strict=True))


_SHOWN_HEADER = re.compile(r"\A\s*\S+ lines \d+-\d+: [^\n]*\n")  # read_symbol's "parse.py lines 3-9: def f"
_LINE_NUMBER = re.compile(r"^ *\d+\| ?")  # read_file's and read_symbol's "  12| "


def unnumbered(text: str) -> str | None:
    """text as a model meant it when it copied code as omni shows it: without the header and the line
    numbers. None when most of its lines are not numbered."""
    lines = _SHOWN_HEADER.sub("", text, count=1).split("\n")
    filled = [line for line in lines if line.strip()]
    if not filled or sum(bool(_LINE_NUMBER.match(line)) for line in filled) * 2 < len(filled):
        return None
    return "\n".join(_LINE_NUMBER.sub("", line, count=1) for line in lines)


def _readings(new: str, prefix: str, tabs: bool):
    """Ways to read a model's new code, in order of preference, with what each one assumed."""
    for text, escaped in ((new, ""), (unescaped(new), "held \\n as two characters and no line break"),
                          (unnumbered(new), "was copied with the header and line numbers it was shown with")):
        if text is None:
            continue
        steps = [(text, [escaped])]
        if tabs and "\n " in "\n" + text:  # the file's style first
            steps.insert(0, (_tabbed(text), [escaped, "was indented with spaces in a file indented with tabs"]))
        for reading, notes in steps:
            yield reading, notes
            if prefix and "\n" in reading:
                yield reading.replace("\n", "\n" + prefix), notes + [
                    "indented its lines after the first from the start of its first line"]


def as_meant(path: str, new: str, build: Callable[[str], str], prefix: str = "", tabs: bool = False,
             ) -> tuple[str, str]:
    """The reading of a model's new code that the Python file (build(new)) parses with: as written, unless
    the file is indented with tabs and the code with spaces; else with its escapes read, or its lines after
    the first indented like the line it starts on. And a note saying which. prefix: the whitespace before
    new on its first line."""
    if not path.endswith((".py", ".pyi")):
        return new, ""
    for reading, notes in _readings(new, prefix, tabs):
        if parses(build(reading)):
            return reading, ("" if reading == new else
                             " (the new code " + " and ".join(n for n in notes if n) + "; it was read that way)")
    return new, ""


def _changed_lines(before: str | None, after: str) -> str:
    """The change as a short diff with line numbers, so the model sees what it did and where."""
    if not before:
        return ""
    old, new = before.splitlines(), after.splitlines()
    groups = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1):
        lines = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [f"  {j1 + k + 1:>5}| {line}" for k, line in enumerate(new[j1:j2])]
            else:
                lines += [f"- {i1 + k + 1:>5}| {line}" for k, line in enumerate(old[i1:i2])]
                lines += [f"+ {j1 + k + 1:>5}| {line}" for k, line in enumerate(new[j1:j2])]
        groups.append("\n".join(lines))
    shown = "\n  ...\n".join(groups).splitlines()
    if len(shown) > DIFF_LINES:
        shown = shown[:DIFF_LINES] + [f"  [{len(shown) - DIFF_LINES} more diff lines; git_diff shows all]"]
    return "\nChanged (- before, + after, with line numbers):\n" + "\n".join(shown)


def _rewrite_hint(path: str, text: str, line: int | None) -> str:
    """For an edit that failed inside a function: the whole-function alternative, named exactly.
    Small models fail at exact-text edits far more often than at rewriting a short function."""
    if line is None or not path.endswith(".py"):
        return ""

    try:
        rows = definitions(text, path)
    except ToolError:
        return ""
    inside = [r for r in rows if r[0] != "class" and r[2] <= line <= r[3] and r[3] - r[2] < 80]
    if not inside:
        return ""
    kind, name, first, last, _ = max(inside, key=lambda r: r[2])
    return (f"\nOr rewrite the whole {kind} instead (lines {first}-{last}): replace_symbol with path={path!r}, "
            f"symbol={name!r} and new_source = its complete new code, from the def line to the end.")


def _nearest(text: str, old: str) -> tuple[str, int | None]:
    lines = text.splitlines()
    want = old.strip("\n").splitlines() or [old]
    size = len(want)
    best, best_at = 0.0, 0
    target = "\n".join(w.strip() for w in want)
    for start in range(max(1, len(lines) - size + 1)):
        window = "\n".join(w.strip() for w in lines[start:start + size])
        ratio = difflib.SequenceMatcher(None, window, target, autojunk=False).ratio()
        if ratio > best:
            best, best_at = ratio, start
    if best < 0.5:
        return "No similar lines found: read_file the area you mean to change, then copy its exact text.", None
    shown = "\n".join(f"{n + 1:>5}| {lines[n]}" for n in range(best_at, min(len(lines), best_at + size)))
    hint = ("They match except for whitespace or indentation: copy them exactly."
            if best > 0.98 else "Copy the exact current text from these lines into old_text.")
    return f"Did you mean these lines ({best:.0%} similar)?\n{shown}\n{hint}", best_at + 1


def _loose(line: str) -> str:
    """A line as a model tends to retype it: surrounding whitespace and quote style do not count."""
    return line.strip().replace('"', "'")


def _loose_edit(text: str, old_text: str, new_text: str, line: int | None) -> tuple[str, str, int] | None:
    """Apply the edit where old_text matches exactly one place once indentation and quote style are
    ignored (a small model's usual near miss). None when there is no such single place."""
    lines = text.splitlines(keepends=True)
    want = [_loose(w) for w in old_text.strip("\n").splitlines()]
    if not any(want):
        return None
    if len(want) == 1:  # a fragment of one line: quotes keep their length, so positions carry over
        starts = [n for n, got in enumerate(lines) if want[0] in _loose(got)]
    else:
        starts = [n for n in range(len(lines) - len(want) + 1)
                  if all(_loose(lines[n + k]) == w for k, w in enumerate(want))]
    if line is not None and len(starts) > 1:
        starts = [n for n in starts if n + 1 == line]
    if len(starts) != 1:
        return None
    at = starts[0]
    if len(want) == 1 and _loose(lines[at]) != want[0]:
        body = lines[at].rstrip("\r\n")
        indent = len(body) - len(body.lstrip())
        begin = indent + _loose(body).index(want[0])
        replaced = body[:begin] + new_text + body[begin + len(want[0]):] + lines[at][len(body):]
        return "".join(lines[:at]) + replaced + "".join(lines[at + 1:]), f"line {at + 1}", at + 1
    # whole lines: shift new_text by the difference between old_text's indentation and the file's,
    # but only when old_text kept the lines' relative indentation (else the shift would be a guess)
    olds = old_text.strip("\n").splitlines()
    first = next(k for k, row in enumerate(olds) if row.strip())
    shift = _indent(lines[at + first]) - _indent(olds[first])
    if any(row.strip() and _indent(lines[at + k]) - _indent(row) != shift for k, row in enumerate(olds)):
        return None
    moved = [(" " * shift + row if shift >= 0 else row[min(-shift, _indent(row)):]) if row.strip() else ""
             for row in new_text.strip("\n").splitlines()]
    ending = "\n" if lines[at + len(want) - 1].endswith("\n") else ""
    block = "\n".join(moved) + ending if moved else ""
    where = f"lines {at + 1}-{at + len(want)}" if len(want) > 1 else f"line {at + 1}"
    return "".join(lines[:at]) + block + "".join(lines[at + len(want):]), where, at + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def replace_in_file(ctx: Context, path: str, old_text: str, new_text: str, line: int | None = None) -> dict:
    if old_text == "":
        raise ToolError("old_text is empty: give the exact text to replace (use insert_lines or create_file to add)")
    file = resolve(ctx.root, path)
    text = read_text(file, path)
    note = ""
    if old_text not in text and (unescaped(old_text) or "\0") in text:
        old_text, new_text = unescaped(old_text), unescaped(new_text) or new_text
        note = " (old_text held \\n as two characters and no line break; it was read with line breaks)"
    elif text.count(old_text) == 1:
        at = text.find(old_text)
        before = text[text.rfind("\n", 0, at) + 1:at]
        new_text, note = as_meant(path, new_text, lambda new: text.replace(old_text, new),
                                  prefix=before if not before.strip() else "", tabs=_uses_tabs(text))
    count = text.count(old_text)
    if count == 0:
        loose = _loose_edit(text, old_text, new_text, line)
        if loose is not None:
            updated, where, at_line = loose
            return _or_rewrite(gated_write(ctx, file, path, text, updated, f"replace_in_file (old_text matched "
                                           f"{where} once the indentation and quote style were ignored)"),
                               path, text, at_line)
        adding = new_text.startswith(old_text) and len(new_text) > len(old_text)
        hint = ("\nTo add new code rather than change existing code: insert_lines (line="
                f"{len(text.splitlines()) + 1} appends at the end), or replace_symbol with the whole new "
                "definition, which adds a function or class that does not exist yet.") if adding else ""
        near, near_line = _nearest(text, old_text)
        return result(False, failure="edit_failed", error=(
            f"old_text was not found in {path}; nothing was written.\n{near}{hint}"
            f"{'' if adding else _rewrite_hint(path, text, near_line)}"))
    offsets, at = [], text.find(old_text)
    while at != -1:
        offsets.append(at)
        at = text.find(old_text, at + 1)
    starts = [text.count("\n", 0, at) + 1 for at in offsets]
    if count > 1 and line is None:
        return result(False, failure="edit_failed", error=(
            f"old_text occurs {count} times in {path} (at lines {', '.join(map(str, starts))}); nothing was "
            "written. Give line (one of those numbers) to pick one, or include more surrounding lines in old_text "
            "so it matches exactly once."))
    if count == 1:
        line = None  # the text itself is unambiguous; a line number that is off by a few must not block it
    if line is not None and line not in starts:
        return result(False, failure="edit_failed", error=(
            f"old_text does not start on line {line} of {path}; it starts on line(s) "
            f"{', '.join(map(str, starts))}. Nothing was written."))
    at = offsets[starts.index(line)] if line is not None else offsets[0]
    updated = text[:at] + new_text + text[at + len(old_text):]
    return _or_rewrite(gated_write(ctx, file, path, text, updated, "replace_in_file" + note), path, text,
                       text.count("\n", 0, at) + 1)


def _or_rewrite(outcome: dict, path: str, text: str, line: int) -> dict:
    """A rolled-back edit also names the whole-function alternative."""
    if not outcome["success"]:
        outcome["error"] += _rewrite_hint(path, text, line)
    return outcome


def insert_lines(ctx: Context, path: str, line: int, text: str) -> dict:
    file = resolve(ctx.root, path)
    current = read_text(file, path)
    lines = current.splitlines(keepends=True)
    if not 1 <= line <= len(lines) + 1:
        raise ToolError(f"line must be between 1 and {len(lines) + 1} for {path} (it has {len(lines)} lines)")
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    def build(block: str) -> str:
        block = block if block.endswith("\n") else block + "\n"
        return "".join(lines[:line - 1] + [block] + lines[line - 1:])

    text, note = as_meant(path, text, build, tabs=_uses_tabs(current))
    return gated_write(ctx, file, path, current, build(text), f"insert at line {line}{note}")


def create_file(ctx: Context, path: str, content: str, overwrite: bool = False) -> dict:
    file = resolve(ctx.root, path, must_exist=False)
    if file.is_dir():
        raise ToolError(f"{path} is a directory")
    before = None
    if file.exists():
        if not overwrite:
            raise ToolError(f"{path} already exists; use replace_in_file to change it, or overwrite=true")
        before = read_text(file, path)
    content, note = as_meant(path, content, lambda new: new)
    return gated_write(ctx, file, path, before, content, "create_file" + note)


def delete_file(ctx: Context, path: str) -> dict:
    file = resolve(ctx.root, path)
    file.unlink()
    return result(True, f"deleted {path}")
