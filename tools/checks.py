"""Run things: lint (ruff), run_tests (pytest with a junit summary, or the repo's command), shell, git."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter

from context import Context, result
from testmap import for_sources
from unbound import unbound_name
from workspace import ToolError, nearest_paths, resolve

TRACE_LINES = 12
FAILURE = 800  # characters of one failing test's message and trace kept in run_tests' details


def _changes(ctx: Context) -> list[tuple[str, str]]:
    """(status, path) of every change since the run started: committed checkpoints, edits, new files. omni's own
    (.omni/: the run's reproduction test) are left out: they never enter the run's diff, so they are not the
    model's changes to show, nor to lint."""
    done = ctx.run(["git", "diff", "--name-status", "--no-renames", ctx.base_rev], timeout=60)
    rows = [tuple(line.split("\t", 1)) for line in done.output.splitlines() if "\t" in line]
    untracked = ctx.run(["git", "ls-files", "--others", "--exclude-standard"], timeout=60).output.split("\n")
    return [(status, name) for status, name in rows + [("??", name) for name in untracked if name]
            if not name.startswith(".omni/")]


def _changed_files(ctx: Context) -> list[str]:
    return [name for status, name in _changes(ctx) if status != "D" and (ctx.root / name).is_file()]


def _ruff(ctx: Context, targets: list[str], cwd_root: str, config: str | None) -> list[dict] | None:
    # --no-fix: a project's `fix = true` would have this read-only look rewrite the files it reads
    argv = [sys.executable, "-m", "ruff", "check", "--no-fix", "--no-cache", "--output-format", "json", "--exit-zero"]
    done = ctx.run(argv + (["--config", config] if config else []) + ["--", *targets], timeout=120)
    start = done.output.find("[")
    try:
        findings = json.loads(done.output[start:]) if start != -1 else None
    except json.JSONDecodeError:
        return None
    for item in findings or []:
        item["rel"] = os.path.relpath(item["filename"], cwd_root)
    return findings


def _project_config(ctx: Context) -> str | None:
    for name in ("ruff.toml", ".ruff.toml", "pyproject.toml"):
        path = ctx.root / name
        if path.is_file() and (name != "pyproject.toml" or "[tool.ruff" in path.read_text(errors="replace")):
            return str(path)
    return None


def _before(ctx: Context, targets: list[str]) -> Counter | None:
    """ruff's findings in the same files as they were when the run started (None if unknown)."""
    files = [t for t in targets if (ctx.root / t).is_file()]
    if len(files) != len(targets):
        return None  # directories: no per-file comparison
    listed = ctx.run(["git", "ls-tree", "-z", ctx.base_rev, "--", *files], timeout=30).output if files else ""
    executable = {entry.partition("\t")[2] for entry in listed.split("\0") if entry.startswith("100755 ")}
    with tempfile.TemporaryDirectory(prefix="omni-lint-") as tmp:
        present = []
        for path in files:
            shown = ctx.run(["git", "show", f"{ctx.base_rev}:{path}"], timeout=30, cap=64 * 1024 * 1024)
            if shown.exit_code == 0:  # a file new in this run had no problems before
                os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
                with open(os.path.join(tmp, path), "w", encoding="utf-8") as handle:
                    handle.write(shown.output)
                if path in executable:  # as it was: ruff's EXE rules read the mode (an executable with no shebang)
                    os.chmod(os.path.join(tmp, path), 0o755)
                present.append(os.path.join(tmp, path))
        found = _ruff(ctx, present, tmp, _project_config(ctx)) if present else []
    return None if found is None else Counter((i["rel"], i.get("code"), i["message"]) for i in found)


def judged(findings: list[dict], before: Counter) -> list[str]:
    """Each of ruff's findings judged against those at a starting point (a Counter of (path, rule, message)):
    "old" when there before (each counted once), "style" when its file broke the rule before (u'' strings
    everywhere, say: new code written like the code around it is not a new problem), else "new". A syntax error
    (no rule) is always new. The lint tool and a candidate's own lint (tools/lintfix.py) judge alike."""
    left = Counter(before)
    styles = {(rel, code) for rel, code, _ in before if code}
    labels = []
    for item in findings:
        key = (item["rel"], item.get("code"), item["message"])
        if left[key] > 0:
            left[key] -= 1
            labels.append("old")
        else:
            labels.append("style" if (item["rel"], item.get("code")) in styles else "new")
    return labels


def lint(ctx: Context, paths: list[str] | None = None) -> dict:
    targets = paths or [f for f in _changed_files(ctx) if f.endswith((".py", ".pyi"))]
    if not targets:
        return result(True, "no changed Python files to lint (pass paths to lint others)")
    for path in targets:
        resolve(ctx.root, path, kind="any")
    findings = _ruff(ctx, targets, str(ctx.root), None)
    if findings is None:
        return result(False, error="ruff gave no readable output", failure="command_failed")
    if not findings:
        return result(True, f"ruff: no problems in {len(targets)} file(s)", problems=0, findings=[],
                      new_findings=[])
    before = _before(ctx, targets)
    labels = judged(findings, before) if before is not None else [""] * len(findings)
    lines, listed = [], []
    for item, label in zip(findings, labels, strict=True):
        old, style = label == "old", label == "style"
        fix = " (fixable)" if item.get("fix") else ""
        line = (f"{item['rel']}:{item['location']['row']}:{item['location']['column']}: "
                f"{item.get('code') or 'syntax'} {item['message']}{fix}")
        listed.append({"path": item["rel"], "code": item.get("code") or "syntax", "message": item["message"],
                       "new": None if before is None else not (old or style)})
        lines.append(line + (" [there before this run]" if old else " [a rule this file broke before]" if style
                             else " [new]" if before is not None else ""))
    # The finish gate reads new_findings: one judgment of "new", the same one the model was shown.
    fresh = [f"{f['path']}: {f['code']} {f['message']}" for f in listed if f["new"]]
    known = {"findings": listed, **({"new_findings": fresh} if before is not None else {})}
    new = len(fresh)
    if before is not None and new == 0:  # nothing the model did: not a failure it should chase
        return result(True, f"ruff: {len(findings)} problem(s), all there before this run; none new\n"
                      + "\n".join(lines), problems=len(findings), new=0, **known)
    counted = f", {new} new in this run" if before is not None else ""
    return result(False, "\n".join(lines), error=f"ruff found {len(findings)} problem(s){counted}",
                  failure="lint_failed", problems=len(findings), **({"new": new} if before is not None else {}),
                  **known)


def _test_id(root, classname: str, name: str) -> str:
    """pytest's id of a junit test case: the longest dotted prefix of classname that is a file under root
    is the module, the rest its classes (tests.test_idna.IDNATests -> tests/test_idna.py::IDNATests). A module
    that failed to collect has no classname and its dotted name as name (tests.test_b -> tests/test_b.py). A text
    file's doctest (--doctest-glob) is the file with its suffix (docs.usage.rst -> docs/usage.rst::usage.rst)."""
    if not classname and (module := "/".join(_pieces(name)) + ".py") and (root / module).is_file():
        return module
    parts = _pieces(classname)
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if (root / module).is_file():
            return "::".join([module, *parts[cut:], name])
    for cut in range(len(parts), 1, -1):  # a doctest of a text file (docs/usage.rst): its last piece the suffix
        document = "/".join(parts[:cut - 1]) + "." + parts[cut - 1]
        if (root / document).is_file():
            return "::".join([document, *parts[cut:], name])
    return "::".join(filter(None, [classname.replace(".", "/") + ".py" if classname else "", name]))


def _pieces(dotted: str) -> list[str]:
    """The parts of a dotted junit name; a dot folder (.omni) leaves an empty piece, joined to the next."""
    parts: list[str] = []
    for piece in dotted.split(".") if dotted else []:
        if parts and parts[-1] == "":
            parts[-1] = "." + piece
        else:
            parts.append(piece)
    return parts


def _raised(message: str) -> str:
    """The exception a failed test raised, from pytest's message: AssertionError for a failed assert."""
    if message.startswith("assert"):
        return "AssertionError"
    found = re.match(r"([A-Za-z_][\w.]*)(?::\s|$)", message)
    return found.group(1).rsplit(".", 1)[-1] if found else ""


def _not_installed(trace: str, root) -> str:
    """The module a test could not import because it is not installed, when it is not the project's own (a
    project module that is missing is the code's fault, not the environment's); "" otherwise."""
    found = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", trace)
    top = found.group(1).split(".")[0] if found else ""
    if not top or any((root / where).exists() for where in (top, f"{top}.py", f"src/{top}", f"src/{top}.py")):
        return ""
    return found.group(1)


def _junit_summary(path: str, workspace) -> dict | None:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failing = []
    for case in root.iter("testcase"):
        test_id = _test_id(workspace, case.get("classname", ""), case.get("name", ""))
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "errors"
                trace = (child.text or "").strip().splitlines()
                trimmed = trace[-TRACE_LINES:]
                failing.append({"id": test_id, "kind": child.tag, "message": (child.get("message") or "")[:500],
                                "raised": _raised(child.get("message") or ""),
                                "missing": _not_installed(child.text or "", workspace),
                                "unbound": unbound_name(child.text or "", test_id.split("::")[0], workspace),
                                "trace": ("[...]\n" if len(trace) > TRACE_LINES else "") + "\n".join(trimmed)})
            elif child.tag == "skipped":
                outcome = "skipped"
        counts[outcome] += 1
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts["duration_s"] = round(sum(float(s.get("time", 0) or 0) for s in suites), 3)
    return {"counts": counts, "failing": failing}


def _failure_text(failure: dict) -> str:
    """A failing test's message and the end of its trace, the message left out where the trace says it."""
    first = failure["message"].strip().splitlines()[:1]
    text = failure["trace"] if first and first[0] in failure["trace"] else f"{failure['message']}\n{failure['trace']}"
    return text.strip()[:FAILURE]


def run_tests(ctx: Context, selection: list[str] | None = None, timeout: int = 600, brief: bool = False) -> dict:
    """brief: each failing test's trace is its assertion's lines alone (pytest's --tb=line; the message is whole).
    For try_fixes' runs, where the trace is read by no one and formatting it costs half of a run of many failing
    tests (bench/brief_traces.py). Not offered to the model: its runs show the code around the failure."""
    selection = selection or []
    if ctx.test_command:
        for item in selection:
            resolve(ctx.root, item.split("::")[0], kind="any")
        done = ctx.run(["bash", "-c", ctx.test_command + "".join(f" {s!r}" for s in selection)], timeout)
        ok = done.exit_code == 0
        return result(ok, done.output, error="" if ok else f"test command exited {done.exit_code}",
                      failure="timeout" if done.timed_out else "tests_failed", exit_code=done.exit_code)
    # A wrong test path or id still runs tests: the nearest existing selection, said in the answer.
    # A model that guessed a test name learns more from the real run than from "not found".
    selection, notes = for_sources(ctx, selection)  # a source file's tests are the ones that import it
    kept = []
    for item in selection:
        path, _, test_id = item.partition("::")
        module = path.replace(".", "/") + ".py"  # tests/test_tz or tests.test_tz: the module's file
        if resolve(ctx.root, path, kind="any", must_exist=False).exists():
            kept.append(item)
        elif resolve(ctx.root, module, kind="any", must_exist=False).is_file():
            kept.append(module + (f"::{test_id}" if test_id else ""))
            notes.append(f"{path} is read as {module}.")
        else:
            notes.append(f"{path} does not exist. {nearest_paths(ctx.root, path)}")
    if selection and not kept:
        notes.append("Ran the whole test suite instead.")
    traces = ["--tb=line"] if brief else []
    outcome = _pytest(ctx, traces + kept, timeout)
    unfound = [line for line in outcome["output"].splitlines() if "not found:" in line]
    missing = [k for k in kept if "::" in k and any(line.endswith(k) for line in unfound)]
    if outcome.get("exit_code") == 4 and missing:
        files = list(dict.fromkeys(k.split("::")[0] for k in kept))
        notes.append(f"No test matches {', '.join(missing)}. Ran {', '.join(files)} instead.")
        outcome = _pytest(ctx, traces + files, timeout)
    if notes:
        note = "\n".join(notes) + "\n\n"
        outcome["output"] = note + outcome["output"]
        if outcome["error"]:
            outcome["error"] = note + outcome["error"]
    return outcome


def _pytest(ctx: Context, selection: list[str], timeout: int) -> dict:
    fd, junit = tempfile.mkstemp(prefix="omni-junit-", suffix=".xml")
    os.close(fd)
    try:
        # pytest's own deprecation notices are not the project's failures: a project whose config turns
        # warnings into errors, run with a newer pytest than it was written for, would not even collect.
        # A file that fails to import (a helper not installed) must not stop the rest: pytest runs nothing when
        # collection fails, unless told to go on.
        argv = [ctx.project_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no",
                "--continue-on-collection-errors", "-W", "ignore::pytest.PytestDeprecationWarning",
                f"--junitxml={junit}"]
        done = ctx.run(argv + selection, timeout)
        unknown = re.search(r"unrecognized arguments: (.*)", done.output) if done.exit_code == 4 else None
        if unknown:  # the project's addopts name a plugin the sandbox lacks (--cov without pytest-cov)
            done = ctx.run(argv + ["-o", "addopts=", *selection], timeout)
        if done.timed_out:
            return result(False, done.output[-4000:], error=f"tests did not finish within {timeout}s; "
                          "run a smaller selection", failure="timeout", duration_s=done.duration_s)
        summary = _junit_summary(junit, ctx.root)
    finally:
        os.unlink(junit)
    if summary is None or done.exit_code in (3, 4):
        return result(False, done.output, error=f"pytest could not run (exit {done.exit_code})",
                      failure="command_failed", exit_code=done.exit_code)
    c = summary["counts"]
    head = (f"pytest: {c['passed']} passed, {c['failed']} failed, {c['errors']} errors, "
            f"{c['skipped']} skipped in {c['duration_s']}s")
    if done.exit_code == 5:
        return result(False, head, error="no tests were collected; check the selection or the test layout",
                      failure="tests_failed", exit_code=5, summary=c, headline=head)
    if done.exit_code == 0 and not c["passed"] and not c["failed"] and not c["errors"]:
        return result(False, head, error=f"no test ran: all {c['skipped']} were skipped, so this checked nothing. "
                      "Select tests that run: a test file for the code you changed, or no selection for the whole "
                      "suite.", failure="tests_failed", exit_code=0, summary=c, failing=[], headline=head)
    blocks = [head]
    for fail in summary["failing"][:10]:
        blocks.append(f"\n{'FAILED' if fail['kind'] == 'failure' else 'ERROR'} {fail['id']}\n"
                      f"  {fail['message']}\n{fail['trace']}")
    if len(summary["failing"]) > 10:
        blocks.append(f"\n[{len(summary['failing']) - 10} more failing tests not shown]")
    if unknown:
        blocks.append(f"\nThe project's pytest options ask for a plugin that is not installed (unrecognized "
                      f"arguments: {unknown.group(1).strip()}), so its addopts were left out.")
    text = "\n".join(blocks)
    ok = done.exit_code == 0
    return result(ok, text, error="" if ok else head, failure="tests_failed", exit_code=done.exit_code,
                  summary=c, failing=[f["id"] for f in summary["failing"]], headline=head,
                  raised={f["id"]: f["raised"] for f in summary["failing"]},
                  missing={f["id"]: f["missing"] for f in summary["failing"] if f["missing"]},
                  unbound={f["id"]: f["unbound"] for f in summary["failing"] if f["unbound"]},
                  failures={f["id"]: _failure_text(f) for f in summary["failing"][:10]})


def shell(ctx: Context, command: str, timeout: int = 120) -> dict:
    if not command.strip():
        raise ToolError("command is empty")
    done = ctx.run(["bash", "-c", command], timeout)
    extra = {"exit_code": done.exit_code, "elided_bytes": done.elided_bytes, "duration_s": round(done.duration_s, 3)}
    if done.timed_out:
        return result(False, done.output, error=f"timed out after {timeout}s; the command and its children "
                      "were killed", failure="timeout", **extra)
    if done.cancelled:
        return result(False, done.output, error="interrupted by the user", failure="command_failed", **extra)
    if done.killed_by == "watch":
        return result(False, done.output, error=done.watch_note, failure="workspace_full", **extra)
    if done.exit_code in (-25, 153):  # SIGXFSZ: a file reached the sandbox's file size limit
        return result(False, done.output, error="stopped: a file reached the workspace's size limit; write less "
                      "(remove what the command wrote)", failure="workspace_full", **extra)
    if done.exit_code in (-9, 137):  # omni did not kill it (its own kills are said above)
        return result(False, done.output, error="killed by SIGKILL, not by omni: most likely it ran out of memory "
                      "(the sandbox has a memory limit); use less memory or process less data at once",
                      failure="command_failed", killed=True, **extra)
    if done.exit_code != 0:
        return result(False, done.output, error=f"exit code {done.exit_code}", failure="command_failed", **extra)
    return result(True, done.output or "(no output)", **extra)


def git_status(ctx: Context) -> dict:
    rows = _changes(ctx)
    return result(True, "\n".join(f"{status:>2} {name}" for status, name in rows)
                  or "no changes since the run started")


def git_diff(ctx: Context, path: str | None = None) -> dict:
    argv = ["git", "diff", "--no-color", ctx.base_rev] + (["--", path] if path else [])
    done = ctx.run(argv, timeout=60)
    if done.exit_code != 0:
        return result(False, error=done.output, failure="command_failed")
    text = done.output
    for status, name in _changes(ctx):
        if status == "??" and (not path or name.startswith(path)):
            text += ctx.run(["git", "diff", "--no-color", "--no-index", "/dev/null", name], timeout=60).output
    return result(True, text.strip() or "no changes since the run started")


def check_examples(ctx: Context, examples: list[dict], timeout: int = 30, trace: bool = False) -> dict:
    """Evaluate the goal's examples (`expression == expected`) in the project's Python. Not a model tool:
    the gate runs it at the start and at the finish; the localizer asks for the functions each one ran."""
    from example_eval import MARKER  # the script itself runs in the project's Python, not this one

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "example_eval.py")
    done = ctx.run([ctx.project_python, script, json.dumps(examples), *(["--trace"] if trace else [])], timeout)
    if done.timed_out:
        return result(False, done.output, error=f"the examples did not finish in {timeout}s", failure="timeout")
    _, marker, found = done.output.rpartition(MARKER)
    if not marker:
        return result(False, done.output, error="the examples could not be evaluated: "
                      + (done.output.strip().splitlines() or ["no output"])[-1][:300], failure="command_failed")
    results = json.loads(found.strip().splitlines()[0])
    return result(True, "\n".join(f"{'holds' if r['holds'] else 'does not hold'}: {r['got']}" for r in results),
                  results=results)
