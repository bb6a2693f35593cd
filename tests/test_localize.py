"""Localizing the fix before the first step (omni/repair/localize.py), with the real read-only tools of a
local sandbox over a real repo: each rule that names one definition, and the cases that name none."""

from __future__ import annotations

import pytest
from conftest import make_repo

from omni.box.local import LocalSandbox
from omni.goal.reading import read_goal
from omni.repair.localize import Spectrum, Target, fix_target, is_test_file

CORE = """def check_label(label):
    if label[0] == '-' and label[-1] == '-':
        raise ValueError(label)
    return True


def encode(text):
    return '.'.join(check_label(p) and p for p in text.split('.'))


def to_ascii(text):
    return encode(text).encode()


class Parser:
    def parse(self, text):
        return text


def parse(text):
    return Parser().parse(text)


VERSION = lambda: 1


def slice_spec(text):
    return [int(p) if p else None for p in text.split(':')]


def apply_slice(spec, items):
    return items[spec[0]:spec[1]]


def query(text, items):
    return apply_slice(slice_spec(text), items)


class Index:
    def query(self, text):
        return text


class Delta:
    def __init__(self, n):
        self.n = n
        self._fix()

    def _fix(self):
        self.n = self.n % 13

    def __eq__(self, other):
        return self.n == other.n


def long_one(x):
""" + "    x += 1\n" * 90 + "    return x\n"

TESTS = """import pkg
import pytest
from pkg.core import long_one


def test_check_label():
    assert pkg.check_label('a-')


def test_trailing():
    with pytest.raises(ValueError):
        pkg.core.to_ascii('a-.com')


def test_long():
    assert long_one(1) == 2


def test_apply_slice():
    assert pkg.core.query('1:', [0, 1, 2]) == [2]


def encode(x):
    return x
"""

PKG = {"pkg/__init__.py": "from pkg.core import check_label, encode, parse\n", "pkg/core.py": CORE,
       "pkg/other.py": "def encode(data):\n    return bytes(data)\n", "tests/test_core.py": TESTS}


@pytest.fixture
def sandbox(tmp_path):
    box = LocalSandbox(make_repo(tmp_path / "repo", PKG))
    yield box
    box.close()


@pytest.mark.parametrize("goal, tests, expressions, expected", [
    # 1. the goal says which: the file it names settles a name defined twice
    ("encode drops labels. Fix encode in pkg/core.py.", [], [], Target("pkg/core.py", "encode",
                                                                      "the goal says to fix encode")),
    ("Fix `pkg.core.check_label`, it lets hyphens through", [], [],
     Target("pkg/core.py", "check_label", "the goal says to fix pkg.core.check_label")),
    # 2. not written yet: the one name the examples call that nothing defines, in the one file the goal names
    ("Add count_reps(seq) to pkg/core.py", [], ["count_reps([0, 1, 0]) == {0: 2, 1: 1}", "encode('a') == 'a'"],
     Target("pkg/core.py", "count_reps", "the goal's examples call count_reps, which is not written yet, and the "
                                          "goal names pkg/core.py")),
    # 2. or a method its class, in the one file the goal names, does not have yet (a method it has is not new)
    ("Feature request: Delta.doubled() in pkg/core.py, twice the delta", [], [],
     Target("pkg/core.py", "Delta.doubled", "the goal names Delta.doubled, which Delta in pkg/core.py does not "
                                            "have yet")),
    # 3. a failing test named after a definition (the test file's own helpers never count)
    ("labels may end with a hyphen", ["tests/test_core.py::test_check_label"], [],
     Target("pkg/core.py", "check_label", "the failing test tests/test_core.py::test_check_label is named after it")),
    # 4. the only function of the project that the check calls (pytest.raises is not the project's)
    ("labels may end with a hyphen", ["tests/test_core.py::test_trailing"], [],
     Target("pkg/core.py", "to_ascii", "the only function of the project that the check calls")),
    # a bare call is to a module's function: the method of the same name does not make it two
    ("parse gives the wrong text", [], ["parse('a') == 'b'"],
     Target("pkg/core.py", "parse", "the only function of the project that the check calls")),
    # 5. the last function the examples run that is named after a word of the goal they do not spell out
    ("Slices with a step are ignored", [], ["pkg.core.query('::2', [0, 1, 2, 3]) == [0, 2]"],
     Target("pkg/core.py", "apply_slice", "the last function the goal's examples run that is named after the "
                                          "goal's word 'slice'")),
    # 6. the only short function, dunders aside, that the examples run: a constructor's helper
    ("Delta(12) is not normalized: it should equal Delta(0)", [], ["Delta(12)"],
     Target("pkg/core.py", "Delta._fix", "the only short function the goal's examples run")),
])
def test_one_rule_names_one_definition(sandbox, goal, tests, expressions, expected):
    assert fix_target(sandbox, read_goal(goal), tests, expressions) == expected


@pytest.mark.parametrize("goal, tests, expressions", [
    ("encode drops labels. Fix encode.", [], []),  # defined in two files, and the goal names neither
    ("parse gives the wrong text", [], ["pkg.parse('a') == 'b'"]),  # through a name: a function or the method
    ("long_one is off by one", ["tests/test_core.py::test_long"], []),  # one function, but over 80 lines
    ("add count_reps", [], ["count_reps([0, 1, 0]) == {0: 2, 1: 1}"]),  # still to be written, but where?
    ("add count_reps to pkg/nowhere.py", [], ["count_reps([1]) == {1: 1}"]),  # a file that does not exist
    ("add count_reps to tests/test_core.py", [], ["count_reps([1]) == {1: 1}"]),  # a test file
    ("add VERSION to pkg/core.py", [], ["VERSION() == 2"]),  # assigned at the top of pkg/core.py, not missing
    ("add count_reps and more to pkg/core.py", [], ["count_reps([1]) == more([1])"]),  # two names missing
    ("the docs are unclear", [], []),
    ("Delta._fix in pkg/core.py is slow", [], []),  # a method Delta has: not new, and nothing else names it
    # named after apply_slice, whose name its code never writes: the name alone is weak evidence (test_indent of a
    # template filter, and a compiler's method named indent); the spectrum then ties query, slice_spec, apply_slice
    ("a start of 1 gives the wrong items", ["tests/test_core.py::test_apply_slice"], []),
    ("add Gamma.doubled to pkg/core.py", [], []),  # no class Gamma there to add it to
    ("query gives the wrong items", [], ["pkg.core.query('::2', [0, 1, 2, 3]) == [0, 2]"]),  # no goal word
])
def test_no_single_short_definition_means_no_target(sandbox, goal, tests, expressions):
    assert fix_target(sandbox, read_goal(goal), tests, expressions) is None


def test_test_files_are_told_apart_from_code():
    assert is_test_file("tests/test_core.py") and is_test_file("pkg/test_x.py") and is_test_file("a/b_test.py")
    assert is_test_file(".omni/check/test_reproduce.py") and is_test_file("conftest.py")
    assert not is_test_file("pkg/core.py") and not is_test_file("pkg/testing_tools.py")


_COMPARE = ("def compare(a, b):\n    ra, rb = rank(a), rank(b)\n"
            "    return '=' if ra == rb else '<' if ra < rb else '>'\n")
VERSIONS = {
    "ver.py": ("def rank(v):\n    if v.endswith('+'):\n        return 0\n    return 1\n\n\n"
               "def describe(v):\n    text = 'version ' + v\n    return text\n\n\n" + _COMPARE),
    "tests/test_ver.py": "from ver import compare, describe, rank\n\n\n" + "".join(
        f"def test_a{n}():\n    describe('{n}+')\n    assert compare('{n}+', '{n}') == '>'\n\n\n"
        for n in (1, 2, 3)) + "".join(
        f"def test_b{n}():\n    assert compare('{n}+', '{n}') == '>'\n\n\n" for n in (4, 5, 6)) +
        "def test_c():\n    assert rank('7+') in (0, 2)\n\n\n" + "".join(
        f"def test_d{n}():\n    assert compare('{a}', '{b}') == '='\n\n\n"
        for n, (a, b) in enumerate(["12", "21", "11"])),
}


def test_the_spectrums_failing_side_is_every_failing_test_of_the_traced_files(tmp_path):
    """Six tests fail because rank() puts '+' versions first; the first three also call describe(), which no passing
    test runs. Three failing tests rank describe() first (the lines only they run); all six rank rank()'s faulty
    line first, which every failing test runs and one passing test does."""
    box = LocalSandbox(make_repo(tmp_path / "repo", VERSIONS))
    try:
        failing = [f"tests/test_ver.py::test_{x}" for x in ("a1", "a2", "a3", "b4", "b5", "b6")]
        three = box.run_tool("spectrum", {"failing": failing[:3]}, 120)
        assert three.success and three.details["suspects"][0]["symbol"] == "describe", three.output
        spectrum = Spectrum(box, failing)
        assert spectrum.failing() == failing
        ranked = spectrum.ranked()
        assert (ranked[0]["symbol"], ranked[0]["lines"]) == ("rank", [3]), ranked
        assert [s["symbol"] for s in ranked].index("describe") > 0
    finally:
        box.close()


SHOWN = {
    "values.py": ("class V:\n    def __init__(self, n):\n        self.n = n\n\n"
                  "    def __eq__(self, other):\n        return self.n == other.n\n\n"
                  "    def __repr__(self):\n        return f'V({self.text})'\n\n"
                  "    @property\n    def text(self):\n        return str(self.n)\n\n\n"
                  "def larger(a, b):\n    return a if a.n < b.n else b\n"),
    "tests/test_values.py": ("from values import V, larger\n\n\n"
                             "def test_larger():\n    assert larger(V(1), V(2)) == V(2)\n\n\n"
                             "def test_many():\n    assert [larger(V(1), V(2))] == [V(2)]\n\n\n"
                             "def test_same():\n    assert larger(V(2), V(2)) == V(2)\n\n\n"
                             "def test_text():\n    assert V(3).text == '3'\n"),
}


def test_what_pytests_report_of_a_failed_assert_runs_counts_on_neither_side(tmp_path):
    """The failing asserts compare V objects, so pytest's report formats them (through reprlib, and through pprint
    for the lists), running V.__repr__ and the property it reads in failing tests only. Those lines are left out:
    larger(), which the failing tests and a passing one run, is among the best; the property, which only a passing
    test runs itself, is not ranked at all."""
    box = LocalSandbox(make_repo(tmp_path / "repo", SHOWN))
    try:
        ran = box.run_tool("spectrum", {"failing": ["tests/test_values.py::test_larger",
                                                    "tests/test_values.py::test_many"]}, 120)
        assert ran.success, ran.error
        ranked = ran.details["suspects"]
        best = [s["symbol"] for s in ranked if s["score"] == ranked[0]["score"]]
        assert "larger" in best and len(best) == 2, ranked  # with __eq__, which the same tests run
        assert not {"V.__repr__", "V.text"} & {s["symbol"] for s in ranked}  # else 1.00: only failing tests
    finally:
        box.close()


MONEY = {
    "money.py": ("class Money:\n    def __init__(self, cents):\n        self.cents = cents\n\n"
                 "    def __eq__(self, other):\n        if self.cents == other.cents:\n            return True\n"
                 "        return False\n\n\n"
                 "def parse(text):\n    sign = 1\n    if text.startswith('-'):\n        text = text[1:]\n"
                 "    return Money(sign * int(text))\n\n\n"
                 "def money(cents):\n    return Money(cents)\n"),
    "tests/test_money.py": ("from money import money, parse\n\n\n"
                            "def test_negative():\n    assert parse('-5') == money(-5)\n\n\n"
                            "def test_positive():\n    assert parse('5') == money(5)\n\n\n"
                            "def test_zero():\n    assert parse('0') == money(0)\n"),
}


def test_the_assertions_own_comparison_is_no_suspect_unless_the_goal_speaks_of_comparing(tmp_path):
    """`assert parse('-5') == money(-5)` fails (two functions called: no rule before the spectrum names one), and
    Money.__eq__ takes its `return False` in that test alone: the spectrum scores it as high as the fault in parse.
    It is left out of the ranking, so parse is the one suspect, unless the goal speaks of comparing; then the
    comparison may be what is wrong, and it scores as parse does."""
    box = LocalSandbox(make_repo(tmp_path / "repo", MONEY))
    try:
        failing = ["tests/test_money.py::test_negative"]
        reading = read_goal("-5 comes back as 5: the minus sign is lost")
        target = fix_target(box, reading, failing, [])
        assert not reading.compares() and target is not None and (target.path, target.symbol) == ("money.py", "parse")
        assert "spectrum score 1.00" in target.why, target
        assert "Money.__eq__" not in [s["symbol"] for s in Spectrum(box, failing).ranked()]
        comparing = read_goal("parsed amounts and money(-5) do not compare equal")
        assert comparing.compares()
        ranked = Spectrum(box, failing, compares=True).ranked()
        assert {"Money.__eq__", "parse"} <= {s["symbol"] for s in ranked if s["score"] == ranked[0]["score"]}
    finally:
        box.close()


FILTERS = {
    "text.py": ("def shout(text):\n    return text.upper()\n\n\n"
                "def whisper(text):\n    return text.lower()\n\n\n"
                "def apply(name, text):\n    found = {'shout': shout, 'whisper': whisper}\n"
                "    if name not in found:\n        return text\n"
                "    return found[name](text)\n"),
    "tests/test_text.py": ("from text import apply\n\n\n"
                           "def test_shout():\n    assert apply('shout', 'hi') == 'HI!'\n\n\n"
                           "def test_unknown():\n    assert apply('loud', 'hi') == 'HI'\n\n\n"
                           "def test_whisper():\n    assert apply('whisper', 'HI') == 'hi'\n"),
}


@pytest.mark.parametrize("failing, expected", [
    # the test calls apply alone, an entry point the passing one runs as much; only the failing one runs shout
    ("test_shout", ("shout", "spectrum score 1.00")),
    # the line only the failing test runs is apply's own: it stays the target
    ("test_unknown", ("apply", "the only function of the project that the check calls")),
])
def test_the_one_function_the_check_calls_gives_way_to_one_the_failing_tests_single_out(tmp_path, failing, expected):
    box = LocalSandbox(make_repo(tmp_path / "repo", FILTERS))
    try:
        target = fix_target(box, read_goal("filters give the wrong text"), [f"tests/test_text.py::{failing}"], [])
        assert target is not None and target.path == "text.py", target
        assert target.symbol == expected[0] and expected[1] in target.why, target
    finally:
        box.close()


RANGES = {
    "ranges.py": ("class Ranges:\n    def __init__(self, items):\n        self.items = sorted(items)\n\n"
                  "    def _clip(self, top):\n        return [x for x in self.items if x <= top]\n\n"
                  "    def below(self, top):\n        return self._clip(top)\n"),
    "tests/test_ranges.py": ("from ranges import Ranges\n\n\n"
                             "def test_below_leaves_the_top_out():\n    assert Ranges([1, 2, 3]).below(2) == [1]\n"),
}


def test_suspects_the_tests_rank_alike_are_ordered_by_the_goals_code_names(tmp_path):
    """One failing test and no passing one: every line it ran scores 1.00, and the three definitions tie, in name
    order. A goal that writes `r._clip` as code puts _clip first among them; one that names none leaves name order."""
    box = LocalSandbox(make_repo(tmp_path / "repo", RANGES))
    try:
        failing = ["tests/test_ranges.py::test_below_leaves_the_top_out"]
        plain = [s["symbol"] for s in Spectrum(box, failing).ranked()]
        assert plain == ["Ranges.__init__", "Ranges._clip", "Ranges.below"], plain
        named = read_goal("what is below 2 in a Ranges still holds the 2; I think r._clip keeps the top").code_words()
        ranked = Spectrum(box, failing, named=named).ranked()
        assert [s["symbol"] for s in ranked] == ["Ranges._clip", "Ranges.__init__", "Ranges.below"], ranked
        assert len({s["score"] for s in ranked}) == 1  # the order of equals only
    finally:
        box.close()
