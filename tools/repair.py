"""try_fixes: put candidate rewrites of one definition through the edit gate and the run's check, each in a
scratch copy of the workspace (never the workspace itself). One call for all candidates: trying one costs
a test run, not a model call."""

from __future__ import annotations

import ast
import difflib
import shutil
import tempfile
import time
from pathlib import Path

import checks
import lintfix
import python_tools
from context import Context, result
from testmap import tests_importing
from workspace import ToolError, read_text, resolve

NOT_COPIED = (".git", "__pycache__", ".pytest_cache", ".mypy_cache", "node_modules")  # .omni/check is: the check
SCRATCH_SKIP = shutil.ignore_patterns(*NOT_COPIED)
PROBE_TIMEOUT = 30
FIRST_RUN = 120  # seconds the check may take on the code as it is, the run that times it
SLOWER = 5  # a candidate's run of the check may take this many times as long as that run
MIN_TIMEOUT = 15  # and never less: a test process's start varies
MESSAGE = 600  # characters of a candidate's failure kept for the next round's prompt


def try_fixes(ctx: Context, path: str, symbol: str, candidates: list[str], tests: list[str] | None = None,
              examples: list[dict] | None = None, probes: list[str] | None = None,
              failing_before: list[str] | None = None, whole_suite: bool = False, timeout: int = 300) -> dict:
    file = resolve(ctx.root, path)
    if not candidates:
        raise ToolError("no candidates to try")
    if not tests and not examples:
        raise ToolError("no check to try the candidates against: give failing tests or examples")
    original = read_text(file, path)
    with tempfile.TemporaryDirectory(prefix="omni-scratch-") as tmp:
        scratch = Path(tmp) / "workspace"
        try:
            shutil.copytree(ctx.root, scratch, symlinks=True, ignore=SCRATCH_SKIP)
        except (OSError, shutil.Error) as exc:
            raise ToolError(f"could not make a scratch copy of the workspace: {exc}") from exc
        box = Context(root=scratch, cancelled=ctx.cancelled, project_python=ctx.project_python,
                      test_command=ctx.test_command, base_rev=ctx.base_rev)
        # the module's test files, and the whole files of the check's tests: a candidate that makes one
        # test pass may break its neighbours (the check's own tests fail before, so they count as no break).
        # Before is the run's start where known: after an edit that broke tests, a candidate that leaves
        # them broken breaks them too (run U, pathspec-normalize-dot: two such were applied, and the
        # finish gate sent the run back for the tests they left broken). whole_suite (a suite quick to run): the
        # whole suite instead, [] here; the tests that reach the module through another one break too (a one-change
        # fix of a helper passed its own file's tests and broke eight elsewhere, which only the finish gate saw).
        # None: no such run (a test command of the project's own, whose failing tests are not listed)
        files = [t.split("::")[0] for t in tests or [] if not t.startswith(".omni/")]
        beside = None if ctx.test_command else [] if whole_suite and failing_before is not None else \
            list(dict.fromkeys(files + tests_importing(box, path, limit=5))) or None
        if failing_before is not None:
            before = set(failing_before)
        else:
            before = set(_failing(box, beside, timeout)[0]) if beside else set()
        baseline, linted = _probe(box, probes or []), lintfix.findings(box, path)
        # which fail now: with two tests or more, a candidate that makes some of them pass and no other fail is a
        # step toward the check (a fault in two places: each place's fix makes its own tests pass). And how long the
        # check takes on the code as it is: a candidate's own run may take SLOWER times as long, not the whole
        # timeout (a one-change candidate that loops forever would cost minutes, once per such candidate)
        started = time.monotonic()
        failing_now = _failing(box, tests, min(timeout, FIRST_RUN))[0] if tests else []
        if not tests:  # the examples alone are the check
            checks.check_examples(box, examples or [], timeout=min(timeout, FIRST_RUN))
        each = min(timeout, max(MIN_TIMEOUT, round(SLOWER * (time.monotonic() - started))))
        now = set(failing_now) if len(tests or []) > 1 else set()
        outcomes = [_try(box, path, symbol, code, tests or [], examples or [], (each, timeout), original, beside,
                         before, probes or [], linted, now) for code in candidates]
    passing = sum(o["passes"] and not o["breaks"] for o in outcomes)
    lines = [f"candidate {n + 1}: {_said(o)}" for n, o in enumerate(outcomes)]
    others = "the rest of the suite" if beside == [] else ", ".join(beside or []) or "other tests"
    return result(True, f"{passing} of {len(outcomes)} candidate(s) pass the check without breaking {others}\n"
                  + "\n".join(lines), outcomes=outcomes, baseline=baseline)


def _failing(box: Context, files: list[str], timeout: int) -> tuple[list[str], str]:
    """The tests of files that fail, and run_tests' report."""
    ran = checks.run_tests(box, files, timeout, brief=True)
    if ran["details"].get("summary") is None:
        return ["(the module's tests did not run)"], ran["output"]
    return list(ran["details"].get("failing", [])), ran["output"]


def _probe(box: Context, probes: list[str]) -> list[dict]:
    """What each probe gives ({"got", "raised"}); none when they did not finish (a probe that hangs)."""
    if not probes:
        return []
    ran = checks.check_examples(box, [{"expression": p} for p in probes], timeout=PROBE_TIMEOUT)
    results = ran["details"].get("results") if ran["success"] else None
    return [{"got": r["got"], "value": r.get("value", r["got"]), "raised": r["raised"]} for r in results or []]


def _try(box: Context, path: str, symbol: str, code: str, tests: list[str], examples: list[dict],
         timeouts: tuple[int, int], original: str, beside: list[str] | None, before: set[str], probes: list[str],
         linted: list[dict], now: set[str]) -> dict:
    """One candidate in the scratch copy. timeouts: of a run of the check's tests, and of the module's tests.
    beside: the tests a candidate that passes must not break ([]: the whole suite; None: none are run)."""
    timeout, module_timeout = timeouts
    target = box.root / path
    outcome = {"applied": False, "error": "", "passes": False, "failing": [], "tests_ran": False,
               "examples_hold": None, "diff_lines": 0, "shape": _shape(code), "breaks": [], "message": "",
               "unchanged": False, "probes": [], "tidied": "", "lint": [], "progress": False}
    try:
        edit = python_tools.replace_symbol(box, path, symbol, code)
    except ToolError as exc:
        edit = result(False, error=str(exc), failure="edit_failed")
    if not edit["success"]:
        outcome["error"] = edit["error"].splitlines()[0][:300] if edit["error"] else "the edit was refused"
        outcome["unchanged"] = bool(edit.get("details", {}).get("unchanged"))
        return outcome
    outcome["applied"] = True
    try:
        outcome["tidied"], outcome["lint"] = lintfix.tidy(box, path, symbol, original, linted)
        outcome["diff_lines"] = _changed_lines(original, read_text(target, path))
        if tests:
            ran = checks.run_tests(box, tests, timeout, brief=True)
            counts = ran["details"].get("summary")
            outcome["tests_ran"] = counts is not None
            outcome["failing"] = ran["details"].get("failing", []) if counts else ["(the tests did not run)"]
            if ran.get("failure") == "timeout":
                outcome["failing"] = ["(the tests timed out)"]
            if outcome["failing"]:
                outcome["message"] = _failure_of(ran["output"]) or ran["output"].strip()[-MESSAGE:]
        if examples:
            held = checks.check_examples(box, examples, timeout=min(timeout, 60))
            results = held["details"].get("results") if held["success"] else None
            outcome["examples_hold"] = bool(results) and all(r["holds"] for r in results)
            wrong = [(e, r) for e, r in zip(examples, results or [], strict=False) if not r["holds"]]
            if wrong and not outcome["message"]:
                outcome["message"] = f"{wrong[0][0]['expression']} gives {wrong[0][1]['got']}"[:MESSAGE]
            elif not results and not outcome["message"]:
                outcome["message"] = (held["error"] or "the examples did not run")[:MESSAGE]
        outcome["passes"] = (not tests or (outcome["tests_ran"] and not outcome["failing"])) and \
            (not examples or outcome["examples_hold"] is True)
        outcome["progress"] = (not outcome["passes"] and outcome["tests_ran"] and set(outcome["failing"]) < now
                               and outcome["examples_hold"] is not False and not _split(now, outcome["failing"]))
        if (outcome["passes"] or outcome["progress"]) and beside is not None:  # only those are worth the run
            failing, report = _failing(box, beside, module_timeout)
            outcome["breaks"] = sorted(set(failing) - before)
            if outcome["passes"] or outcome["breaks"]:  # a step's own message is how the check still fails
                outcome["message"] = _failure_of(report, outcome["breaks"][0]) if outcome["breaks"] else ""
        if outcome["passes"]:  # and the probes, that tell passing candidates apart
            outcome["probes"] = _probe(box, probes)
    finally:
        target.write_text(original, encoding="utf-8", errors="surrogateescape")  # the next candidate starts clean
    return outcome


def _failure_of(report: str, test: str = "") -> str:
    """A test's block of a run_tests report (its id, message and the end of its trace), the first failing test's
    when none is named; "" when the report leaves it out."""
    for marker in ("\nFAILED ", "\nERROR "):
        _, found, rest = report.partition(f"{marker}{test}\n" if test else marker)
        if found:
            return (f"{test}\n{_until_next(rest)}" if test else _until_next(rest))[:MESSAGE]
    return ""


def _until_next(rest: str) -> str:
    """A report's text after a test's FAILED/ERROR line, up to the next test's."""
    return rest.split("\nFAILED ")[0].split("\nERROR ")[0].strip()


def _split(now: set[str], failing: list[str]) -> bool:
    """Whether a candidate makes some cases of one test function pass and leaves others of it failing (the
    parameters of a parametrized test): that is a fix of some inputs, not of one place of a fault in two."""
    def function(test: str) -> str:
        return test.split("[")[0]

    return bool({function(t) for t in now - set(failing)} & {function(t) for t in failing})


def _shape(code: str) -> str:
    """The candidate's code with formatting and comments left out: equal shapes are the same fix."""
    try:
        return ast.dump(ast.parse(code.strip()))
    except SyntaxError:
        return code.strip()


def _changed_lines(before: str, after: str) -> int:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _said(outcome: dict) -> str:
    if not outcome["applied"]:
        return f"refused: {outcome['error']}"
    parts = ["passes" if outcome["passes"] else "fails fewer of the check's tests" if outcome["progress"] else "fails"]
    if outcome["breaks"]:
        parts.append("but breaks: " + ", ".join(outcome["breaks"][:3]))
    if outcome["failing"]:
        parts.append("failing: " + ", ".join(outcome["failing"][:3]))
    if outcome["examples_hold"] is not None:
        parts.append("examples hold" if outcome["examples_hold"] else "examples do not hold")
    if outcome["lint"]:
        parts.append("adds lint findings: " + ", ".join(outcome["lint"][:3]))
    return "; ".join(parts) + f" ({outcome['diff_lines']} line(s) changed)"
