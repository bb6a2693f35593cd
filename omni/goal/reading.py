"""Every rule that reads the goal's English, applied once: `read_goal(text)` gives a frozen GoalReading that the
run hands to whatever needs the goal (the briefing, the examples, the run's check, repair's localization and
probes) instead of the raw string. Examples have their own module (omni/goal/examples.py).

Each rule reads a general pattern of how people write goals, never one goal's wording; tests/test_goal.py holds
each rule's table of phrasings, with ones it must not match.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass

from omni.goal.examples import Example, goal_examples

_FILE = re.compile(r"(?<![\w/.-])([\w./-]+\.(?:py|pyi))\b")
_NAME = re.compile(r"`?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(`|\()?")
_COMMON = set(dir(builtins)) | set(keyword.kwlist)
_EXTENSIONS = {"txt", "md", "rst", "json", "toml", "cfg", "ini", "yaml", "yml", "csv", "html", "com", "org"}
# "fix parse_size", "Fix `Client.get`": the goal names the definition to change.
_FIX = re.compile(r"\bfix\s+`?([A-Za-z_][\w.]*)", re.IGNORECASE)
_NOT_A_NAME = {"the", "a", "an", "this", "that", "these", "those", "it", "its", "for", "to", "in", "on", "of", "all",
               "bug", "bugs", "issue", "issues", "problem", "problems", "error", "errors", "crash", "crashes", "typo",
               "typos", "failing", "broken", "regression", "tests", "test", "them", "my", "our"}
# A quoted value the goal says goes wrong: "'a-' is not rejected", "`--quiet` is ignored".
_QUOTED = re.compile(r"(?<!\w)(['\"`])([^'\"`\n]{1,60})\1")
_GOES_WRONG = re.compile(r"\s+(?:does not|doesn't|do not|don't|is not|isn't|are not|aren't|fails?|is ignored|"
                         r"are ignored|breaks?|still|never|has no effect)\b", re.I)
# Words of a bug report that say nothing about where the code is.
_PLAIN = set("""about after again also always anymore back because been before being both but call called calls
code does doesn doing done each either else even every example expected fail fails file fine first from gets
give gives given goes going have having here instead into just like line lines make more most must need never
next number only other returns right same says should since some still than that their them then there these
they this those through under until using value want when where which while whole will with without work works
would wrong""".split())

# Words that say nothing about where in the code a goal points: articles, pronouns, prepositions, auxiliaries,
# and the words every goal about tests uses.
_FUNCTION_WORDS = set("""a an the and or but not nor so yet if then than that this these those there here it its
is are was were be been being do does did doing done has have had having can could will would shall should may
might must to of in on at by for from with without into onto over under up down out off about as per via
i me my we our you your he she they them their what which who whom whose when where why how all any each every
some no none one two new test tests testing tested py please""".split())
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# The verb a goal's sentence opens with says what to do, not where: "add ok.txt" is not about test_add.
_OPENING_VERB = re.compile(r"(?:^|[.;:!?]\s+|\n\s*)(?:please\s+)?(?:add|fix|make|remove|delete|update|implement|create|"
                           r"write|change|rename|move|refactor|support|improve|handle|check|find|look|clean|tidy|"
                           r"set|get|use|run|let|keep|stop|show|print|return|read)\b", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# "the failing tests", "make the tests pass", "fix the test suite", "tests/ should pass": the goal is every test.
_ALL_TESTS = re.compile(r"\b(?:failing|broken|red)\s+tests?\b|\btests?\s+(?:pass|fail)|\btest\s+suite\b|"
                        r"\b(?:make|get)\s+(?:the\s+|all\s+(?:the\s+)?)?tests?\b|\ball\s+(?:the\s+)?tests\b|"
                        r"\bfix\s+(?:the\s+)?(?:failing\s+)?tests?\b|\btests?/", re.I)
# What a report of wrong behaviour says; what a request for something new opens with.
_FAULT = re.compile(r"\b(?:bugs?|buggy|wrong(?:ly)?|incorrect(?:ly)?|broken|breaks|crash(?:es|ed|ing)?|fails?|failing|"
                    r"failure|errors?|exceptions?|traceback|raises|instead\s+of|regression|not\s+working|"
                    r"doesn't\s+work|no\s+longer|off[- ]by[- ]one|hangs?|forever|fix(?:es|ed)?)\b", re.I)
_FEATURE = re.compile(r"^\W*(?:feature(?:\s+request)?\W+)?(?:please\s+)?(?:add|implement|create|write|introduce|"
                      r"support|provide|allow|enable|expose|extend|rename|refactor|document|remove|delete|update|"
                      r"upgrade|bump|move|split|extract|convert|make\s+\S+\s+(?:accept|support|take))\b", re.I)


@dataclass(frozen=True)
class GoalReading:
    """What the goal says, read once. `text` is the goal as written, for prompts."""

    text: str
    examples: tuple[Example, ...]  # the calls it states the right result of
    files: tuple[str, ...]  # Python files it names, as written
    symbols: tuple[str, ...]  # names that look like code: snake_case, CamelCase, dotted, called, in backticks
    fix: tuple[str, ...]  # the names it says to fix
    wrong: tuple[tuple[str, str], ...]  # (the quoted text, its value) of each value it says goes wrong
    plain: frozenset[str]  # its plain words of 4 letters or more, stems too ("Slices" gives slices, slice)
    fault: bool  # it reports behaviour that goes wrong (not a request for something new)

    def files_in(self, listed: set[str]) -> list[str]:
        """The files it names, a bare name that matches one listed file read as that file's path."""
        found = []
        for path in self.files:
            same = [f for f in listed if f.endswith("/" + path)]
            found.append(same[0] if path not in listed and len(same) == 1 else path)  # else tried as written
        return list(dict.fromkeys(found))

    def tests(self, failing: list[str]) -> GoalTests:
        return goal_tests(self.text, failing)

    def names(self, word: str) -> bool:
        """Whether the goal has this word as a word of its own (a module, a file's stem: `shapes` in shapes.py)."""
        return bool(re.search(rf"\b{re.escape(word)}\b", self.text))

    def code_words(self) -> frozenset[str]:
        """The words of the names it writes as code (`SortedDict.irange` gives sorted, dict, irange)."""
        return frozenset(w for name in self.symbols for part in name.split(".") for w in name_words(part))

    def compares(self) -> bool:
        """Whether the goal speaks of values being equal or compared ("two dates compare equal", `a != b`): then
        the code that compares can be what goes wrong, not only the assertion's own tool."""
        return bool(_COMPARING.search(self.text))


def read_goal(text: str) -> GoalReading:
    files = [p.removeprefix("./") for p in _FILE.findall(text)]
    fix = [name for name in _FIX.findall(text) if name.lower() not in _NOT_A_NAME]
    return GoalReading(text, tuple(goal_examples(text)), tuple(dict.fromkeys(files)), tuple(goal_symbols(text)),
                       tuple(fix), tuple(_wrong_values(text)), frozenset(plain_words(text)), reports_a_fault(text))


def goal_symbols(goal: str) -> list[str]:
    """Names in the goal that look like code: snake_case, CamelCase, dotted, called, or in backticks."""
    names = []
    text = _FILE.sub(" ", goal)
    for match in _NAME.finditer(text):
        name, after = match.group(1), match.group(2)
        last = name.rsplit(".", 1)[-1]
        looks_like_code = ("_" in last.strip("_") or re.search(r"[a-z][A-Z]", last) or "." in name
                           or after is not None or match.group(0).startswith("`"))
        if looks_like_code and last not in _COMMON and last not in _EXTENSIONS and len(last) > 2:
            names.append(name)
    return list(dict.fromkeys(names))


def plain_words(goal: str) -> set[str]:
    """The goal's plain words (4 letters or more), each also without a plural or past ending: "Slices"
    gives slices and slice, "negated" gives negate."""
    words = set()
    for word in re.findall(r"[A-Za-z]{4,}", _FILE.sub(" ", goal)):
        word = word.lower()
        if word in _PLAIN:
            continue
        words.add(word)
        for ending in ("es", "s", "d", "ed", "ing"):
            if word.endswith(ending) and len(word) - len(ending) >= 4:
                words.add(word[:-len(ending)])
    return words - _PLAIN


def name_words(name: str) -> set[str]:
    """The words of an identifier: snake_case and CamelCase split, lower-cased."""
    return {part.lower() for part in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name) if part}


def shared_words(name: str, words: frozenset[str]) -> set[str]:
    """The goal's words a name shares: a word of the name that is one of them or begins with one ("slugs" gives
    slug, which begins `slugify`; "encoding" gives encod, which begins `encode`), as the search that found the name
    matched it. A part counts once, by the longest word it begins with ("words" is not both words and word)."""
    shared = set()
    for part in name_words(name):
        begins = [word for word in words if part.startswith(word)]
        if begins:
            shared.add(max(begins, key=len))
    return shared


def _wrong_values(goal: str) -> list[tuple[str, str]]:
    return [(m.group(0), m.group(2)) for m in _QUOTED.finditer(goal) if _GOES_WRONG.match(goal, m.end())]


def words(text: str) -> set[str]:
    """The lower-case words of identifiers and prose (snake_case and CamelCase split), function words left out."""
    found = set()
    for ident in _IDENT.findall(text.replace("_", " ")):
        for part in _CAMEL.split(ident):
            part = part.lower()
            if len(part) >= 3 and part not in _FUNCTION_WORDS:
                found.add(part)
                found.update(part[:-len(end)] for end in ("es", "s", "ed", "ing")
                             if part.endswith(end) and len(part) - len(end) >= 3)
    return found


def words_of_test(test_id: str) -> set[str]:
    """The words of a pytest id: its file's path and its class and function names (tests/test_calc.py::test_add
    gives calc, add)."""
    return words_of_place(test_id) | words(test_id.partition("::")[2].split("[", 1)[0].replace("::", " "))


def words_of_place(test_id: str) -> set[str]:
    """The words of a pytest id's file path alone (tests/test_calc.py::test_add gives calc)."""
    return words(test_id.partition("::")[0].rsplit(".py", 1)[0].replace("/", " "))


@dataclass(frozen=True)
class GoalTests:
    about: list[str]  # the goal is about these: they are the run's check
    unrelated: list[str]  # failing before the run and not the goal's: reported, never blocking


def goal_tests(goal: str, failing: list[str]) -> GoalTests:
    """Which of the tests failing at the start the goal is about: the ones it names (by id or function); else all
    of them when the goal is about the tests as such ("make the failing tests pass"); else each test whose file or
    name shares a word with the goal (`fix add in calc.py` and tests/test_calc.py::test_add), or whose parameters
    hold a value the goal writes (`"2.0.0-rc.1"` and test_order[2.0.0-rc.1-2.0.0]). A word of the place every
    failing test is in (the package's folder, when its tests live in it; their one file) tells them apart only when
    no other word ties any of them to the goal; a word every failing test is named after ties them all, as the goal
    is about what they test. A test none of that ties to the goal failed before the run for its own reasons."""
    named = [t for t in failing if t in goal or re.search(rf"\b{re.escape(_function(t))}\b", goal)]
    if named:
        about = named
    elif _ALL_TESTS.search(goal):
        about = list(failing)
    else:
        said = words(_OPENING_VERB.sub(" ", goal))
        shared = set.intersection(*map(words_of_place, failing)) if len(failing) > 1 else set()
        written = values_written(goal)
        about = [t for t in failing if (words_of_test(t) - shared) & said or _holds_value(t, written)] or \
            [t for t in failing if words_of_test(t) & said]
    return GoalTests(about, [t for t in failing if t not in about])


_VALUE = re.compile(r"[\w.:/+-]*\d[\w.:/+-]*")  # a token with a digit in it: a version, a date, a size, an address


def values_written(goal: str) -> set[str]:
    """The values a goal writes out: what it quotes (3 characters or more), and its tokens of 4 or more that have a
    digit in them (`1.5k`, `2024-01-31`, `v2.0.0-rc.1`), trailing punctuation left off."""
    quoted = {m.group(2) for m in _QUOTED.finditer(goal) if len(m.group(2)) >= 3}
    return quoted | {t for m in _VALUE.finditer(goal) if len(t := m.group(0).rstrip(".:/-")) >= 4}


def _holds_value(test_id: str, values: set[str]) -> bool:
    """Whether a test's parameters (its id's `[...]`, pytest's ids joined by `-`) hold one of values whole."""
    params = test_id.partition("[")[2].rpartition("]")[0]
    return bool(params) and any(re.search(rf"(?:^|-){re.escape(v)}(?:-|$)", params) for v in values)


def _function(test_id: str) -> str:
    return test_id.split("::")[-1].split("[")[0]


def reports_a_fault(goal: str) -> bool:
    """Whether the goal reports behaviour that goes wrong (then a test that shows it is worth writing first), as
    against asking for something new or changed ("add a subtract function", "rename X to Y"), which no test can
    show failing before the work is done. A word of fault decides; else a goal that opens as a request is one;
    anything else ("the CSV export drops the last row") describes behaviour, so it is a report."""
    return bool(_FAULT.search(goal)) or not _FEATURE.search(goal)


_ERRORS = re.compile(r"\b(?:rais(?:e|es|ed|ing)|throws?|threw|thrown|crash(?:es|ed|ing)?|exceptions?|errors?|"
                     r"tracebacks?)\b", re.I)

_COMPARING = re.compile(r"==|!=|\b(?:equal(?:s|ity|led)?|unequal|compar(?:e|es|ed|ing|ison|isons)|same|identical|"
                        r"differ(?:s|ent|ence)?|__eq__|__ne__)\b", re.I)


def speaks_of_errors(goal: str) -> bool:
    """Whether the goal speaks of something raised or crashing ("it crashes on an empty list", "throws an
    exception"), so that a call that raises can be the problem it reports."""
    return bool(_ERRORS.search(goal))


def names_word(goal: str, word: str) -> bool:
    """Whether the goal has `word` as a word of its own (an exception's name: "raises KeyError")."""
    return bool(word) and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", goal) is not None


_LAZY = re.compile(r"\b(?:iterators?|generators?|iterables?|lazy|lazily|map object|filter object)\b", re.I)


def speaks_of_iterators(goal: str) -> bool:
    """Whether the goal speaks of iterators or generators ("returns a generator instead of a list"), so that a
    call giving one where a list is asked can be the problem it reports, not a mistake of the example's form."""
    return bool(_LAZY.search(goal))
