"""spectrum: where the failing tests go that the passing ones do not (spectrum-based fault localization). The
failing tests, the other tests of their files and the test files of the code they ran (_passing_side) run under a
line tracer (spectrum_run.py, in the project's Python; what pytest's own report of a failed assert runs, a __repr__
and all it calls, is left out); each line of the project's own code gets the Ochiai score
ef / sqrt(F * (ef + ep)), where ef and ep are the failing and passing tests that ran it and F all failing ones; a
definition scores as its best line (its `lines`, the equally best), and among equals the one more of whose lines
passing tests run goes first; its other lines the failing tests ran follow as `ran`, in tiers of equal score.
It needs no word of the goal: the tests say where to look. Where no test fails and the goal's examples do, the
examples are the failing side, run as a test file of their own."""

from __future__ import annotations

import ast
import json
import math
import os
import tempfile
from collections import Counter
from contextlib import contextmanager

from context import Context, result
from testmap import test_files, tests_importing
from workspace import ToolError, resolve

TIMEOUT = 240  # tracing slows tests several times
TOP = 8
MAX_MORE = 8  # test files of the code the failing tests ran, traced as the passing side
MAX_TIERS = 12  # of a suspect's other lines the failing tests ran, in tiers of equal score (its `ran`)


def spectrum(ctx: Context, failing: list[str] | None = None, passing: list[str] | None = None,
             examples: list[dict] | None = None) -> dict:
    failing = list(failing or [])
    for item in [*failing, *(passing or [])]:
        resolve(ctx.root, item.split("::")[0], kind="any")
    if not failing:
        if not examples:
            raise ToolError("give failing tests, or examples that do not hold")
        with _examples_as_tests(ctx, examples) as path:
            return spectrum(ctx, [path], passing)
    files = list(dict.fromkeys(t.split("::")[0] for t in failing)) if passing is None else list(passing)
    named = set(failing)  # the failing side is the tests asked about; other tests that fail count on neither side

    def asked(found: dict[str, dict]) -> dict[str, dict]:
        return {t: r for t, r in found.items() if not r["failed"] or t in named or t.split("::")[0] in named}

    runs = asked(_traced(ctx, files + [t for t in failing if t.split("::")[0] not in files]))
    if passing is None:  # and the tests of the code the failing ones ran (a reproduction test's file has no other)
        more = _passing_side(ctx, [r["lines"] for r in runs.values() if r["failed"]], files)
        runs |= asked(_traced(ctx, more)) if more else {}
    failed = [t for t, r in runs.items() if r["failed"]]
    if not failed:
        return result(False, error=f"no test failed under the tracer ({len(runs)} ran)", failure="tests_failed",
                      suspects=[], failed=0, passed=len(runs))
    ef, ep = Counter(), Counter()
    for run in runs.values():
        (ef if run["failed"] else ep).update((path, line) for path, line in run["lines"])
    scores = {key: ef[key] / math.sqrt(len(failed) * (ef[key] + ep[key])) for key in ef}
    suspects = _definitions(ctx, scores, ep)[:TOP]
    text = "\n".join(f"{s['score']:.2f} {s['path']}:{s['symbol']} (lines {', '.join(map(str, s['lines']))})"
                     for s in suspects)
    return result(True, text or "the failing tests ran no line of the project's own code", suspects=suspects,
                  failed=len(failed), passed=len(runs) - len(failed))


def _passing_side(ctx: Context, failed: list[list], files: list[str]) -> list[str]:
    """The test files of the code the failing tests ran (failed: each failing test's lines): the first three of each
    module they ran, in file order, not those of `files`, at most MAX_MORE. Choosing those that name the most of the
    definitions the failing tests ran instead lifted the bug's definition on six tune and dev tasks and lowered it on
    one of the check half, and a tune task's fault, a comparison key that every version test runs, fell out of the
    ranking and its run failed (bench/README.md, runs CW and CX): kept as it was."""
    ran, tests = sorted({path for run in failed for path, _ in run}), test_files(ctx)
    return list(dict.fromkeys(t for path in ran for t in tests_importing(ctx, path, 3, tests)
                              if t not in files))[:MAX_MORE]


@contextmanager
def _examples_as_tests(ctx: Context, examples: list[dict]):
    """The goal's examples as a test file of their own (one test each, `expression == expected`, evaluated as the
    examples check does), in the workspace's .omni/check/ folder for as long as the tracer runs: a check made only
    of examples has no failing test, and the spectrum then needs one."""
    tools = os.path.dirname(os.path.abspath(__file__))
    wanted = [{"expression": e["expression"], "expected": e["expected"]} for e in examples if e.get("expected")]
    if not wanted:
        raise ToolError("no example says what it should give: there is nothing to fail")
    source = EXAMPLES_TEST.format(evaluator=json.dumps(os.path.join(tools, "example_eval.py")),
                                  examples=json.dumps(json.dumps(wanted)))
    folder = ctx.root / ".omni" / "check"
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="test_goal_examples_", suffix=".py", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(source)
    try:
        yield os.path.relpath(name, ctx.root)
    finally:
        os.unlink(name)


EXAMPLES_TEST = \
    '''"""The goal's examples as tests, for the spectrum's tracer (written and removed by omni's tools/spectrum.py)."""
import importlib.util
import json
import os
import sys

import pytest

sys.path[:0] = [os.path.abspath(p) for p in ("src", ".") if os.path.isdir(p)]
_spec = importlib.util.spec_from_file_location("omni_example_eval", {evaluator})
_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_eval)
EXAMPLES = json.loads({examples})


@pytest.mark.parametrize("example", EXAMPLES, ids=[str(n) for n in range(len(EXAMPLES))])
def test_example(example):
    found = _eval.evaluate(example)
    assert found["holds"], found["got"]
'''


def _traced(ctx: Context, selection: list[str]) -> dict[str, dict]:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spectrum_run.py")
    fd, out = tempfile.mkstemp(prefix="omni-spectrum-", suffix=".json")
    os.close(fd)
    try:
        # the project's addopts are left out: a coverage plugin would take the tracer over
        done = ctx.run([ctx.project_python, script, out, str(ctx.root), "-o", "addopts=", *selection], TIMEOUT)
        if done.timed_out:
            raise ToolError(f"the traced tests did not finish in {TIMEOUT}s")
        try:
            with open(out, encoding="utf-8") as f:
                return json.load(f)["tests"]
        except (OSError, ValueError, KeyError) as exc:
            raise ToolError(f"the traced tests did not report ({done.output[-300:].strip()})") from exc
    finally:
        os.unlink(out)


def _definitions(ctx: Context, scores: dict[tuple[str, int], float], passed: Counter) -> list[dict]:
    """Each function or method holding a scored line (the innermost one that holds it), as its best line scores,
    best first; among equals, the one more of whose lines the passing tests ran (`shared`): a line only failing
    tests reach in code the passing ones also run tells more than code no passing test runs at all."""
    best: dict[tuple[str, str], dict] = {}
    tiers: dict[tuple[str, str], dict[float, list[int]]] = {}  # each definition's scored lines, by their score
    for path in sorted({p for p, _ in scores}):
        try:
            spans = _spans(ast.parse((ctx.root / path).read_bytes()))
        except (OSError, SyntaxError, ValueError):
            continue
        for (where, line), score in sorted(scores.items()):
            if where != path or (symbol := _holder(spans, line)) is None:
                continue
            entry = best.setdefault((path, symbol), {"path": path, "symbol": symbol, "score": -1.0, "lines": [],
                                                     "shared": 0})
            tiers.setdefault((path, symbol), {}).setdefault(round(score, 3), []).append(line)
            if round(score, 3) > entry["score"]:
                entry["score"], entry["lines"] = round(score, 3), [line]
            elif round(score, 3) == entry["score"]:
                entry["lines"].append(line)
        for (where, line) in passed:
            if where == path and (path, symbol := _holder(spans, line)) in best:
                best[(path, symbol)]["shared"] += 1
    for place, entry in best.items():  # the other lines the failing tests ran, in tiers of equal score, best first
        entry["ran"] = [lines for score, lines in sorted(tiers[place].items(), reverse=True)[1:]][:MAX_TIERS]
    return sorted(best.values(), key=lambda d: (-d["score"], -d["shared"], d["path"], d["symbol"]))


def _holder(spans: list[tuple[str, int, int]], line: int) -> str | None:
    """The innermost definition that holds a line (not on its def line)."""
    holders = [span for span in spans if span[1] < line <= span[2]]
    return max(holders, key=lambda span: span[1])[0] if holders else None


def _spans(tree: ast.AST, prefix: str = "") -> list[tuple[str, int, int]]:
    """(qualified name, def line, last line) of every function and method: Class.method, outer.inner."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            if not isinstance(node, ast.ClassDef):
                found.append((name, node.lineno, node.end_lineno))
            found += _spans(node, name + ".")
        elif not isinstance(node, (ast.expr, ast.Import, ast.ImportFrom)):
            found += _spans(node, prefix)
    return found
