"""The order of omni's own repair rounds: which definition the next one tries, and the room each kind has left.

First the spectrum's suspects (omni/repair/localize.py: the failing tests' ranking, ties included), up to
MAX_SUSPECTS rewritten whole and MAX_LONG too long for that (their mechanical candidates alone). A round whose best
candidate passed the check and broke tests is a near miss: the place is right, so its definition comes first again.
Then each value the definitions tried read (a table, a pattern: values_of), up to MAX_VALUES: the suspects have the
tests' evidence, a value only its reader's. Then the next MAX_SWEPT suspects by their mechanical candidates alone (no
model call each: seconds on a small package): a ranking that put the fault fourth or fifth then costs seconds, not
the run; one whose one-change candidate passed the check and broke tests is a near miss, and gets a sampled round.
At most ROUNDS rounds per definition; a definition a step was taken on, or a near miss, may have its second."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from omni.repair.localize import Target

ROUNDS = 2  # times the strategy asks for candidates per definition
MAX_SUSPECTS = 3  # definitions omni's own rounds rewrite, one after another, before the model's steps begin
MAX_LONG = 2  # and besides them, definitions too long to ask for whole (their mechanical candidates alone: cheap)
MAX_VALUES = 2  # and values the definitions tried read (a table, a pattern: a few lines each), after the suspects
MAX_SWEPT = 4  # and then the next suspects, by their mechanical candidates alone (no model call: a minute at most)

Place = tuple[str, str]  # (path, symbol)


class Lineup:
    def __init__(self, sweeps: int = MAX_SWEPT):
        self.sweeps = sweeps  # room for the later suspects' mechanical rounds: 0 with mechanical candidates off
        self.rounds: Counter[Place] = Counter()
        self.long: set[Place] = set()  # the definitions tried too long to ask for whole
        self.valued: set[Place] = set()  # the values tried
        self.swept: set[Place] = set()  # the later suspects tried by their mechanical candidates alone
        self.stepped: Place | None = None  # where the last round applied a step toward the check
        self.near: tuple[str, str, str] | None = None  # (path, symbol, how) of a round whose best candidate passed
                                                      # the check and broke tests: the target is right, the fix not yet
        self.suspects: list[Target] | None = None  # the next definitions to try; None: not looked up yet
        self.values: list[Target] = []  # the values the definitions omni's rounds tried read, next in line

    def tried(self) -> set[Place]:
        """The definitions omni's rounds have tried, less, while it has a round left, the one the last step was
        taken on (what still fails may need a second change there) and the one of a near miss."""
        again = {t for t in (self.stepped, self.near[:2] if self.near else None) if t and self.rounds[t] < ROUNDS}
        return set(self.rounds) - again

    def wants_suspects(self) -> bool:
        """Whether the suspects are to be looked up: not yet known, and room left for a suspect."""
        rewritten = self.tried() - self.long - self.valued - self.swept
        return self.suspects is None and (len(rewritten) < MAX_SUSPECTS or len(self.swept) < self.sweeps)

    def limit(self) -> int:
        """How many suspects to look up."""
        return MAX_SUSPECTS + MAX_LONG + self.sweeps

    def next(self) -> Target | None:
        """The next definition a round of omni's own would try; None when there is none left or the room is spent."""
        tried = self.tried()
        if self.near and self.near[:2] not in tried:
            return Target(*self.near[:2], "rewrites of it passed the check and broke tests that passed before")
        room = {False: MAX_SUSPECTS - len(tried - self.long - self.valued - self.swept),
                True: MAX_LONG - len(self.long)}
        untried = [t for t in self.suspects or [] if (t.path, t.symbol) not in tried]
        if room[False] > 0 and (suspect := next((t for t in untried if room[t.long] > 0), None)):
            return suspect
        values = [v for v in self.values if (v.path, v.symbol) not in tried][:MAX_VALUES - len(self.valued)]
        if values:
            return values[0]
        if untried and len(self.swept) < self.sweeps:
            return replace(untried[0], swept=True, why=untried[0].why + "; tried by its one-change candidates alone, "
                           "past the suspects rewritten whole")
        return None

    def took(self, target: Target) -> None:
        """A round on target begins."""
        place = (target.path, target.symbol)
        self.near = None
        self.rounds[place] += 1
        for kind, where in ((target.long, self.long), (target.swept, self.swept), (target.reader, self.valued)):
            if kind:
                where.add(place)
