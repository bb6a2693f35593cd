"""Where the fix most likely goes, before the model has read anything: one definition, found from the goal
(omni/goal/reading.py) and the run's check. Verified repair's opening round samples rewrites of it.

Tried in this order; the first rule that names exactly one definition wins:
1. the goal says to fix it ("Fix parse_size in units.py");
2. it is not written yet: the goal's examples call one name the project does not define, and the goal names
   one Python file outside the tests for it ("add word_count(text) to text/stats.py"); rewrites of it are new
   functions, added to that file. Or the goal names one `Class.method` that the class, in the one file it names,
   does not have: rewrites of it are new methods, added to the class;
3. a failing test is named after it, and its code names it (test_parse_size calls parse_size);
4. the failing tests and the goal's examples call exactly one name the project defines, and defines once; unless
   the failing tests single out another definition (the spectrum's one with a line only they run, all of them:
   the name they call is an entry point that the passing tests run as much);
5. of the functions the goal's examples run, the last one called that is named after a word of the goal the
   examples do not spell out ("negative sizes are rejected" and `parse('-1k')` ran `check_sign` last): the
   symptom shows in the result, so the last such function is the nearest to it;
6. the only short function, dunder methods aside, that the goal's examples run (a constructor that calls one
   helper: the helper);
7. the one definition the failing tests run and the passing ones run least (spectrum-based fault localization,
   tools/spectrum.py): no word of the goal is needed. Where no test fails, the goal's examples that do not hold
   are the failing side, and the tests of the code they run the passing one.
A target the tests cannot tell from others (a tie at the top: `tied`; examples alone whose run goes through other
definitions, none or another singled out: `chained`) is first tried by its one-change candidates, as the others
are, before any is rewritten.
When no rule names one, or a round on the one named finds no fix, `suspects` gives the next to try: the spectrum's
best, ties included (omni/repair/strategy.py tries up to three, and two long ones besides); after them, the
values a definition tried reads (`values_of`: a fault in a module's table is not in the function, and the spectrum
cannot see it, since every test runs a module's assignments on import); then the next suspects' one-change
candidates alone (a few, no model call each).
A definition in a test file is never the target. One longer than MAX_LINES is not asked for whole (its rewrites
would cost minutes of generation on a small local model): rules 1-6 pass it by, and as the spectrum's suspect it
gets its mechanical candidates alone (omni/repair/verified.py), or with block rewrites (omni/repair/block.py) the
lines around the ones the tests point to. Everything is looked up with the sandbox's read-only tools.
"""

from __future__ import annotations

import ast
import builtins
import textwrap
from collections import Counter
from dataclasses import dataclass
from functools import cache, partial
from pathlib import PurePosixPath

from omni.box.toolbox import details
from omni.goal.examples import bare_calls, calls_in, spelled
from omni.goal.reading import GoalReading, name_words
from omni.protocols import Events, Sandbox

MAX_LINES = 80
MAX_TESTS = 3  # failing tests whose bodies are read for rule 4; the spectrum traces their files
MAX_FAILING = 400  # failing tests in those files that make the spectrum's failing side
ALONE = 0.999  # a spectrum score of 1: every failing test runs the line, and no passing test does
MAX_TRACED = 6  # rule 6 looks for the one short function among at most this many the examples ran
_NOT_PROJECT = set(dir(builtins)) | {"self", "super"}
_SHOWN = {"__repr__", "__str__"}  # methods that show a value: never the spectrum's suspects
# What `assert got == expected` runs to compare: where the two differ, a custom __eq__ takes its unequal path in
# the failing tests alone (the passing ones compare equal values), so the spectrum puts it first whatever the fault.
# A suspect only when the goal speaks of comparing (GoalReading.compares); a rewrite that makes it say "equal"
# passes every such assertion and fixes nothing.
_COMPARES = {"__eq__", "__ne__"}


@dataclass(frozen=True)
class Target:
    path: str
    symbol: str  # qualified: Class.method
    why: str
    lines: tuple[int, ...] = ()  # the lines the failing tests point to (the spectrum's equally best), when known
    ran: tuple[tuple[int, ...], ...] = ()  # its other lines the failing tests ran, in tiers of equal score, best first
    size: int = 0  # the definition's length in lines, when known
    reader: str = ""  # when the target is a value (a module's or a class's table, pattern, constant): who reads it
    swept: bool = False  # a suspect past those rewritten whole: tried by its mechanical candidates alone
    score: float = 0.0  # the spectrum's score, for a suspect it ranked

    @property
    def long(self) -> bool:
        """Too long to ask a model for whole: verified repair tries its mechanical candidates alone."""
        return self.size > MAX_LINES


def fix_target(sandbox: Sandbox, reading: GoalReading, tests: list[str], expressions: list[str],
               spectrum: Spectrum | None = None) -> Target | None:
    near = reading.files_in(set())
    for name in reading.fix:
        if found := definition(sandbox, name, near):
            return Target(found[0], found[1], f"the goal says to fix {name}")
    if new := _not_written(sandbox, near, expressions) or _new_method(sandbox, near, reading):
        return new
    source = cache(partial(_test_source, sandbox))  # a test's source, read once for rules 3 and 4
    named = {t: _test_name(t).removeprefix("test_") for t in tests}
    defined = {d.name for d in _definitions(sandbox, [n for n in named.values() if n]) or []}
    for test, name in named.items():  # read_symbol scans the repository: only for names defined outside tests
        if name in defined and _names_it(source(test), name) and (found := definition(sandbox, name, near)):
            return Target(found[0], found[1], f"the failing test {test} is named after it")
    spectrum = spectrum or Spectrum(sandbox, tests, compares=reading.compares(), named=reading.code_words())
    called = _called(sandbox, {t: source(t) for t in tests[:MAX_TESTS]}, expressions)
    if len(called) == 1 and (found := definition(sandbox, called[0], near)):
        return _singled_out(spectrum, Target(found[0], found[1], "the only function of the project that the check "
                                                                 "calls"))
    return _traced(sandbox, reading, expressions) or _suspected(spectrum)


def _singled_out(spectrum: Spectrum, called: Target) -> Target:
    """Rule 4 gives way to the spectrum when the failing tests single out another definition: the one, outside the
    tests, with a line every failing test runs and no passing one does (score 1), where the one the check calls has
    no such line. The check calls a library through its entry point (`Client(config).send(request)`), which the
    passing tests run as much; what goes wrong is in the code only the failing ones reach. The spectrum is asked only
    when the check is failing tests: for the goal's examples alone, the one function they call is their subject."""
    if not spectrum.tests:
        return called
    alone = [s for s in spectrum.ranked() if s["score"] >= ALONE and not is_test_file(s["path"])]
    if len(alone) != 1 or (alone[0]["path"], alone[0]["symbol"]) == (called.path, called.symbol):
        return called
    return _suspect(spectrum, alone[0]) or called


def _suspected(spectrum: Spectrum) -> Target | None:
    """Rule 7: the one definition the failing tests run most and the passing ones least (tools/spectrum.py:
    line coverage of both, scored per line; among equals, the one the passing tests run more of), when no other
    definition ranks as high."""
    ranked = spectrum.ranked()
    if not ranked:
        return None
    top = [s for s in ranked if (s["score"], s["shared"]) == (ranked[0]["score"], ranked[0]["shared"])]
    if len(top) != 1 or is_test_file(top[0]["path"]):
        return None
    return _suspect(spectrum, top[0])


def suspects(spectrum: Spectrum, tried: set[tuple[str, str]], limit: int) -> list[Target]:
    """The next definitions to try when a round on the first found no fix: the spectrum's best (tools/spectrum.py),
    ties included, outside tests, not tried yet, at most `limit`."""
    found: list[Target] = []
    for entry in _scored(spectrum):
        if len(found) >= limit:
            break
        if (target := _suspect(spectrum, entry)) and (target.path, target.symbol) not in tried:
            found.append(target)
    return found


class Spectrum:
    """The spectrum tool's ranking for the failing tests, run when first asked and then remembered: the opening
    round's rule 7 and the next suspects after it ask on the code as it was at the start (a round that finds no fix
    leaves nothing applied). Make a new one for code that has changed."""

    def __init__(self, sandbox: Sandbox, tests: list[str], max_lines: int = MAX_LINES,
                 examples: list[dict] | None = None, events: Events | None = None, compares: bool = False,
                 named: frozenset[str] = frozenset()):
        self.sandbox, self.tests, self.max_lines = sandbox, tests, max_lines  # max_lines: of a suspect
        self.named = named  # the words of the names the goal writes as code: they order the suspects tied
        self.left_out = _SHOWN if compares else _SHOWN | _COMPARES  # compares: the goal speaks of comparing
        self.examples = [e for e in examples or [] if e.get("expected")]  # the failing side when no test fails
        self.events = events  # told the ranking once it is made (the `spectrum` event), for the run's record
        self._ranked: list[dict] | None = None

    def ranked(self) -> list[dict]:
        """Best first, without the methods that show a value (__repr__, __str__), nor, unless the goal speaks of
        comparing, those an assertion compares with (__eq__, __ne__). What pytest's report of a failed assert runs is
        left out by the tracer itself (tools/spectrum_run.py); these stay out also when a test shows a value of its
        own accord."""
        if self._ranked is None:
            side = {"failing": self.failing()} if self.tests else \
                {"examples": self.examples[:MAX_TESTS]} if self.examples else None
            ran = self.sandbox.run_tool("spectrum", side, 600) if side else None
            found = getattr(details("spectrum", ran), "suspects", []) if ran and ran.success else []
            kept = [s for s in found if s["symbol"].rsplit(".", 1)[-1] not in self.left_out]
            self._ranked = tie_order(kept, self.named)
            if self.events and ran:
                self.events.emit("spectrum", side=next(iter(side)), error="" if ran.success else ran.error[:300],
                                 suspects=[{"path": s["path"], "symbol": s["symbol"], "score": s["score"],
                                            "shared": s.get("shared", 0), "lines": s["lines"][:5]}
                                           for s in self._ranked])
        return self._ranked

    def failing(self) -> list[str]:
        """The spectrum's failing side: every failing test in the files of the first MAX_TESTS (the tracer runs
        those files whole either way). Three of many failing tests make the lines those three run alike the best,
        where the cause runs in every failing test and in some passing ones: a flaw in code every test runs shows
        first in what it leads to in a few of them."""
        files = {t.split("::")[0] for t in self.tests[:MAX_TESTS]}
        return [t for t in self.tests if t.split("::")[0] in files][:MAX_FAILING]


def tie_order(suspects: list[dict], named: frozenset[str]) -> list[dict]:
    """The spectrum's suspects, with those the tests rank alike (score, then lines shared) ordered by how many words
    of the definition's own name (`_get_total` of `Cart._get_total`) are among `named`, the words of the names the
    goal writes as code: the more first, else by path and name as the tool sorts. The tests cannot tell suspects
    apart when no passing test runs their lines (a repository with no tests, the goal's examples or a reproduction
    test the only evidence): the names the user writes are then the one sign left, where the tool's own order is
    the alphabet's. They are no reason to rank a definition above one the tests prefer (run DD, bench/README.md)."""
    def key(s: dict) -> tuple:
        return -s["score"], -s.get("shared", 0), -len(name_words(s["symbol"].rsplit(".", 1)[-1]) & named)
    return sorted(suspects, key=key)


def _suspect(spectrum: Spectrum, entry: dict) -> Target | None:
    found = definition(spectrum.sandbox, entry["symbol"], [entry["path"]], spectrum.max_lines)
    if found is None:
        return None
    return Target(found[0], found[1], f"the failing tests run it and the passing ones less: spectrum score "
                                      f"{entry['score']:.2f} at line {entry['lines'][0]}", tuple(entry["lines"]),
                  tuple(map(tuple, entry.get("ran", []))), found[2], score=float(entry["score"]))


def _scored(spectrum: Spectrum) -> list[dict]:
    """The spectrum's ranking of the definitions outside the tests that some failing run scores above 0."""
    return [e for e in spectrum.ranked() if e["score"] > 0 and not is_test_file(e["path"])]


def tied(spectrum: Spectrum, target: Target) -> bool:
    """Whether target is at the top of the spectrum's ranking with another definition outside the tests as high: a
    tie at the top (a constructor and the method it sets up, run by the same tests) is a ranking in doubt, whatever
    the passing tests' share that broke it or the rule that picked the target (the one function the check calls)."""
    ranked = _scored(spectrum)
    top = [e for e in ranked if e["score"] >= ranked[0]["score"]]
    return len(top) > 1 and any((e["path"], e["symbol"]) == (target.path, target.symbol) for e in top)


def outranked(spectrum: Spectrum, target: Target) -> bool:
    """Whether the spectrum ranks target, picked by a rule of the goal's or the check's words (the failing test is
    named after it, the one function the check calls), below another definition outside the tests: the rule and the
    tests disagree, a ranking in doubt. The caller a test is named after runs for passing tests too, where the
    helper at fault runs its wrong line only for the failing ones; sampling the caller first spent 50 to 90 s before
    the sweep of the spectrum's best found the fix in seconds (bench/README.md, run CR). A target the spectrum does
    not rank at all (a definition not written yet, or one no test runs) is not in doubt: there is nothing to weigh."""
    ranked = _scored(spectrum)
    own = [e["score"] for e in ranked if (e["path"], e["symbol"]) == (target.path, target.symbol)]
    return bool(own) and own[0] < ranked[0]["score"]


def chained(spectrum: Spectrum, target: Target) -> bool:
    """Whether the check is the goal's examples alone and their run went through definitions of the project other
    than target, and does not single out target: the ranking is in doubt. A line only the examples run, in one
    definition other than target, is a doubt too: the function they call is not where they go wrong, and sampling it
    first spends minutes there; the sweep reaches the one singled out in seconds, and lineup.py rewrites it whole
    first. The examples call a function that calls
    others; every line of that chain the examples run, the passing tests of the same code run too, so the spectrum
    puts the function called first whatever the fault (a wrong comparison in the helper it calls scores lower than
    the caller's one line). What changes the examples' outcome tells them apart, and one-change candidates are that
    test: each definition of the chain is swept before any is rewritten whole (omni/repair/lineup.py)."""
    if spectrum.tests or not spectrum.examples:
        return False
    ranked = _scored(spectrum)
    if ranked and ranked[0]["score"] >= ALONE and (len(ranked) == 1 or ranked[1]["score"] < ALONE):
        return (ranked[0]["path"], ranked[0]["symbol"]) != (target.path, target.symbol)  # singled out: target?
    return any((e["path"], e["symbol"]) != (target.path, target.symbol) for e in ranked)


def values_of(sandbox: Sandbox, path: str, symbol: str) -> list[Target]:
    """The values the definition reads (read_symbol's `reads`: its module's and its class's, written with a literal),
    as targets of their own: a fault in a table or a pattern a function reads is not in the function, and the
    spectrum cannot point to it (every test runs a module's assignments when it imports it)."""
    ran = sandbox.run_tool("read_symbol", {"symbol": symbol, "path": path}, 60)
    found = details("read_symbol", ran).reads if ran.success else []
    return [Target(v.path, v.name, f"{symbol} reads it, and the rewrites of {symbol} found no fix",
                   size=v.end - v.start + 1, reader=symbol) for v in found]


def _not_written(sandbox: Sandbox, near: list[str], expressions: list[str]) -> Target | None:
    """Rule 2: the one name the examples call bare that nothing in the project defines, to be added to the
    one Python file the goal names."""
    files = [p for p in near if p.endswith(".py") and not is_test_file(p)]
    called = sorted(set().union(*map(bare_calls, expressions)) - _NOT_PROJECT)
    if len(files) != 1 or not called:
        return None
    found = _definitions(sandbox, called, ("def", "class", "assign"))
    if found is None:  # the search did not run: nothing can be said to be missing
        return None
    missing = [n for n in called if n not in {d.name for d in found}]
    if len(missing) != 1 or not sandbox.run_tool("outline", {"path": files[0]}, 60).success:
        return None
    return Target(files[0], missing[0], f"the goal's examples call {missing[0]}, which is not written yet, "
                                        f"and the goal names {files[0]}")


def _new_method(sandbox: Sandbox, near: list[str], reading: GoalReading) -> Target | None:
    """Rule 2, for a method: the goal names one `Class.method`, the one Python file it names defines Class, and
    Class has no such method yet ("add Version.is_compatible(other) to version.py")."""
    files = [p for p in near if p.endswith(".py") and not is_test_file(p)]
    dotted = [s for s in reading.symbols if s.count(".") == 1 and all(p.isidentifier() for p in s.split("."))]
    if len(files) != 1 or len(dotted) != 1 or not missing_method(sandbox, files[0], dotted[0]):
        return None
    return Target(files[0], dotted[0], f"the goal names {dotted[0]}, which {dotted[0].split('.')[0]} in "
                                       f"{files[0]} does not have yet")


def missing_method(sandbox: Sandbox, path: str, symbol: str) -> bool:
    """Whether symbol is `Class.method` for a class path defines once that has no such method."""
    owner, _, name = symbol.partition(".")
    if not (owner.isidentifier() and name.isidentifier()) or \
            sandbox.run_tool("read_symbol", {"symbol": symbol, "path": path}, 60).success:
        return False
    found = sandbox.run_tool("read_symbol", {"symbol": owner, "path": path}, 60)
    return found.success and len(details("read_symbol", found).definitions) == 1


def _traced(sandbox: Sandbox, reading: GoalReading, expressions: list[str]) -> Target | None:
    """Rules 5 and 6, from the functions the examples ran: the last one that shares a word with the goal
    (not one of the examples' own words) and is short enough to rewrite; else the only short one that is
    not a dunder method (a constructor and its one helper: the helper)."""
    if not expressions:
        return None
    ran = sandbox.run_tool("check_examples", {"examples": [{"expression": e, "expected": "None"} for e in expressions],
                                              "trace": True}, 90)
    if not ran.success:
        return None
    own = {w for e in expressions for name in spelled(e) for w in name_words(name)}
    words = reading.plain - own
    called = list(dict.fromkeys((path, name) for r in details("check_examples", ran).results
                                for path, name, _ in r.get("called", [])))
    for path, name in reversed(called):
        shared = sorted(name_words(name.rsplit(".", 1)[-1]) & words)
        if shared and (found := definition(sandbox, name, [path])):
            return Target(found[0], found[1], f"the last function the goal's examples run that is named after "
                                              f"the goal's word {shared[0]!r}")
    plain = [(path, name) for path, name in called if not _dunder(name.rsplit(".", 1)[-1])]
    short = [found for path, name in plain[:MAX_TRACED] if (found := definition(sandbox, name, [path]))]
    if len(plain) <= MAX_TRACED and len(short) == 1:
        return Target(short[0][0], short[0][1], "the only short function the goal's examples run")
    return None


def definition(sandbox: Sandbox, name: str, near: list[str],
               max_lines: int = MAX_LINES) -> tuple[str, str, int] | None:
    """(path, qualified name, length in lines) of the one definition of at most max_lines outside the tests that
    `name` names, preferring the files the goal names; None when there is none or more than one."""
    ran = sandbox.run_tool("read_symbol", {"symbol": name, "path": "."}, 60)
    if not ran.success:
        return None
    found = [d for d in details("read_symbol", ran).definitions if not is_test_file(d.path)]
    found = [d for d in found if any(d.path == p or d.path.endswith("/" + p) for p in near)] or found
    exact = [d for d in found if name == d.name or name.endswith("." + d.name)]
    one = exact[0] if len(exact) == 1 else found[0] if len(found) == 1 else None
    if one is None or one.end - one.start + 1 > max_lines:
        return None
    return one.path, one.name, one.end - one.start + 1


def _called(sandbox: Sandbox, tests: dict[str, str], expressions: list[str]) -> list[str]:
    """The names the tests' bodies (tests: id to source) and the expressions call that the project defines once.
    A bare call (`word_count(...)`) is to a module's function, so only those count for it; a call through a name
    (`pkg.parse(...)`) may be to a method too, so a function and a method of its name are two."""
    sources = [*expressions, *filter(None, tests.values())]
    own = {_test_name(t) for t in tests}
    calls = [call for s in sources for call in calls_in(s)]
    names = sorted({n for n, _ in calls} - _NOT_PROJECT - own)
    names = [n for n in names if not n.startswith(("assert", "test_"))]
    hits = _definitions(sandbox, names, ("def",)) or []
    anywhere = Counter(d.name for d in hits)
    top_level = Counter(d.name for d in hits if d.top_level)
    return sorted(n for n in names if (anywhere if any(t for m, t in calls if m == n) else top_level)[n] == 1)


def _test_source(sandbox: Sandbox, test: str) -> str:
    """A test function's source, read by its pytest id; "" for an id that names no function (a doctest's)."""
    path, _, rest = test.partition("::")
    ran = sandbox.run_tool("read_symbol", {"symbol": rest.replace("::", ".").split("[")[0], "path": path}, 60)
    return (details("read_symbol", ran).sources[:1] or [""])[0] if ran.success and rest else ""


def _names_it(source: str, name: str) -> bool:
    """Whether a test's code names `name` (called, passed or read as an attribute; not in a string): a test named
    after a function that reaches it through other code (a template, a wrapper) is about that code, and rule 3 gives
    way to the rules after it. A source that cannot be read or parsed is taken to name it."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return True
    return not source or any(getattr(n, "id", None) == name or getattr(n, "attr", None) == name
                             for n in ast.walk(tree))


def _definitions(sandbox: Sandbox, names: list[str], kinds: tuple[str, ...] = ("def", "class")) -> list | None:
    """The definitions outside the tests of any of names, as the sandbox read them (find_definitions): one
    search. None when it could not run."""
    if not names:
        return []
    ran = sandbox.run_tool("find_definitions", {"names": sorted(set(names)), "kinds": list(kinds)}, 60)
    if not ran.success:
        return None
    return [d for d in details("find_definitions", ran).found if not is_test_file(d.path)]


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _test_name(test: str) -> str:
    """The test function's name in a pytest id: tests/test_x.py::Class::test_y[case] -> test_y."""
    return test.split("::")[-1].split("[")[0]


def is_test_file(path: str) -> bool:
    p = PurePosixPath(path)
    return (p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py"
            or any(part in ("tests", "test", ".omni") for part in p.parts[:-1]))
