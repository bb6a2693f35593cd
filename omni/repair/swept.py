"""How far verified repair has gone through each definition's one-change candidates (omni/repair/mutants.py), in
their order. A sweep makes the next of them up to its budget; one that stopped with candidates left can be resumed
where it stopped: omni/repair/lineup.py resumes a long definition's, the one kind of round such a definition gets."""

from __future__ import annotations

from collections.abc import Callable

Place = tuple[str, str]  # (path, symbol)
MAX_SWEEPS = 2  # of one definition: its first, and the rest resumed once (a model asking again is then refused)


class Sweeps:
    def __init__(self) -> None:
        self.made_to: dict[Place, int] = {}  # how many of the definition's candidates were made, in order
        self.more: dict[Place, bool] = {}  # whether any are left past those
        self.taken: dict[Place, int] = {}  # how many sweeps made them

    def begun(self, place: Place) -> bool:
        """Whether the definition's first sweep was begun."""
        return place in self.taken

    def unfinished(self, place: Place) -> bool:
        """Whether its sweeps stopped with candidates left, and it may have another (MAX_SWEEPS)."""
        return self.more.get(place, False) and self.taken.get(place, 0) < MAX_SWEEPS

    def begin(self, place: Place) -> None:
        self.taken[place] = self.taken.get(place, 0) + 1

    def next(self, made: Callable[[int], list[str]], place: Place, upto: int) -> list[str]:
        """The candidates past those made before, up to `upto` in all (made(n): the first n, in order); how far they
        went, and whether any are left, is remembered."""
        start = self.made_to.get(place, 0)
        upto = max(upto, start)
        found = made(upto + 1)  # one past: whether any is left
        self.made_to[place], self.more[place] = min(len(found), upto), len(found) > upto
        return found[start:upto]
