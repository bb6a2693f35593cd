"""Missing lines: candidates that add a statement or two to a definition instead of rewriting it. A fault that is
a statement left out (a guard, an early return, a step of a computation) is what whole rewrites of a 1.5B model fix
least: asked for 40 lines, it writes the 40 it was shown. Asked where lines are missing and which, it writes only
those and a line number; the candidate is the definition with them added after that line. The lines go in at that
line's indentation, and at the next line's as well when it differs (the line opens or closes a block): both are
tried. Verified repair asks once a definition, after its first round of rewrites and one-change candidates found no
fix (omni/repair/verified.py), with --missing-lines: off until a run shows it helps. Asked on the one tune task whose
fault is a deleted guard, the 1.5B model wrote the upstream lines in none of 16 replies (bench/README.md, run BV)."""

from __future__ import annotations

import re
import textwrap

from omni.model.textmode import code_of
from omni.model.usage import UsageMeter
from omni.protocols import Model
from omni.repair.rewritten import indent_of, parses

AFTER = re.compile(r"after\s+line\s+(\d+)", re.IGNORECASE)
NUMBERED = re.compile(r"^\s*\d+\| ?")  # a line copied with its number
SAID = re.compile(r"^\W*after\s+line\s+\d+\W*$", re.IGNORECASE)  # where they go, written inside the code block
_HEADS = ("def ", "async def ", "class ", "@")


def lines_added(model: Model, meter: UsageMeter, messages: list[dict], source: str, k: int,
                temperature: float) -> tuple[list[str], str]:
    """One round: k samples of the request messages (the prompt propose_lines), each reply's candidates, and how
    they were asked."""
    replies, _ = model.samples(messages, k, temperature)
    for reply in replies:
        meter.count(reply.usage, "candidates")
    return [code for reply in replies for code in inserted(source, reply.text)], "lines added"


def numbered(source: str) -> str:
    """The definition's lines, each with its number (from 1), as the prompt shows them."""
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}}| {line}" for n, line in enumerate(lines, 1))


def inserted(source: str, reply: str) -> list[str]:
    """The definition source with a reply's lines added after the line of source the reply names ("after line N",
    or the lines it repeats: _in_context), at each indentation they may take; a reply that is a whole definition, as
    it is. None when the reply names no line of the definition or has no code, or the result does not parse."""
    code, found = code_of(reply), AFTER.search(reply)
    new = [line for line in code.splitlines() if not SAID.match(line)]
    if new and all(NUMBERED.match(line) for line in new if line.strip()):
        new = [NUMBERED.sub("", line) for line in new]
    if new and new[0].lstrip().startswith(_HEADS):
        return [code] if parses(code) else []
    lines = source.splitlines()
    after, added = _in_context(lines, int(found.group(1)) if found else 0,
                               textwrap.dedent("\n".join(new)).strip("\n").splitlines())
    if not added or not 1 <= after <= len(lines):
        return []
    following = next((line for line in lines[after:] if line.strip()), "")
    found_texts: list[str] = []
    for indent in dict.fromkeys([indent_of(lines[after - 1]), indent_of(following)]):
        text = "\n".join([*lines[:after], *(indent + line if line.strip() else "" for line in added),
                          *lines[after:]])
        if indent and parses(text) and text not in found_texts:
            found_texts.append(text)
    return found_texts


def _in_context(lines: list[str], after: int, added: list[str]) -> tuple[int, list[str]]:
    """Where the added lines go (after which line of lines, from 1) and which they are, when a reply repeats lines of
    the definition around its new ones (a small model often copies the line they follow, and the one after it):
    leading lines that are the definition's, in order, from one it has once, say where the rest go, whatever line
    the reply named; trailing ones that repeat what follows them are dropped."""
    stripped = [line.strip() for line in lines]
    if len(added) > 1 and added[0].strip() and stripped.count(added[0].strip()) == 1:
        at, lead = stripped.index(added[0].strip()), 1
        while lead < len(added) - 1 and stripped[at + lead:at + lead + 1] == [added[lead].strip()]:
            lead += 1
        after, added = at + lead, textwrap.dedent("\n".join(added[lead:])).splitlines()
    following = stripped[after:]
    trail = next((t for t in range(min(len(added) - 1, len(following)), 0, -1)
                  if [line.strip() for line in added[-t:]] == following[:t]), 0)
    return after, added[:len(added) - trail]
