"""The order of omni's own repair rounds: which definition the next one tries, and the room each kind has left.

The cheap before the dear. After the opening round, the spectrum's suspects (omni/repair/localize.py: the failing
tests' ranking, ties included) are first swept: up to MAX_SWEPT of them, best first, by their mechanical candidates
alone (no model call: seconds on a small package, a minute at most), definitions too long to ask for whole among
them. Only then are the swept ones rewritten whole by sampled rounds (about two and a half minutes each on a CPU
server), up to MAX_SUSPECTS in all with the opening's: a ranking that put the fault sixth then costs seconds, not
the run. A suspect the tests single out (every failing test runs its best line and no passing one does: a score of
CLEAR, and no other suspect as high) is rewritten whole as soon as it is swept, before the rest are: the sweep is
for a ranking in doubt, and a run that swept three more first ran out of time before it came back to the one the
tests named (run BG). A tie at the top is a ranking in doubt from the start: the opening then sweeps its target
(omni/repair/strategy.py), or with no opening the first of the tie is swept, and the suspects that score as high
are swept next, before any definition is sampled (a fix in the second of two tied at 1.00 waited three and a half
minutes behind the first's samples: run BZ). So is an opening target a rule picked that the spectrum ranks below
another definition (localize.outranked: a test named after a caller whose helper is at fault; run CR). A check
of the goal's examples alone whose run goes through a chain of definitions puts the one the examples call first,
whatever the fault (omni/repair/localize.py: chained): then every suspect is swept before any is rewritten whole.
Among the swept suspects, those some of whose one-change candidates made part of the check pass (broken tests or
not) are rewritten whole first: a change there moves the failing tests, as mutation-based fault localization has it
(Metallaxis, MUSE); a change in a function the failure only passes through moves nothing.
A round whose best candidate passed the check and broke tests is a near miss: the place is right, so its
definition comes first again, sampled. Then each value the definitions rewritten read (a table, a pattern:
values_of), up to MAX_VALUES: the suspects have the tests' evidence, a value only its reader's. But a value has
few one-change candidates, and the spectrum never ranks it (every test runs a module's assignments on import): the
first SWEPT_VALUES of them are swept right after the suspects, before any suspect is rewritten whole. At most ROUNDS
rounds per definition; a definition a step was taken on (ranked or not), or a near miss, may have its second, and
so may one too long to rewrite whole whose sweep stopped at its budget: the rest of its one-change candidates, after
the suspects' sweeps.
With mechanical candidates off (sweeps 0), the suspects are rewritten whole in their order, the long ones left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from omni.repair.localize import Target

ROUNDS = 2  # times the strategy asks for candidates per definition
MAX_SUSPECTS = 3  # definitions omni's own rounds rewrite whole (sampled), the opening's included
MAX_SWEPT = 7  # suspects tried by their mechanical candidates alone first (no model call: a minute at most each)
MAX_VALUES = 2  # and values the definitions rewritten read (a table, a pattern: a few lines each), after the suspects
SWEPT_VALUES = 4  # values the definitions tried read, tried by their mechanical candidates alone after the sweep
MAX_LOOKED_UP = 5  # suspects looked up with nothing swept (mechanical candidates off)
CLEAR = 0.99  # a spectrum score this high: every failing test ran the line and no passing test did (Ochiai 1)

Place = tuple[str, str]  # (path, symbol)


class Lineup:
    def __init__(self, sweeps: int = MAX_SWEPT, blocks: bool = False):
        self.sweeps = sweeps  # room for the suspects' mechanical rounds: 0 with mechanical candidates off
        self.blocks = blocks  # a long definition's blocks can be rewritten (--block-rewrites): it may be sampled
        self.rounds: Counter[Place] = Counter()
        self.sampled: set[Place] = set()  # the definitions rewritten whole, by the model's samples
        self.long: set[Place] = set()  # the definitions tried too long to ask for whole
        self.valued: set[Place] = set()  # the values tried by sampled rounds
        self.swept_values: set[Place] = set()  # the values tried by their mechanical candidates alone
        self.swept: set[Place] = set()  # the suspects tried by their mechanical candidates alone
        self.stepped: Place | None = None  # where the last round applied a step toward the check
        self.near: tuple[str, str, str] | None = None  # (path, symbol, how) of a round whose best candidate passed
                                                      # the check and broke tests: the target is right, the fix not yet
        self.suspects: list[Target] | None = None  # the next definitions to try; None: not looked up yet
        self.values: list[Target] = []  # the values the definitions omni's rounds tried read, next in line
        self.moved: dict[Place, int] = {}  # swept suspects -> their one-change candidates that moved the check
        self.unfinished: dict[Place, bool] = {}  # definitions tried -> a long one whose sweep stopped at its budget
        self.doubt = False  # the ranking cannot tell the fault (localize.chained): every suspect is swept first

    def again(self) -> set[Place]:
        """While it has a round left: the definition the last step was taken on (what still fails may need a second
        change there) and the one of a near miss."""
        return {t for t in (self.stepped, self.near[:2] if self.near else None) if t and self.rounds[t] < ROUNDS}

    def tried(self) -> set[Place]:
        """The definitions omni's rounds have tried, less those swept whose sampled round is still to come (not too
        long to ask for whole) and those it may try again."""
        unsampled = self.long if not self.blocks else set()
        waiting = {p for p in (self.swept | self.swept_values) - self.sampled
                   if self.rounds[p] < ROUNDS and p not in unsampled}
        return set(self.rounds) - waiting - self.again()

    def wants_suspects(self) -> bool:
        """Whether the suspects are to be looked up: not yet known, and room left for a suspect."""
        room = len(self.sampled - self.valued) < MAX_SUSPECTS or len(self.swept) < self.sweeps
        return self.suspects is None and room

    def limit(self) -> int:
        """How many suspects to look up."""
        return max(self.sweeps, MAX_LOOKED_UP)

    def next(self) -> Target | None:
        """The next definition a round of omni's own would try; None when there is none left or the room is spent."""
        again = self.again()
        if self.near and self.near[:2] in again:
            return Target(*self.near[:2], "rewrites of it passed the check and broke tests that passed before")
        tried = self.tried()
        suspects = [t for t in self._with_stepped(again) if (t.path, t.symbol) not in tried]
        fresh = [t for t in suspects if (t.path, t.symbol) not in self.rounds]
        room = len(self.sampled - self.valued - again) < MAX_SUSPECTS
        level = [t for t in fresh if self.doubt or t.score >= self._best()]  # a tie at the top; all, in doubt
        if level and not self.sampled and (self.swept or len(level) > 1) and len(self.swept) < self.sweeps:
            said = "the examples' run went through it too" if self.doubt else "it scores as high as the first"
            return replace(level[0], swept=True, why=level[0].why + f"; {said}, so its one-change candidates go "
                           "before any suspect is rewritten whole")
        top = self._singled_out()
        if top in suspects and (top.path, top.symbol) in self.swept - self.sampled and (self.blocks or not top.long) \
                and room:
            return replace(top, why=top.why + "; the tests single it out, so it is rewritten whole first")
        if fresh and self.sampled and len(self.swept) < self.sweeps:  # the opening's round is sampled
            return replace(fresh[0], swept=True, why=fresh[0].why + "; tried by its one-change candidates alone, "
                           "before the suspects are rewritten whole")
        unswept = [v for v in self.values if (v.path, v.symbol) not in self.rounds]
        if unswept and self.sweeps and len(self.swept_values) < SWEPT_VALUES:
            return replace(unswept[0], swept=True, why=unswept[0].why + "; tried by its one-change candidates "
                           "alone (a value has few: seconds), before the suspects are rewritten whole")
        if resumed := self._resumed():
            return resumed
        rewritable = sorted((t for t in suspects if (self.blocks or not t.long) and
                             ((t.path, t.symbol) not in self.sampled or (t.path, t.symbol) in again)),
                            key=lambda t: not self.moved.get((t.path, t.symbol)))  # moved first, else in rank
        if rewritable and room:
            return rewritable[0]
        values = [v for v in self.values if (v.path, v.symbol) not in tried][:MAX_VALUES - len(self.valued)]
        return values[0] if values else None

    def _resumed(self) -> Target | None:
        """A definition too long to rewrite whole whose sweep stopped at its budget, with a round left: the rest of
        its one-change candidates, once the suspects are swept and before any is rewritten whole. A sweep is all
        such a definition gets, and its order (the lines the tests point to, then the kinds of change) can put the
        fix past the budget: 76th of 81 lines' candidates, where the sweep stopped at 45 (run DD)."""
        place = next((p for p, more in self.unfinished.items() if more and self.rounds[p] < ROUNDS), None)
        if place is None:
            return None
        return Target(*place, "its one-change candidates stopped at the time a sweep may take; the rest of them go "
                      "before any suspect is rewritten whole", swept=True)

    def _with_stepped(self, again: set[Place]) -> list[Target]:
        """The suspects, and after them the definition the last step was taken on, when it may have its second round
        and the spectrum does not rank it: what still fails points elsewhere first, but it may be a test the
        spectrum cannot see (a doctest in the docs), and a change there did move the check. again: self.again()."""
        ranked = self.suspects or []
        if self.stepped is None or self.stepped not in again or \
                any((t.path, t.symbol) == self.stepped for t in ranked):
            return ranked
        return [*ranked, Target(*self.stepped, "the spectrum does not rank it for what still fails, and a second "
                                               "change may be needed where the first was made")]

    def _best(self) -> float:
        """The best score of the suspects, those swept included; 1.5, above any, when none is known."""
        return max((t.score for t in self.suspects or []), default=1.5) or 1.5

    def _singled_out(self) -> Target | None:
        """The spectrum's best suspect when the tests single it out: a score of CLEAR, and no other as high (a tie
        at the top is a ranking in doubt: one example as the failing side scores all it runs alike)."""
        ranked = self.suspects or []
        if not ranked or ranked[0].score < CLEAR or (len(ranked) > 1 and ranked[1].score >= ranked[0].score):
            return None
        return ranked[0]

    def took(self, target: Target) -> None:
        """A round on target begins."""
        place = (target.path, target.symbol)
        self.near = None
        self.rounds[place] += 1
        if target.reader and target.swept:  # a value's sweep: not a suspect's, and its sampled round is still owed
            self.swept_values.add(place)
            return
        (self.swept if target.swept else self.sampled).add(place)
        for kind, where in ((target.long, self.long), (target.reader, self.valued)):
            if kind:
                where.add(place)
