"""Which of several sampled reproduction examples becomes the run's check: the one the samples agree on most.

A small model asked once, at temperature 0, for an example and its value writes one answer, and asked again with
what was wrong often writes the same one. Asked for a few at once, at a temperature, its answers differ where it is
unsure and repeat where it is not (self-consistency). Of the examples that show the problem on the code as it is
(each checked on its own first), the one chosen:

1. calls a function whose name shares a word with the goal ("slugs" and `slugify`), when one does: an example of
   another function shows another problem;
2. calls the function that most of them call;
3. is the call and value written most often (two samples of `f('45m') == 2700` outvote one of `f('45m') == 45`);
4. came first.

Only the examples that show the problem vote: one that holds, raises what a wrong call raises, or cannot be read
says nothing about what the goal's behaviour should be. And a lone answer is not taken: at a temperature a small
model also writes values at random (`to_number('IV') == 5`), which "show a problem" as well as a right one does. A
wrong check is worse than none: no fix can pass it, and the run spends its time on it. So an example becomes the
check only once at least two samples (of this try or an earlier one) wrote the same call and value, or once one
sample wrote a value the goal itself writes out (omni/goal/reading.py: values_written, a quoted value of three
characters or more, or a token of four or more with a digit) that its call does not hold: a value at random is
not one the user wrote, and an input copied into the value is not an outcome. A run whose one sample wrote the
right value the user gave was left with no check while the others wrote the wrong value the goal also gives,
which the code gives too and so shows nothing (a dev task's record)."""

from __future__ import annotations

from collections import Counter

from omni.check.examples import Evaluation
from omni.goal.examples import calls_in
from omni.goal.reading import plain_words, shared_words, values_written


def agreed(shown: list[Evaluation], goal: str, at_least: int = 2) -> tuple[Evaluation, int] | None:
    """The chosen example of `shown` (in the samples' order) among those whose call and value at least `at_least`
    of them wrote, and how many wrote it; None when no example was written that often."""
    words = frozenset(plain_words(goal))
    called = [_called(e.example.expression) for e in shown]
    calls = Counter(name for name, _ in called)
    written = Counter(str(e.example) for e in shown)

    def rank(n: int) -> tuple[bool, int, int, int]:
        name, names = called[n]
        return (not any(shared_words(each, words) for each in names), -calls[name], -written[str(shown[n].example)], n)

    stated = values_written(goal)
    agreeing = [n for n, e in enumerate(shown) if written[str(e.example)] >= at_least or _stated(e, stated)]
    if not agreeing:
        return None
    best = min(agreeing, key=rank)
    return shown[best], written[str(shown[best].example)]


def _stated(shown: Evaluation, values: set[str]) -> bool:
    """Whether the example's value is one the goal writes out (values_written) and not one its call holds."""
    value = shown.example.expected.strip().strip("'\"")
    return value in values and value not in shown.example.expression


def _called(expression: str) -> tuple[str, list[str]]:
    """The name of the outermost call of an expression (`push` in `Ring(2).push(1)`), and every name it calls."""
    names = [name for name, _ in calls_in(expression)]  # the outermost first
    return (names[0] if names else ""), names
