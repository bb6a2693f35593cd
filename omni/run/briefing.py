"""The briefing: what omni looks up before the first step, so the model starts from the code the goal
names and the tests that already fail, instead of spending its first steps finding them. On a small
local model each step costs tens of seconds of prompt processing, so this is where runs are won.

Everything is looked up through the sandbox's own read-only tools; nothing here changes the workspace.
"""

from __future__ import annotations

import json
from collections import Counter

from omni.box.toolbox import details
from omni.goal.reading import GoalReading, shared_words
from omni.protocols import Sandbox

MAX_SYMBOLS = 4
MAX_CODE_LINES = 160
MAX_TEST_LINES = 30
OUTLINE_LINES = 40

MAX_RELATED = 2


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


def _candidates(name: str) -> list[str]:
    """'parse.parse' may be module.function or Class.method: try the dotted name, then shorter tails."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _defining_files(sandbox: Sandbox, names: list[str]) -> dict[str, list[str]]:
    """For each name's last part, the files that define it: one search over the repository, so that
    read_symbol then reads one file instead of scanning every Python file once per name."""
    lasts = sorted({name.rsplit(".", 1)[-1] for name in names})
    if not lasts:
        return {}
    ran = sandbox.run_tool("find_definitions", {"names": lasts}, 60)
    found: dict[str, list[str]] = {}
    for hit in details("find_definitions", ran).found if ran.success else []:
        if hit.path not in found.setdefault(hit.name, []):
            found[hit.name].append(hit.path)
    return found


def related_definitions(sandbox: Sandbox, reading: GoalReading) -> list[tuple[str, str]]:
    """(file, name) of at most MAX_RELATED definitions outside the tests whose names share a word with
    the goal, rarest words first: a report of the symptom ("sizes with a decimal point are cut") often names the
    function (`parse_decimal_size`) without meaning to."""
    words = reading.plain
    if not words:
        return []
    ran = sandbox.run_tool("find_definitions", {"containing": sorted(words), "max_results": 2000}, 60)
    found = []
    for hit in details("find_definitions", ran).found if ran.success else []:
        shared = shared_words(hit.name, words)
        if shared and "test" not in hit.path.lower() and (hit.path, hit.name) not in {f[:2] for f in found}:
            found.append((hit.path, hit.name, shared))
    uses = Counter(word for _, _, shared in found for word in shared)
    scored = sorted(found, key=lambda item: -sum(1 / uses[word] for word in item[2]))
    return [(path, name) for path, name, shared in scored
            if sum(1 / uses[word] for word in shared) >= 0.5][:MAX_RELATED]


def named_code(sandbox: Sandbox, reading: GoalReading, files: list[str]) -> str:
    """The definitions the goal names (best match each), and the outline of files it names."""
    names = list(reading.symbols)[:MAX_SYMBOLS * 2]
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
    for path, name in related_definitions(sandbox, reading):
        result = sandbox.run_tool("read_symbol", {"symbol": name, "path": path}, 60)
        best = details("read_symbol", result).blocks[0] if result.success else ""
        if best and best not in seen and used < MAX_CODE_LINES:
            seen.add(best)
            block = best.splitlines()[:MAX_CODE_LINES - used]
            used += len(block)
            related.append("\n".join(block))
            covered_files.add(path)
    for path in reading.files_in(set(files)):
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
