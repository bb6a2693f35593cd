"""Find and read: list_files, find_files, search, read_file."""

from __future__ import annotations

import fnmatch
import os
import re

from context import Context, result
from workspace import ToolError, read_text, resolve

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".omni"}
READ_PAGE_LINES = 100  # as SWE-agent's window: on a CPU model every line read costs prompt time


def all_files(ctx: Context, base: str) -> list[str]:
    """Files under base, relative to the root, honouring .gitignore (ripgrep, or git, or a walk)."""
    if ctx.has("rg"):
        done = ctx.run(["rg", "--files", "--hidden", "-g", "!.git", "--", base], timeout=60)
        if done.exit_code in (0, 1):
            return sorted(line.removeprefix("./") for line in done.output.splitlines() if line)
    done = ctx.run(["git", "ls-files", "-co", "--exclude-standard", "--", base], timeout=60)
    if done.exit_code == 0:
        return sorted(line for line in done.output.splitlines() if line)
    found = []
    for dirpath, dirnames, filenames in os.walk(ctx.root / base):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        rel = os.path.relpath(dirpath, ctx.root)
        found += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
    return sorted(found)


def list_files(ctx: Context, path: str = ".", max_results: int = 200) -> dict:
    resolve(ctx.root, path, kind="dir")
    files = all_files(ctx, path)
    shown = files[:max_results]
    more = len(files) - len(shown)
    text = "\n".join(shown) or "(no files)"
    if more:
        text += f"\n[{more} more files not shown; pass a subdirectory as path to narrow]"
    return result(True, text, total=len(files), files=shown)


def _text_instead(ctx: Context, pattern: str, path: str, why: str) -> dict | None:
    """What a model that used find_files to look for text meant: the lines containing it."""
    word = pattern.strip("*")
    inside = search(ctx, re.escape(word), path, max_results=20) if word else None
    if inside and inside["details"].get("total"):
        return result(True, f"{why} find_files matches file names; these are the lines containing {word!r} "
                      f"(the search tool finds text inside files):\n{inside['output']}", total=0)
    return None


def find_files(ctx: Context, pattern: str, path: str = ".", max_results: int = 200) -> dict:
    if resolve(ctx.root, path, kind="any").is_file():
        found = _text_instead(ctx, pattern, path, f"{path} is a file, not a directory.")
        if found:
            return found
        raise ToolError(f"{path} is a file, not a directory, and {pattern!r} does not occur in it")
    files = all_files(ctx, path)
    glob = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"  # a bare word matches a part
    hits = [f for f in files if fnmatch.fnmatch(f, glob) or fnmatch.fnmatch(os.path.basename(f), glob)]
    if not hits:
        found = _text_instead(ctx, pattern, path, f"No file name matches {pattern!r} under {path}.")
        if found:
            return found
        return result(False, error=f"no file name matches {pattern!r} under {path}. Use list_files to see the "
                      "layout.", failure="tool_error")
    more = len(hits) - max_results
    text = "\n".join(hits[:max_results]) + (f"\n[{more} more matches not shown]" if more > 0 else "")
    return result(True, text, total=len(hits))


def search(ctx: Context, pattern: str, path: str = ".", glob: str | None = None,
           ignore_case: bool = False, max_results: int = 50) -> dict:
    if not pattern:
        raise ToolError("pattern is empty: give a regular expression to search for")
    resolve(ctx.root, path, kind="any")
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}. Escape special characters "
                        "such as ( [ . * with a backslash.") from exc
    if ctx.has("rg"):
        argv = ["rg", "--line-number", "--with-filename", "--no-heading", "--color", "never", "--hidden", "-g", "!.git",
                "--max-columns", "300", "--max-columns-preview"]
        if ignore_case:
            argv.append("-i")
        if glob:
            argv += ["-g", glob]
        done = ctx.run(argv + ["-e", pattern, "--", path], timeout=60)
        if done.exit_code not in (0, 1):
            return result(False, error=done.output.strip(), failure="tool_error", exit_code=done.exit_code)
        lines = [line.removeprefix("./") for line in done.output.splitlines() if line]
    else:
        lines = []
        for rel in all_files(ctx, path):
            if glob and not (fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(os.path.basename(rel), glob)):
                continue
            try:
                text = read_text(ctx.root / rel, rel)
            except (ToolError, OSError):
                continue
            lines += [f"{rel}:{n}:{line[:300]}" for n, line in enumerate(text.splitlines(), 1)
                      if regex.search(line)]
    if not lines:
        return result(True, f"no matches for {pattern!r} under {path}", total=0, matches=[])
    shown = lines[:max_results]
    text = "\n".join(shown)
    if len(lines) > len(shown):
        text += (f"\n[{len(lines) - len(shown)} more matches not shown; narrow with path, glob "
                 "or a more specific pattern]")
    return result(True, text, total=len(lines), matches=[_match(line) for line in shown])


_DEFINES = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")
_ASSIGNS = re.compile(r"^(\w+)\s*[:=]")


def find_definitions(ctx: Context, names: list[str] = (), containing: list[str] = (),
                     kinds: list[str] = ("def", "class"), max_results: int = 1000) -> dict:
    """One search for the definition lines of names (exact) or of names containing words; each hit read here, in
    the sandbox, into fields: its name, its kind, and whether it is top-level."""
    wanted = [re.escape(n) for n in names if n]
    parts = [rf"({'|'.join(wanted)})\b"] if wanted else []
    parts += [rf"\w*({'|'.join(re.escape(w) for w in containing if w)})\w*\b"] if any(containing) else []
    if not parts:
        return result(True, "no names given", found=[])
    named = "|".join(f"(?:{p})" for p in parts)
    patterns = []
    if {"def", "class"} & set(kinds):
        patterns.append(rf"^\s*(async\s+)?({'|'.join(k for k in kinds if k != 'assign')})\s+(?:{named})")
    if "assign" in kinds:
        patterns.append(rf"^(?:{named})\s*[:=]")
    hits = search(ctx, "|".join(f"(?:{p})" for p in patterns), glob="*.py", ignore_case=bool(containing),
                  max_results=max_results)
    found = []
    for hit in hits["details"].get("matches", []):
        if defined := _DEFINES.match(hit["text"]):
            found.append({"path": hit["path"], "line": hit["line"], "name": defined[3], "kind": defined[2],
                          "top_level": not defined[1]})
        elif assigned := _ASSIGNS.match(hit["text"]):
            found.append({"path": hit["path"], "line": hit["line"], "name": assigned[1], "kind": "assign",
                          "top_level": True})
    return result(True, f"{len(found)} definition(s)", found=found)


def _match(line: str) -> dict:
    """One 'path:line:text' line of this tool's own output, as fields."""
    path, number, text = (line.split(":", 2) + ["", ""])[:3]
    return {"path": path, "line": int(number) if number.isdigit() else 0, "text": text}


def read_file(ctx: Context, path: str, start_line: int = 1, end_line: int | None = None) -> dict:
    if resolve(ctx.root, path, kind="any").is_dir():  # what a model reading "." wants: what is there
        listed = list_files(ctx, path)
        return result(True, f"{path} is a directory; its files:\n{listed['output']}", **listed["details"])
    file = resolve(ctx.root, path)
    size = file.stat().st_size
    if size > 50 * 1024 * 1024:
        raise ToolError(f"{path} is {size} bytes; too large to read. Use search to find the lines you need.")
    data = file.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{path} is a binary file ({size} bytes); it cannot be read as text")
    lines = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace").splitlines()
    total = len(lines)
    if start_line < 1:
        raise ToolError("start_line counts from 1")
    if total == 0:
        return result(True, f"{path} is empty", total_lines=0)
    if start_line > total:
        raise ToolError(f"{path} has only {total} lines; start_line {start_line} is past the end")
    if end_line is not None and end_line < start_line:
        raise ToolError(f"end_line {end_line} is before start_line {start_line}")
    wanted = min(total, end_line or total)
    last = min(wanted, start_line + READ_PAGE_LINES - 1)  # an explicit range is paged too
    body = numbered(lines, start_line, last)
    if last < wanted:
        body += f"\n[lines {last + 1}-{wanted} not shown ({READ_PAGE_LINES} lines per read); " \
                f"read on with start_line={last + 1}]"
    return result(True, body, total_lines=total, next_start_line=last + 1 if last < wanted else None,
                  text="".join(line + "\n" for line in lines[start_line - 1:last]))


def numbered(lines: list[str], first: int, last: int) -> str:
    """Lines first..last (counting from 1) with right-aligned line numbers, as read_file shows them."""
    width = len(str(last))
    return "\n".join(f"{n:>{width}}| {lines[n - 1]}" for n in range(first, last + 1))
