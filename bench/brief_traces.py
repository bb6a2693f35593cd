"""Runs of many failing tests, where omni reads no trace: try_fixes' run of a candidate against the check's tests
(run_tests with brief=True: pytest's --tb=line, each failure's message whole) against the same run with pytest's
full traces (as before), and the spectrum's traced run (--tb=no) against it with pytest's default traces. The same
tests and the same failing ids each way; only the formatting of the traces differs, and the script checks that the
failing ids and their exceptions agree. Target: ratio <= 0.7 on a suite whose failing tests are most of the run.

By default a generated project: one module, one test file of --tests parametrized tests that fail through a few of
the module's frames (a dict compared in a helper, an exception raised three calls down), in a file of 900 lines
(pytest reads the file of each frame it shows). With --repo and --ids, a real project's checkout and a file of its
failing test ids (one per line), run with this Python.

Run: python bench/brief_traces.py [--tests 300] [--repeat 5] [--repo PATH --ids FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, report, timed

sys.path.insert(0, str(ROOT / "tools"))

import checks  # noqa: E402  (omni's sandbox tools, run here on the host in this Python)
from context import Context  # noqa: E402

MODULE = '''
def area(shape):
    return {"kind": shape["kind"], "area": _scaled(shape) * 0.5}


def _scaled(shape):
    return _checked(shape["size"]) * 2


def _checked(size):
    if size % 7 == 3:
        raise ValueError(f"size {size} is not allowed here")
    return size
'''

TESTS = '''import pytest

from shapes import area


def expect(size):
    assert area({{"kind": "square", "size": size}}) == {{"kind": "square", "area": size * size, "unit": "cm"}}


@pytest.mark.parametrize("size", range({count}))
def test_area(size):
    expect(size)
'''
HELPER = "\n\ndef helper_{n}(value):\n    total = value + {n}\n    return total * 2\n"  # a test file of real length


def generated(where: Path, count: int) -> tuple[Path, list[str]]:
    (where / "shapes.py").write_text(MODULE)
    (where / "tests").mkdir()
    (where / "tests" / "test_shapes.py").write_text(TESTS.format(count=count) + "".join(HELPER.format(n=n)
                                                                                     for n in range(150)))
    return where, ["tests/test_shapes.py"]


def spectrum(root: Path, selection: list[str], *extra: str) -> None:
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    try:
        subprocess.run([sys.executable, str(ROOT / "tools" / "spectrum_run.py"), str(out), str(root), *selection,
                        *extra], cwd=root, env=Context(root=root).env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    finally:
        out.unlink()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--ids", type=Path)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if opts.repo:
            root, selection = opts.repo.resolve(), opts.ids.read_text().split()
        else:
            root, selection = generated(Path(tmp), opts.tests)
        ctx = Context(root=root, project_python=sys.executable)
        brief, full = checks.run_tests(ctx, selection, brief=True), checks.run_tests(ctx, selection)
        same = brief["details"]["failing"] == full["details"]["failing"]
        raised = brief["details"]["raised"] == full["details"]["raised"]
        print(f"{len(full['details']['failing'])} failing; the same ids each way: {same}; the same exceptions: "
              f"{raised}\nthe first failure, brief:\n{next(iter(brief['details']['failures'].values()), '')}")
        ours, base = [], []
        for _ in range(opts.repeat):  # alternate, so drift in the machine's speed hits both alike
            ours += timed(lambda: checks.run_tests(ctx, selection, brief=True), 1)
            base += timed(lambda: checks.run_tests(ctx, selection), 1)
        report("A candidate's run of the check's failing tests", "brief traces (--tb=line)", ours,
               "full traces (pytest's default)", base, "<= 0.7")
        ours, base = [], []
        for _ in range(max(1, opts.repeat // 2)):
            ours += timed(lambda: spectrum(root, selection), 1)
            base += timed(lambda: spectrum(root, selection, "--tb=auto"), 1)
        report("The spectrum's traced run", "no traces (--tb=no)", ours, "pytest's default traces", base, "<= 0.8")
        if not same or not raised:
            sys.exit("the brief run's failing ids or exceptions differ from the full run's")


if __name__ == "__main__":
    main()
