"""bench/failures.py: the bug's definitions read from a real patch on a real git repo, and each way a run fails."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_failures", ROOT / "bench" / "failures.py")
failures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(failures)

SOURCE = '''LIMIT = 3


def top(x):
    return x + 1


class Box:
    @staticmethod
    def size(a):
        def inner(b):
            return b * 2
        return inner(a)

    def drop(self, items):
        kept = []
        for item in items:
            kept.append(item)
        return kept
'''


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def _bug(tmp_path: Path, edit) -> tuple[str, Path]:
    """A repo with SOURCE committed, then `edit` applied and committed as the bug; the bug's patch."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "mod.py").write_text(SOURCE)
    (repo / "tests" / "test_mod.py").write_text("def test_top():\n    assert True\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "upstream")
    edit(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "bug")
    return _git(repo, "diff", "HEAD~1", "HEAD"), repo


def _replace(old: str, new: str, test_too: bool = False):
    def edit(repo: Path) -> None:
        mod = repo / "pkg" / "mod.py"
        mod.write_text(mod.read_text().replace(old, new))
        if test_too:
            (repo / "tests" / "test_mod.py").write_text("def test_top():\n    assert 1\n")
    return edit


def test_the_innermost_definition_of_each_changed_line(tmp_path):
    patch, repo = _bug(tmp_path, _replace("return b * 2", "return b * 3"))
    assert failures.bug_definitions(patch, repo) == ["pkg/mod.py:Box.size.inner"]
    patch, repo = _bug(tmp_path / "b", _replace("LIMIT = 3", "LIMIT = 4"))
    assert failures.bug_definitions(patch, repo) == ["pkg/mod.py:<module>"]


def test_a_removal_names_the_definition_it_left_and_test_files_are_left_out(tmp_path):
    patch, repo = _bug(tmp_path, _replace("        kept = []\n", "", test_too=True))
    assert failures.bug_definitions(patch, repo) == ["pkg/mod.py:Box.drop"]


def test_two_places_and_a_decorator_line(tmp_path):
    def edit(repo: Path) -> None:
        _replace("@staticmethod", "@classmethod")(repo)
        _replace("x + 1", "x - 1")(repo)

    patch, repo = _bug(tmp_path, edit)
    assert failures.bug_definitions(patch, repo) == ["pkg/mod.py:top", "pkg/mod.py:Box.size"]


def test_same_definition_by_file_and_name():
    right = "pkg/mod.py:Box.size"
    assert failures.same_definition("pkg/mod.py:Box.size", right)
    assert failures.same_definition("./pkg/mod.py:size", right)  # a method named without its class
    assert failures.same_definition("pkg/mod.py:Box", right)  # the class around it
    assert not failures.same_definition("pkg/other.py:Box.size", right)
    assert not failures.same_definition("pkg/mod.py:Other.size", right)
    assert not failures.same_definition("pkg/mod.py:Box.drop", right)
    assert failures.same_definition("pkg/mod.py:added_function", "pkg/mod.py:<module>")


def _events(*, check="failing tests", opening=None, candidates=(), edit=None):
    events = [{"kind": "check", "source": check}]
    if opening:
        events.append({"kind": "opening", "path": opening[0], "symbol": opening[1]})
    events += [{"kind": "candidate", "target": t, "passes": p, "breaks": b} for t, p, b in candidates]
    if edit:
        events += [{"kind": "action", "n": 3, "tool": "replace_in_file", "args": {"path": edit[0]}},
                   {"kind": "observation", "n": 3, "success": True, "details": {"symbols": [edit[1]]}}]
    return events


def test_each_kind_of_failure():
    right = ["pkg/mod.py:Box.size"]
    on_right = ("pkg/mod.py", "Box.size")
    cases = [
        (_events(opening=on_right), "finished", "finished, graded wrong"),
        (_events(check="none", opening=on_right), "limit_time", "no check"),
        ([], "killed", "no check"),
        (_events(), "limit_time", "no target"),
        (_events(opening=("pkg/mod.py", "top")), "limit_time", "wrong target"),
        (_events(edit=("pkg/mod.py", "Box.drop")), "limit_steps", "wrong target"),
        (_events(opening=on_right, candidates=[("pkg/mod.py:Box.size", True, ["t::a"]),
                                               ("pkg/mod.py:Box.size", False, [])]), "limit_time", "broke tests"),
        (_events(opening=on_right, candidates=[("pkg/mod.py:Box.size", False, [])]), "limit_time",
         "no passing candidate"),
        (_events(opening=on_right, candidates=[("pkg/mod.py:Box.size", True, [])]), "limit_time", "not accepted"),
        (_events(opening=("pkg/mod.py", "top"), edit=("pkg/mod.py", "size")), "limit_time", "wrong edit"),
    ]
    for events, status, kind in cases:
        how = failures.classify(events, right, status)
        assert how["kind"] == kind, (events, status, how)
        assert how["right"] == right and how["ended"] == status
    how = failures.classify(_events(opening=("pkg/mod.py", "top"), edit=("pkg/mod.py", "size")), right, "x")
    assert how["tried"] == ["pkg/mod.py:top", "pkg/mod.py:size"] and how["spectrum_rank"] is None
    assert how["value_rounds"] == []
    valued = [*_events(opening=("pkg/mod.py", "top")), {"kind": "rung", "path": "pkg/mod.py", "symbol": "UNITS",
                                                         "reader": "top"}]
    assert failures.classify(valued, right, "x")["value_rounds"] == ["pkg/mod.py:UNITS"]


def test_where_the_bugs_definition_stood_in_the_spectrum():
    right = ["pkg/mod.py:Box.size"]
    ranked = [{"path": "pkg/mod.py", "symbol": s, "score": 0.5, "lines": [3]} for s in ("top", "Box.drop", "Box.size")]
    spectrum = {"kind": "spectrum", "side": "failing", "error": "", "suspects": ranked}
    assert failures.spectrum_rank([spectrum], right) == 3
    assert failures.spectrum_rank([{**spectrum, "suspects": ranked[:2]}], right) == 0
    assert failures.spectrum_rank(_events(), right) is None
    assert failures.classify([*_events(opening=("pkg/mod.py", "top")), spectrum], right, "x")["spectrum_rank"] == 3
