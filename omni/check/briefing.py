"""The briefing: what omni looks up before the first step, so the model starts from the code the goal
names and the tests that already fail, instead of spending its first steps finding them. On a small
local model each step costs tens of seconds of prompt processing, so this is where runs are won.

Everything is looked up through the sandbox's own read-only tools; nothing here changes the workspace.
"""

from __future__ import annotations

import builtins
import json
import keyword
import re
from collections import Counter

from omni.box.toolbox import details
from omni.protocols import Sandbox

MAX_SYMBOLS = 4
MAX_CODE_LINES = 160
MAX_TEST_LINES = 30
OUTLINE_LINES = 40

_FILE = re.compile(r"(?<![\w/.-])([\w./-]+\.(?:py|pyi))\b")
_NAME = re.compile(r"`?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(`|\()?")
_COMMON = set(dir(builtins)) | set(keyword.kwlist)
_EXTENSIONS = {"txt", "md", "rst", "json", "toml", "cfg", "ini", "yaml", "yml", "csv", "html", "com", "org"}
MAX_RELATED = 2
# Words of a bug report that say nothing about where the code is.
_PLAIN = set("""about after again also always anymore back because been before being both but call called calls
code does doesn doing done each either else even every example expected fail fails file fine first from gets
give gives given goes going have having here instead into just like line lines make more most must need never
next number only other returns right same says should since some still than that their them then there these
they this those through under until using value want when where which while whole will with without work works
would wrong""".split())


def goal_files(goal: str, files: set[str]) -> list[str]:
    """Paths the goal names (a bare name that matches one listed file becomes that file's path)."""
    found = []
    for path in _FILE.findall(goal):
        path = path.removeprefix("./")
        same = [f for f in files if f.endswith("/" + path)]
        found.append(same[0] if path not in files and len(same) == 1 else path)  # else tried as written
    return list(dict.fromkeys(found))


def goal_symbols(goal: str) -> list[str]:
    """Names in the goal that look like code: snake_case, CamelCase, dotted, called, or in backticks."""
    names = []
    text = _FILE.sub(" ", goal)
    for match in _NAME.finditer(text):
        name, after = match.group(1), match.group(2)
        last = name.rsplit(".", 1)[-1]
        looks_like_code = ("_" in last.strip("_") or re.search(r"[a-z][A-Z]", last) or "." in name
                           or after is not None or match.group(0).startswith("`"))
        if looks_like_code and last not in _COMMON and last not in _EXTENSIONS and len(last) > 2:
            names.append(name)
    return list(dict.fromkeys(names))


def _candidates(name: str) -> list[str]:
    """'parse.parse' may be module.function or Class.method: try the dotted name, then shorter tails."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


MAX_OFFERED_TESTS = 5


def failing_tests(failing: list[str], test_report: str, unrelated: list[str] = ()) -> str:
    """The tests that fail before any change and that the goal is about, with their messages (from the gate's
    baseline run); and those that fail too but are not the goal's, named so the model leaves them alone."""
    if not failing and not unrelated:
        return ""
    lines = test_report.splitlines()
    shown = "\n".join(lines[:MAX_TEST_LINES])
    if len(lines) > MAX_TEST_LINES:
        shown += f"\n[{len(lines) - MAX_TEST_LINES} more lines of the test report not shown]"
    aside = ("\n\nTests that fail too, before any change, and are not what the goal is about (leave them as they "
             f"are):\n{', '.join(unrelated[:MAX_OFFERED_TESTS])}" if unrelated else "")
    if not failing:
        return aside.lstrip("\n")
    offer = json.dumps(failing[:MAX_OFFERED_TESTS])  # a value the model can use as it is, not an example to copy
    return ("Tests that fail before any change; the goal is about them, and they must pass at the end:\n" + shown
            + f"\nTo run only these: run_tests with selection={offer}" + aside)


def _defining_files(sandbox: Sandbox, names: list[str]) -> dict[str, list[str]]:
    """For each name's last part, the files that define it: one search over the repository, so that
    read_symbol then reads one file instead of scanning every Python file once per name."""
    lasts = sorted({name.rsplit(".", 1)[-1] for name in names})
    if not lasts:
        return {}
    pattern = rf"^\s*(async\s+)?(def|class)\s+({'|'.join(lasts)})\b"
    result = sandbox.run_tool("search", {"pattern": pattern, "glob": "*.py", "max_results": 1000}, 60)
    found: dict[str, list[str]] = {}
    for hit in details("search", result).matches if result.success else []:
        name = defined_name(hit.text)
        if name and hit.path not in found.setdefault(name, []):
            found[name].append(hit.path)
    return found


def defined_name(code: str) -> str:
    """The name a `def` or `class` line of source code defines ('' for other lines)."""
    match = re.match(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)", code)
    return match[1] if match else ""


def goal_words(goal: str) -> set[str]:
    """The goal's plain words (4 letters or more), each also without a plural or past ending: "Slices"
    gives slices and slice, "negated" gives negate."""
    words = set()
    for word in re.findall(r"[A-Za-z]{4,}", _FILE.sub(" ", goal)):
        word = word.lower()
        if word in _PLAIN:
            continue
        words.add(word)
        for ending in ("es", "s", "d", "ed", "ing"):
            if word.endswith(ending) and len(word) - len(ending) >= 4:
                words.add(word[:-len(ending)])
    return words - _PLAIN


def name_words(name: str) -> set[str]:
    return {part.lower() for part in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name) if part}


def related_definitions(sandbox: Sandbox, goal: str) -> list[tuple[str, str]]:
    """(file, name) of at most MAX_RELATED definitions outside the tests whose names share a word with
    the goal, rarest words first: a report of the symptom ("labels that end with a hyphen") often names the
    function ("check_hyphen_ok") without meaning to."""
    words = goal_words(goal)
    if not words:
        return []
    pattern = rf"^\s*(async\s+)?(def|class)\s+\w*({'|'.join(sorted(words))})"
    result = sandbox.run_tool("search", {"pattern": pattern, "glob": "*.py", "ignore_case": True,
                                         "max_results": 2000}, 60)
    found = []
    for hit in details("search", result).matches if result.success else []:
        name = defined_name(hit.text)
        shared = name_words(name) & words if name else set()
        if shared and "test" not in hit.path.lower() and (hit.path, name) not in {f[:2] for f in found}:
            found.append((hit.path, name, shared))
    uses = Counter(word for _, _, shared in found for word in shared)
    scored = sorted(found, key=lambda item: -sum(1 / uses[word] for word in item[2]))
    return [(path, name) for path, name, shared in scored
            if sum(1 / uses[word] for word in shared) >= 0.5][:MAX_RELATED]


def named_code(sandbox: Sandbox, goal: str, files: list[str]) -> str:
    """The definitions the goal names (best match each), and the outline of files it names."""
    names = goal_symbols(goal)[:MAX_SYMBOLS * 2]
    defined = _defining_files(sandbox, names)
    code, used, covered_files, seen = [], 0, set(), set()
    for name in names:
        where = defined.get(name.rsplit(".", 1)[-1])
        if not where:
            continue  # not defined anywhere (a feature to add, or prose): nothing to show
        if len(seen) >= MAX_SYMBOLS or used >= MAX_CODE_LINES:
            break
        for candidate in _candidates(name):
            result = sandbox.run_tool("read_symbol", {"symbol": candidate,
                                                      "path": where[0] if len(where) == 1 else "."}, 60)
            if result.success:
                best = details("read_symbol", result).blocks[0]  # the best match only
                if best not in seen:
                    seen.add(best)
                    block = best.splitlines()[:MAX_CODE_LINES - used]
                    used += len(block)
                    code.append("\n".join(block))
                    covered_files.add(details("read_symbol", result).locations[0].split(":")[0])
                break
    related = []
    for path, name in related_definitions(sandbox, goal):
        result = sandbox.run_tool("read_symbol", {"symbol": name, "path": path}, 60)
        best = details("read_symbol", result).blocks[0] if result.success else ""
        if best and best not in seen and used < MAX_CODE_LINES:
            seen.add(best)
            block = best.splitlines()[:MAX_CODE_LINES - used]
            used += len(block)
            related.append("\n".join(block))
            covered_files.add(path)
    for path in goal_files(goal, set(files)):
        if path not in covered_files:  # a file the goal names, but no code from it yet: its outline
            result = sandbox.run_tool("outline", {"path": path}, 60)
            if result.success:
                lines = result.output.splitlines()
                code.append("\n".join(lines[:OUTLINE_LINES])
                            + (f"\n[{len(lines) - OUTLINE_LINES} more definitions]" if len(lines) > OUTLINE_LINES
                               else ""))
    parts = []
    if code:
        parts.append("Code the goal names (looked up for you; read more only if you need it):\n\n" + "\n\n".join(code))
    if related:
        parts.append("Code whose names share a word with the goal (the problem may be here):\n\n"
                     + "\n\n".join(related))
    return "\n\n".join(parts)
