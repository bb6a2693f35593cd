"""Run pytest with a line tracer and write, for each test, whether it failed and which lines of the project's own
code (not its tests, not installed packages) it ran. Runs in the project's Python, which has pytest; only the
standard library besides. Started by tools/spectrum.py: `python spectrum_run.py OUT ROOT pytest-args...`."""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import threading

import pytest


def _is_test(rel: str) -> bool:
    parts = rel.split(os.sep)
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test", "testing") for p in parts[:-1]))


STDLIB = sysconfig.get_paths()["stdlib"]
MAX_DEPTH = 12  # frames looked up past the standard library's for pytest's


def _is_pytest(filename: str) -> bool:
    return f"{os.sep}_pytest{os.sep}" in filename


class Spectrum:
    def __init__(self, root: str):
        self.root = os.path.realpath(root) + os.sep
        self.own: dict[str, str | None] = {}  # a code object's file -> its path in the project, or None
        self.lines: set[tuple[str, int]] = set()
        self.reporting: set[int] = set()  # the project's frames whose lines count on neither side (not traced)
        self.tests: dict[str, dict] = {}

    def _project(self, filename: str) -> str | None:
        if filename not in self.own:
            real = os.path.realpath(filename)
            rel = real[len(self.root):] if real.startswith(self.root) else None
            keep = rel is not None and rel.endswith(".py") and not _is_test(rel) and "site-packages" not in rel
            self.own[filename] = rel if keep else None
        return self.own[filename]

    def _call(self, frame, event, arg):
        rel = self._project(frame.f_code.co_filename)
        if rel is None:
            return None
        if frame.f_code.co_name == "<module>" or self._under_pytest(frame.f_back):
            # pytest's report of a failed assert formats the values it compared; a module imported in a test's body
            # (an example's names, resolved as it runs) runs its top level there, where the passing tests ran it
            # at collection, untraced: neither is what the test is about
            self.reporting.add(id(frame))
            return self._reported
        self.lines.add((rel, frame.f_lineno))
        return self._line

    def _under_pytest(self, caller) -> bool:
        """Whether a project frame called from caller runs under pytest's own code: a frame pytest called (through
        the standard library's reprlib or pprint, say), or one such a frame called."""
        for _ in range(MAX_DEPTH):
            if caller is None or self._project(caller.f_code.co_filename) is not None:
                return caller is not None and id(caller) in self.reporting
            name = caller.f_code.co_filename
            if _is_pytest(name):
                return True
            if not name.startswith((STDLIB, "<")):  # a test file, a plugin: the test's own calls
                return False
            caller = caller.f_back
        return False

    def _reported(self, frame, event, arg):
        """A frame of the project's that pytest called (the report of a failed assert calling a __repr__, and all
        it calls), or a module's top level run on import, and all it calls: only some tests run it, whatever the
        bug, so its lines count on neither side."""
        if event == "return":
            self.reporting.discard(id(frame))
        return self._reported

    def _line(self, frame, event, arg):
        if event == "line":
            self.lines.add((self.own[frame.f_code.co_filename], frame.f_lineno))
        return self._line

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.lines = set()
        self.tests[item.nodeid] = {"failed": False, "lines": []}
        threading.settrace(self._call)
        sys.settrace(self._call)
        try:
            yield
        finally:
            sys.settrace(None)
            threading.settrace(None)
            self.tests[item.nodeid]["lines"] = sorted(self.lines)

    def pytest_runtest_logreport(self, report):
        if report.failed and report.nodeid in self.tests:
            self.tests[report.nodeid]["failed"] = True


def main() -> int:
    out, root, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.path[0] = root  # as `python -m pytest` in the root has it, and no module of omni's tools folder in the way
    spectrum = Spectrum(root)
    # no traces: only which tests fail counts here, and formatting a trace per failing test costs a quarter of
    # the traced run of a suite with hundreds of them (bench/brief_traces.py); args may ask for them again
    code = pytest.main(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", "--tb=no",
                        "-W", "ignore::pytest.PytestDeprecationWarning", *args],
                       plugins=[spectrum])
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"exit_code": int(code), "tests": spectrum.tests}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
