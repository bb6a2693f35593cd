"""Reading the goal's English: which of the tests that fail at the start it is about, and whether it reports
behaviour that goes wrong (a bug) or asks for something new (a feature, a change).

Each rule reads general patterns of how people write goals, never one goal's wording; tests/test_goal.py holds
each rule's table of phrasings, with ones it must not match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    path, _, rest = test_id.partition("::")
    return words(path.rsplit(".py", 1)[0].replace("/", " ")) | words(rest.split("[", 1)[0].replace("::", " "))


@dataclass(frozen=True)
class GoalTests:
    about: list[str]  # the goal is about these: they are the run's check
    unrelated: list[str]  # failing before the run and not the goal's: reported, never blocking


def goal_tests(goal: str, failing: list[str]) -> GoalTests:
    """Which of the tests failing at the start the goal is about: the ones it names (by id or function); else all
    of them when the goal is about the tests as such ("make the failing tests pass"); else each test whose file or
    name shares a word with the goal (`fix add in calc.py` and tests/test_calc.py::test_add). A test none of that
    ties to the goal failed before the run for its own reasons."""
    named = [t for t in failing if t in goal or re.search(rf"\b{re.escape(_function(t))}\b", goal)]
    if named:
        about = named
    elif _ALL_TESTS.search(goal):
        about = list(failing)
    else:
        said = words(_OPENING_VERB.sub(" ", goal))
        about = [t for t in failing if words_of_test(t) & said]
    return GoalTests(about, [t for t in failing if t not in about])


def _function(test_id: str) -> str:
    return test_id.split("::")[-1].split("[")[0]


def reports_a_fault(goal: str) -> bool:
    """Whether the goal reports behaviour that goes wrong (then a test that shows it is worth writing first), as
    against asking for something new or changed ("add a subtract function", "rename X to Y"), which no test can
    show failing before the work is done. A word of fault decides; else a goal that opens as a request is one;
    anything else ("the CSV export drops the last row") describes behaviour, so it is a report."""
    return bool(_FAULT.search(goal)) or not _FEATURE.search(goal)
