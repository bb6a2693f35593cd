"""A pytest plugin that records what one definition's lines did in the first failing test that calls it: each line as
it ran, with the local names it set and their values, and what the call returned or raised (as in LDB, which shows a
model the intermediate values of a failing run). For bench/spec_reach.py's `trace` ask only; omni does not use it.

    VALUETRACE_FILE=src/pkg/mod.py VALUETRACE_NAME=func VALUETRACE_OUT=trace.json python -m pytest -p valuetrace ...

The out file holds the failed test's calls, each a list of events: ["line", lineno, {name: repr}] for a line that
ran and the names whose values it changed, ["return", repr] or ["raise", repr].
"""

from __future__ import annotations

import json
import os
import reprlib
import sys

import pytest

MAX_CALLS = 2
MAX_EVENTS = 40

_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxlist, _short.maxdict = 60, 60, 8, 6

FILE, NAME, OUT = (os.environ.get(k, "") for k in ("VALUETRACE_FILE", "VALUETRACE_NAME", "VALUETRACE_OUT"))
_calls: list[list] = []
_done = False


def _value(value: object) -> str:
    try:
        return _short.repr(value)
    except Exception:  # a repr that raises
        return f"<{type(value).__name__}>"


def _ours(frame) -> bool:
    code = frame.f_code
    return code.co_name == NAME.rpartition(".")[2] and code.co_filename.replace(os.sep, "/").endswith(FILE)


def _tracer(frame, event, arg):
    if event != "call" or not _ours(frame) or len(_calls) >= MAX_CALLS:
        return None
    events: list = []
    _calls.append(events)
    seen = {name: _value(v) for name, v in frame.f_locals.items()}
    pending: list = []  # the line that is running, until the next event shows what it set

    def local(frame, event, arg):
        nonlocal seen, pending
        now = {name: _value(v) for name, v in frame.f_locals.items()}
        if pending and len(events) < MAX_EVENTS:
            events.append(["line", pending[0], {k: v for k, v in now.items() if seen.get(k) != v}])
        seen, pending = now, []
        if event == "line":
            pending = [frame.f_lineno]
        elif event == "return" and len(events) < MAX_EVENTS + 1:
            events.append(["return", _value(arg)])
        elif event == "exception" and len(events) < MAX_EVENTS + 1:
            events.append(["raise", f"{arg[0].__name__}: {_value(arg[1])}"])
        return local

    return local


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    global _calls
    if _done:
        yield
        return
    _calls = []
    sys.settrace(_tracer)
    try:
        yield
    finally:
        sys.settrace(None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    global _done
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and not _done and _calls:
        _done = True
        with open(OUT, "w") as out:
            json.dump(_calls, out)
