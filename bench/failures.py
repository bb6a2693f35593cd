"""How an unresolved omni run failed, read from its record (events.jsonl) and the task's own bug patch, so that a
run's table says it for every task and nobody has to read the check half's records by hand to find out.

The definitions the bug patch touched are the right targets. What omni tried is every definition its own repair
rounds opened on (`opening` and `rung` events) and every definition a model edit changed (an edit observation's
`details.symbols`); where the bug's definitions stood in the failing tests' spectrum is said beside it
(`spectrum_rank`), and the values omni's rounds tried, a table or a constant a definition reads
(`value_rounds`). The first of these that holds, in this order, names the failure:

  finished, graded wrong   omni accepted its own work, and the task's tests did not (the run's check was too weak)
  no check                 the run had nothing to try fixes against: no failing test, no example, no reproduction
  no target                no repair round was opened and no model edit changed a definition
  wrong target             what omni tried never included a definition the bug touched
  broke tests              on a right target a candidate passed the check, and every one that passed broke tests
  no passing candidate     on a right target candidates were tried and none passed the check
  not accepted             on a right target a candidate passed the check and broke no test, and the run did not
                           finish with it (the gate sent it back, and the time ran out)
  wrong edit               a right target was changed by the model's own edits only, and not into a fix
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from omni.repair.localize import is_test_file

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def bug_definitions(patch: str, repo: Path, rev: str = "HEAD") -> list[str]:
    """'path:Qual.name' of the innermost definitions holding the lines the bug patch wrote (or, where a hunk only
    removed lines, the line after them), read from the code at `rev` (the commit the agent starts from); '<module>'
    outside any. Test files are left out."""
    found: dict[str, None] = {}
    for path, lines in _changed_lines(patch).items():
        if not path.endswith(".py") or is_test_file(path):  # the grader restores test files: not a place to fix
            continue
        source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True, text=True).stdout
        spans = _definitions(source)
        for line, gap in lines:  # a gap (lines removed before `line`) is inside what holds both of its sides
            inside = [(start, end, name) for start, end, name in spans if start <= line - gap and line <= end]
            name = max(inside)[2] if inside else "<module>"  # the innermost: the one that starts last
            found[f"{path}:{name}"] = None
    return list(found)


def _changed_lines(patch: str) -> dict[str, list[tuple[int, bool]]]:
    """Per file, (line, False) for each new-side line the patch added, and (the line after, True) where a run of
    lines was removed with nothing added in its place. A hunk's header says how many lines it holds, so its lines
    are never read as a file's header."""
    lines: dict[str, list[tuple[int, bool]]] = {}
    path, number, old_left, new_left, removed, wrote = None, 0, 0, 0, False, False
    for text in patch.splitlines() + [""]:
        if (old_left or new_left) and text[:1] in "+-\\":
            if text.startswith("+"):
                lines[path].append((number, False))
                number, new_left, wrote = number + 1, new_left - 1, True
            elif text.startswith("-"):
                old_left, removed = old_left - 1, True
            continue
        if removed and not wrote:  # a run of removals ended with nothing written in its place
            lines[path].append((number, True))
        removed = wrote = False
        if old_left or new_left:  # a context line
            number, old_left, new_left = number + 1, old_left - 1, new_left - 1
        elif text.startswith("+++ "):
            path = text[4:].removeprefix("b/").strip()
            lines.setdefault(path, [])
        elif (hunk := HUNK.match(text)) and path:
            number, old_left, new_left = int(hunk.group(3)), int(hunk.group(2) or 1), int(hunk.group(4) or 1)
    return {p: sorted(set(n)) for p, n in lines.items()}


def _definitions(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and class, decorators included."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    spans = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((first, child.end_lineno or first, prefix + child.name))
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def same_definition(tried: str, right: str) -> bool:
    """Whether omni's 'path:symbol' names the bug's 'path:Qual.name': the same file, and the same name, a definition
    that holds it (a class around the method, an outer function around a nested one), or the name without its
    class. A bug at a module's top level (a removed function, a constant) is met by anything in that file."""
    tried_path, _, tried_name = tried.partition(":")
    right_path, _, right_name = right.partition(":")
    if tried_path.removeprefix("./") != right_path.removeprefix("./"):
        return False
    if right_name == "<module>":
        return True
    a, b = tried_name.split("."), right_name.split(".")
    return a == b[:len(a)] or a == b[-len(a):]


def classify(events: list[dict], right: list[str], status: str) -> dict:
    """The failure's kind and the facts it rests on (see the module's docstring for the kinds)."""
    check = next((e for e in events if e.get("kind") == "check"), None)
    rounds = [f"{e['path']}:{e['symbol']}" for e in events if e.get("kind") in ("opening", "rung")]
    edited = [f"{action.get('args', {}).get('path', '')}:{name}" for action, names in _edits(events)
              for name in names]
    tried = list(dict.fromkeys(rounds + edited))
    on_right = [t for t in tried if any(same_definition(t, r) for r in right)]
    candidates = [e for e in events if e.get("kind") == "candidate"
                  and any(same_definition(e.get("target", ""), r) for r in right)]
    passing = [c for c in candidates if c.get("passes")]
    facts = {"check": check.get("source") if check else None, "right": right, "tried": tried[:6],
             "candidates_on_right": len(candidates), "passing_on_right": len(passing), "ended": status,
             "spectrum_rank": spectrum_rank(events, right),
             "value_rounds": [f"{e['path']}:{e['symbol']}" for e in events
                              if e.get("kind") in ("opening", "rung") and e.get("reader")]}
    if status == "finished":
        kind = "finished, graded wrong"
    elif not check or check.get("source") == "none":
        kind = "no check"
    elif not tried:
        kind = "no target"
    elif not on_right:
        kind = "wrong target"
    elif passing and all(c.get("breaks") for c in passing):
        kind = "broke tests"
    elif candidates and not passing:
        kind = "no passing candidate"
    elif any(not c.get("breaks") for c in passing):
        kind = "not accepted"
    else:
        kind = "wrong edit"
    return {"kind": kind, **facts}


def spectrum_rank(events: list[dict], right: list[str]) -> int | None:
    """Where the first of the bug's definitions stood in the run's spectrum (`spectrum` event: the failing tests'
    ranking, best first, from 1); 0 when the spectrum ranked others only; None when the run made none."""
    ranking = next((e.get("suspects", []) for e in events if e.get("kind") == "spectrum"), None)
    if ranking is None:
        return None
    return next((n for n, s in enumerate(ranking, 1)
                 if any(same_definition(f"{s['path']}:{s['symbol']}", r) for r in right)), 0)


def _edits(events: list[dict]) -> list[tuple[dict, list[str]]]:
    """(action, changed definitions) of each edit that succeeded and changed a Python definition."""
    actions = {e.get("n"): e for e in events if e.get("kind") == "action"}
    pairs = []
    for e in events:
        details = e.get("details") if e.get("kind") == "observation" and e.get("success") else None
        if isinstance(details, dict) and details.get("symbols") and e.get("n") in actions:
            pairs.append((actions[e["n"]], details["symbols"]))
    return pairs
