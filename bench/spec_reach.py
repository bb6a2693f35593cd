"""Reach of rewrites written from a definition's signature and docstring, its body left out, against rewrites of
its code as verified repair asks for them (prompts/propose.md): of k samples each, at the sampled rounds'
temperature, how many pass the task's own grading tests?

A small model shown a definition's code writes that code again: most of a sampled round's rewrites are the code
unchanged, and a statement the bug deleted is not written back (bench/README.md, runs BI, CJ, CM). Asked to write
the definition again from what it should do (bench/prompts/propose_spec.md), it cannot copy the fault, only its own
idea of the code. This measures both asks side by side on the bug's own definition (a perfect localization), in one
run, with the same failure shown: the failing tests of the repository as they fail on the bug. Each candidate is put
in place of the definition and graded as a run would be (the hidden tests added, fail_to_pass and pass_to_pass).
A third ask, `diagnose` (bench/prompts/propose_diagnose.md), shows the code and asks for the fault in a sentence
before the rewrite; a fourth, `trace` (bench/prompts/propose_trace.md), shows the code with what its lines did in
the first failing test that calls it (bench/valuetrace.py). An ask may name its own temperature (`code@1.1`). It
reads bug patches, so it is for the tune half and the dev tasks only (bench/reach.py).

    python bench/spec_reach.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b [--tasks a,b] [-k 8]
        [--asks code,spec,diagnose,trace,code@1.1]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from openai import OpenAI

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reach import Site, readable, sites  # noqa: E402
from run_tasks import ensure_test_requires, pass_to_pass, pytest_ids  # noqa: E402

from omni.model.textmode import code_of  # noqa: E402
from omni.prompts import Prompts  # noqa: E402
from omni.repair.rewritten import shape, without_docstring  # noqa: E402

TEMPERATURE = 0.8  # verified repair's sampled rounds (omni/repair/verified.py)
MAX_TOKENS = 1024
FAILURE_CHARS = 1200
ASKS = ("code", "spec", "diagnose", "trace")  # the requests asks() makes
TRACE_CHARS = 2400


def head_of(source: str) -> str:
    """A definition's decorators, signature and docstring: its text up to its body's first statement after the
    docstring (the whole definition's first lines, when the body is one docstring)."""
    text = textwrap.dedent(source)
    node = ast.parse(text).body[0]
    first = node.body[0]
    last = first.end_lineno if ast.get_docstring(node, clean=False) is not None else first.lineno - 1
    return "\n".join(text.splitlines()[:last])


def imports_of(module: str) -> str:
    """The module's top-level import statements, as written."""
    tree = ast.parse(module)
    return "\n".join(ast.get_source_segment(module, n) or "" for n in tree.body
                     if isinstance(n, (ast.Import, ast.ImportFrom)))[:2000]


def placed(site: Site, code: str) -> str:
    """The file's text with the definition replaced by code, at the definition's indentation."""
    rows = site.text.splitlines(keepends=True)
    end = site.start + len(site.source.splitlines()) - 1
    margin = site.source[:len(site.source) - len(site.source.lstrip())]
    margin = margin.splitlines()[-1] if margin.strip("\n") else ""
    new = textwrap.indent(textwrap.dedent(code).rstrip("\n") + "\n", margin)
    return "".join(rows[:site.start - 1]) + new + "".join(rows[end:])


def failure_of(repo: Path, task: dict) -> tuple[list[str], str]:
    """The repository's own fail_to_pass tests (before the hidden ones are added) and how they fail on the bug."""
    own = [t for t in task["fail_to_pass"] if (repo / t.split("::")[0]).exists()]
    if not own:
        return [], ""
    _, log = pytest_ids(repo, own, extra=[*task.get("pytest_args", []), "-x", "-q", "--tb=short"])
    lines = [line for line in log.splitlines() if line.startswith(("E ", ">", "    assert", "FAILED"))]
    return own, "\n".join(lines)[-FAILURE_CHARS:]


def trace_of(repo: Path, task: dict, site: Site, tests: list[str]) -> str:
    """What the definition's lines did in the first failing test that calls it (bench/valuetrace.py): each line that
    ran, as written, with the names it set and their values, and what the call returned or raised. Empty when no
    failing test calls it."""
    if not tests:
        return ""
    path, _, name = site.definition.partition(":")
    with tempfile.TemporaryDirectory(prefix="valuetrace-") as tmp:
        out = Path(tmp) / "trace.json"
        roots = [p for p in (repo / "src", repo) if p.exists()]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in [*roots, Path(__file__).parent]),
                   PYTHONDONTWRITEBYTECODE="1", VALUETRACE_FILE=path, VALUETRACE_NAME=name, VALUETRACE_OUT=str(out))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "valuetrace",
                        *task.get("pytest_args", []), *tests], cwd=repo, env=env, capture_output=True, timeout=300,
                       check=False)
        calls = json.loads(out.read_text()) if out.exists() else []
    rows = site.text.splitlines()
    margin = len(site.source) - len(site.source.lstrip())
    said: list[str] = []
    for n, events in enumerate(calls, 1):
        said.append(f"call {n}:")
        for event in events:
            if event[0] == "line":
                text = rows[event[1] - 1][margin:] if event[1] <= len(rows) else ""
                names = ", ".join(f"{k} = {v}" for k, v in event[2].items())
                said.append(f"{text}{'    # ' + names if names else ''}")
            else:
                said.append(f"-> {'returned' if event[0] == 'return' else 'raised'} {event[1]}")
    return "\n".join(said)[:TRACE_CHARS]


def asks(prompts: Prompts, task: dict, site: Site, tests: list[str], failure: str,
         trace: str = "") -> dict[str, list[dict]]:
    """The requests: the code shown (omni's own prompt), the signature and docstring alone, the code shown with
    the fault to be said in words before the code is written, and the code shown with what its lines did in the
    failing test (the last three this script's)."""
    path, _, symbol = site.definition.partition(":")
    source = without_docstring(site.source)
    check = "\n".join(f"- {t}" for t in tests) or f"- the goal: {task['goal']}"
    common = dict(goal=task["goal"], symbol=symbol, path=path, check=check, failure=failure, note="")
    system = {"role": "system", "content": prompts.render("repair_system")}
    code = prompts.render("propose", source=textwrap.dedent(source), documented=source != site.source, reader="",
                          owner="", imports="", **common)
    own = Prompts(Path(__file__).resolve().parent / "prompts")
    spec = own.render(
        "propose_spec", head=head_of(site.source), documented=source != site.source, imports=imports_of(site.text),
        **common)
    diagnose = own.render("propose_diagnose", source=textwrap.dedent(source), documented=source != site.source,
                          **common)
    traced = own.render("propose_trace", source=textwrap.dedent(source), documented=source != site.source,
                        trace=trace, **common)
    return {"code": [system, {"role": "user", "content": code}], "spec": [system, {"role": "user", "content": spec}],
            "trace": [system, {"role": "user", "content": traced}],
            "diagnose": [{"role": "system", "content": own.render("diagnose_system")},
                         {"role": "user", "content": diagnose}]}


def graded(repo: Path, task: dict, site: Site, code: str) -> bool:
    path = site.definition.partition(":")[0]
    try:
        ast.parse(placed(site, code))
    except SyntaxError:
        return False
    (repo / path).write_text(placed(site, code))
    try:
        ok, _ = pytest_ids(repo, task["fail_to_pass"], extra=task.get("pytest_args", []))
        kept = pytest_ids(repo, pass_to_pass(task), extra=task.get("pytest_args", []))[0] \
            if ok and task.get("pass_to_pass") else ok
        return ok and kept
    finally:
        (repo / path).write_text(site.text)


def reach(task: dict, work: Path, client: OpenAI, model: str, k: int, prompts: Prompts, kinds: list[str],
          show: bool = False) -> list[dict]:
    ensure_test_requires(task)
    rows, found, repo = [], list(sites(task, work)), work / "bug" / "repo"
    tests, failure = failure_of(repo, task)
    traces = {site.definition: trace_of(repo, task, site, tests) for site in found
              if not isinstance(site, str) and "trace" in {kind.partition("@")[0] for kind in kinds}}
    if (task["dir"] / "hidden").is_dir():
        shutil.copytree(task["dir"] / "hidden", repo, dirs_exist_ok=True)
    for site in found:
        if isinstance(site, str):
            rows.append({"task": task["id"], "definition": site, "skipped": "not a definition on both sides"})
            continue
        row, original = {"task": task["id"], "definition": site.definition}, shape(without_docstring(site.source))
        trace = traces.get(site.definition, "")
        row["traced"] = bool(trace)
        if show and trace:
            print(f"--- trace of {site.definition}:\n{trace}", flush=True)
        requests = asks(prompts, task, site, tests, failure, trace)
        for kind in kinds:
            ask, _, warmth = kind.partition("@")  # code@1.1: omni's ask at another temperature
            messages, temperature = requests[ask], float(warmth or TEMPERATURE)
            began = time.monotonic()
            with ThreadPoolExecutor(4) as pool:
                replies = list(pool.map(lambda asked, warm=temperature: client.chat.completions.create(
                    model=model, messages=asked, temperature=warm, max_tokens=MAX_TOKENS), [messages] * k))
            codes = [code_of(r.choices[0].message.content or "") for r in replies]
            shapes = [shape(without_docstring(c)) for c in codes]
            copies = sum(1 for c, form in zip(codes, shapes, strict=True) if c and form == original)
            verdicts = [bool(c) and form != original and graded(repo, task, site, c)
                        for c, form in zip(codes, shapes, strict=True)]
            passing = sum(verdicts)
            for code, verdict in zip(codes, verdicts, strict=True) if show else ():
                print(f"--- {kind}, {'passes' if verdict else 'fails'}:\n{code}", flush=True)
            row[kind] = {"passing": passing, "copies": copies, "empty": sum(1 for c in codes if not c),
                         "seconds": round(time.monotonic() - began, 1)}
        rows.append(row)
    return rows


def _known(kind: str) -> bool:
    ask, at, warmth = kind.partition("@")
    try:
        return ask in ASKS and (not at or 0 <= float(warmth) <= 2)
    except ValueError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-k", "--samples", type=int, default=8, help="samples of each ask per definition")
    parser.add_argument("--show", action="store_true", help="print every candidate and whether it passed")
    parser.add_argument("--asks", default="code,spec",
                        help=f"which asks, of {', '.join(ASKS)}, each at the sampled rounds' temperature or another "
                             "(code@1.1)")
    opts = parser.parse_args()
    client, prompts = OpenAI(base_url=opts.base_url, api_key="sk-local", timeout=600), Prompts()
    kinds = opts.asks.split(",")
    if unknown := [kind for kind in kinds if not _known(kind)]:
        parser.error(f"unknown ask {', '.join(unknown)}: choose from {', '.join(ASKS)}, each with an optional "
                     f"@temperature (code@1.1)")
    totals = dict.fromkeys(kinds, 0)
    for task in readable(opts.tasks, "spec_reach.py"):
        with tempfile.TemporaryDirectory(prefix="omni-spec-") as tmp:
            for row in reach(task, Path(tmp), client, opts.model, opts.samples, prompts, kinds, opts.show):
                said = row.get("skipped") or "  ".join(
                    f"{kind}: {row[kind]['passing']}/{opts.samples} pass, {row[kind]['copies']} copies, "
                    f"{row[kind]['seconds']} s" for kind in kinds)
                print(f"{row['task']:32} {row['definition'].split(':')[1][:30]:30} {said}", flush=True)
                for kind in totals:
                    totals[kind] += bool(row.get(kind, {}).get("passing"))
    print("\ndefinitions with a passing rewrite: " + ", ".join(f"{kind} {n}" for kind, n in totals.items())
          + f" ({opts.samples} samples each)")


if __name__ == "__main__":
    main()
