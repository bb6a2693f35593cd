"""The order of omni's own repair rounds (omni/repair/lineup.py), without a sandbox: what each round took decides
the next."""

from dataclasses import replace

from omni.repair.lineup import MAX_SWEPT, SWEPT_VALUES, Lineup
from omni.repair.localize import Target


def suspect(name: str, size: int = 5) -> Target:
    return Target("pkg/mod.py", name, f"spectrum: {name}", size=size)


def order(lineup: Lineup, rounds: int = 20) -> list[tuple[str, bool]]:
    """The targets the lineup gives, one round each, until it has none."""
    taken = []
    for _ in range(rounds):
        if (target := lineup.next()) is None:
            break
        lineup.took(target)
        taken.append((target.symbol, target.swept))
    return taken


def test_the_suspects_are_swept_first_then_the_values_then_three_rewritten_whole_then_the_values_again():
    lineup = Lineup()
    lineup.took(suspect("a"))  # the opening's round, sampled
    lineup.suspects = [suspect("big", 300), suspect("b"), suspect("c"), suspect("d"), suspect("huge", 500),
                       suspect("e"), suspect("f"), suspect("g"), suspect("h")]
    lineup.values = [Target("pkg/mod.py", "TABLE", "a reads it", size=3, reader="a")]
    # seven swept, the long ones among them; then the value swept (a few one-change candidates); then the two best
    # short ones rewritten whole (three with the opening's), then the value; the long ones are never asked for whole,
    # and what was past the sweep is not rewritten either
    assert order(lineup) == [("big", True), ("b", True), ("c", True), ("d", True), ("huge", True), ("e", True),
                             ("f", True), ("TABLE", True), ("b", False), ("c", False), ("TABLE", False)]
    assert len(lineup.swept) == MAX_SWEPT and lineup.next() is None
    assert lineup.rounds[("pkg/mod.py", "b")] == 2 and ("pkg/mod.py", "g") not in lineup.rounds


def test_a_suspect_the_tests_single_out_is_rewritten_whole_right_after_its_sweep():
    """Every failing test runs its best line and no passing one does (score 1): swept, then sampled at once,
    before the rest are swept; a long one is not asked for whole, and a lower score waits for its turn."""
    lineup = Lineup()
    lineup.took(suspect("a"))  # the opening's round, sampled
    clear = Target("pkg/mod.py", "b", "spectrum: b", size=5, score=1.0)
    lineup.suspects = [clear, suspect("c"), suspect("d")]
    taken = order(lineup)
    assert taken[:3] == [("b", True), ("b", False), ("c", True)]
    assert taken.count(("b", False)) == 1
    lineup = Lineup()
    lineup.took(suspect("a"))
    lineup.suspects = [Target("pkg/mod.py", "big", "spectrum", size=300, score=1.0),
                       Target("pkg/mod.py", "b", "spectrum", size=5, score=0.5), suspect("c")]
    assert order(lineup)[:3] == [("big", True), ("b", True), ("c", True)]
    lineup = Lineup()  # a tie at the top: the ranking is in doubt, and the sweep goes on first
    lineup.took(suspect("a"))
    lineup.suspects = [Target("pkg/mod.py", n, "spectrum", size=5, score=1.0) for n in "bcd"]
    assert order(lineup)[:3] == [("b", True), ("c", True), ("d", True)]


def test_with_block_rewrites_a_long_suspect_is_rewritten_whole_in_its_turn():
    lineup = Lineup(blocks=True)
    lineup.took(suspect("a"))
    lineup.suspects = [suspect("big", 300), suspect("b"), suspect("c")]
    assert order(lineup) == [("big", True), ("b", True), ("c", True), ("big", False), ("b", False)]


def test_a_step_s_definition_gets_its_second_round_before_the_rest():
    """A round that applied a step toward the check: what still fails may need a second change there; the suspects
    are looked up again (the strategy asks), and it is not counted among them."""
    lineup = Lineup()
    lineup.took(suspect("a"))
    lineup.stepped = ("pkg/mod.py", "a")
    assert ("pkg/mod.py", "a") not in lineup.tried()
    lineup.suspects = [suspect("a"), suspect("b")]
    assert order(lineup) == [("b", True), ("a", False), ("b", False)]


def test_a_step_s_definition_the_spectrum_does_not_rank_gets_its_second_round_all_the_same():
    """What still fails after a step may be a test the spectrum cannot see (a doctest in the docs): no suspect then,
    or others only. The step's definition moved the check: it comes after the suspects, two rounds at most."""
    lineup = Lineup()
    lineup.took(suspect("a"))
    lineup.stepped = ("pkg/mod.py", "a")
    lineup.suspects = []
    again = lineup.next()
    assert (again.symbol, again.swept) == ("a", False) and "the spectrum does not rank it" in again.why
    lineup.took(again)
    assert lineup.next() is None  # its two rounds are spent
    lineup = Lineup()
    lineup.took(suspect("a"))
    lineup.stepped = ("pkg/mod.py", "a")
    lineup.suspects = [suspect("b"), suspect("c")]
    assert order(lineup) == [("b", True), ("c", True), ("b", False), ("c", False), ("a", False)]


def test_with_mechanical_candidates_off_nothing_is_swept():
    lineup = Lineup(sweeps=0)
    lineup.suspects = [suspect(name) for name in "abcdef"]  # nothing was tried: the first is the opening's
    assert order(lineup) == [("a", False), ("b", False), ("c", False)]
    assert not lineup.wants_suspects() and lineup.limit() == 5


def test_with_no_round_yet_the_best_suspect_is_rewritten_whole_then_the_rest_swept():
    """No definition the goal points to: the opening is the spectrum's best, sampled as it would be."""
    lineup = Lineup()
    lineup.suspects = [suspect(name) for name in "abc"]
    assert order(lineup) == [("a", False), ("b", True), ("c", True), ("b", False), ("c", False)]


def test_a_near_miss_comes_first_and_a_definition_gets_two_rounds_at_most():
    lineup = Lineup()
    lineup.took(suspect("o"))
    lineup.suspects = [suspect(name) for name in "abc"]
    lineup.took(lineup.next())
    lineup.near = ("pkg/mod.py", "a", "a rewrite broke test_x")
    again = lineup.next()
    assert (again.symbol, again.why) == ("a", "rewrites of it passed the check and broke tests that passed before")
    lineup.took(again)
    assert not again.swept  # swept first, back as a near miss: sampled
    lineup.near = ("pkg/mod.py", "a", "it broke test_x again")  # a third round is not given
    assert order(lineup) == [("b", True), ("c", True), ("b", False)]  # a, o and b: three rewritten whole


def test_the_suspects_are_wanted_while_there_is_room_for_one():
    lineup = Lineup()
    assert lineup.wants_suspects()
    lineup.suspects = []
    assert not lineup.wants_suspects()  # looked up already


def test_a_swept_definition_back_as_a_near_miss_gets_a_sampled_round():
    """The strategy tells verified repair which definitions to try without samples: a swept one, until it comes
    back as a near miss (the place is right), whose round is sampled. Only the strategy's bookkeeping runs here."""
    from omni.repair.strategy import RepairStrategy
    from omni.repair.verified import VerifiedRepair

    repair = VerifiedRepair(None, None, None, None, None, lambda: None, samples=2, reading=None)
    strategy = RepairStrategy(repair, None, None, None, events=type("Quiet", (), {"emit": lambda *a, **k: None})())
    swept = Target("pkg/mod.py", "half", "spectrum: half", swept=True)
    strategy._own_round(swept, "rung", swept.why, "omni_suspect_4")
    assert repair.unsampled == {("pkg/mod.py", "half")}
    strategy.lineup.near = ("pkg/mod.py", "half", "a rewrite broke test_x")
    again = strategy.lineup.next()
    assert again.symbol == "half" and not again.swept
    strategy._own_round(again, "rung", again.why, "omni_suspect_5", note="a rewrite broke test_x")
    assert repair.unsampled == set()


def test_a_later_suspects_one_change_that_passed_and_broke_tests_is_a_near_miss_and_a_long_ones_is_not():
    from types import SimpleNamespace

    from omni.repair.verified import _unfixed_alone

    broke = SimpleNamespace(passes=True, breaks=["test_m.py::test_small"], message="assert 3 == 5", failing=[])
    fails = SimpleNamespace(passes=False, breaks=[], message="assert 26 == 40", failing=["test_m.py::test_total"])
    later = _unfixed_alone("half", 0, "m.py", (4,), [(1, "code", broke)])
    assert "half was tried by one-change edits alone" in later.error
    assert later.details["near"].startswith("a rewrite that made the check pass broke test_m.py::test_small")
    assert "near" not in _unfixed_alone("half", 0, "m.py", (4,), [(1, "code", fails)]).details
    assert "near" not in _unfixed_alone("walk", 120, "m.py", (4,), [(1, "code", broke)]).details  # long: no samples


def test_a_definition_a_round_outside_the_lineup_tried_is_not_rewritten_again_by_it():
    """The strategy's rounds after the model's edits count in `rounds` without the lineup taking them: such a
    definition is tried, as a swept one is not until its sampled round."""
    lineup = Lineup()
    lineup.took(suspect("o"))
    lineup.rounds[("pkg/mod.py", "edited")] += 1
    lineup.suspects = [suspect("edited"), suspect("b")]
    assert ("pkg/mod.py", "edited") in lineup.tried()
    assert order(lineup) == [("b", True), ("b", False)]


def test_a_swept_suspect_whose_one_change_candidates_moved_the_check_is_rewritten_whole_first():
    """Mutation-based evidence: a change in d made some failing tests pass (it broke others); in b and c none did.
    After the sweep, d is sampled before the better-ranked b; the rest keep the ranking's order."""
    lineup = Lineup()
    lineup.took(suspect("a"))  # the opening's round, sampled
    lineup.suspects = [suspect("b"), suspect("c"), suspect("d"), suspect("e")]
    taken = []
    while (target := lineup.next()) is not None and len(taken) < 20:
        lineup.took(target)
        taken.append((target.symbol, target.swept))
        if target.symbol == "d" and target.swept:
            lineup.moved[("pkg/mod.py", "d")] = 2
    assert taken[:4] == [("b", True), ("c", True), ("d", True), ("e", True)]
    assert taken[4:6] == [("d", False), ("b", False)]  # three sampled in all, the opening's among them


def test_a_swept_definition_says_how_many_of_its_candidates_moved_the_check():
    """verified.py's answer for a definition tried by its one-change candidates alone: `moved` counts those that made
    some of the check's failing tests pass (tools/repair.py's `progress`), broken tests or not; the strategy hands it
    to the lineup."""
    from omni.box.toolbox import specs
    from omni.repair.verified import _unfixed_alone

    outcome = specs().CandidateOutcome
    ranked = [(1, "a", outcome(applied=True, failing=["t1"], breaks=["t9"], progress=True)),
              (2, "b", outcome(applied=True, failing=["t1", "t2"])),
              (3, "c", outcome(applied=True, failing=["t2"], progress=True))]
    said = _unfixed_alone("half", 0, "calc.py", (3,), ranked)
    assert said.details == {"moved": 2, "more": False} and "half was tried by one-change edits alone" in said.error
    assert _unfixed_alone("half", 0, "calc.py", (), ranked[1:2], more=True).details == {"moved": 0, "more": True}


def test_after_an_opening_that_swept_a_tie_the_others_at_its_score_are_swept_before_any_is_sampled():
    """The opening swept the first of three tied at the top (the strategy's doing: localize.tied): the two others at
    that score are swept next, then the first is rewritten whole, then the rest of the sweep; a lower suspect waits."""
    lineup = Lineup()
    first = Target("pkg/mod.py", "a", "spectrum", size=5, score=0.8, swept=True)
    lineup.took(first)
    lineup.suspects = [replace(first, swept=False), *(Target("pkg/mod.py", n, "spectrum", size=5, score=0.8)
                                                      for n in "bc"),
                       Target("pkg/mod.py", "d", "spectrum", size=5, score=0.5)]
    assert order(lineup)[:4] == [("b", True), ("c", True), ("a", False), ("d", True)]
    lineup = Lineup()  # an opening that was sampled: the sweep goes on as before, best first
    lineup.took(replace(first, swept=False))
    lineup.suspects = [Target("pkg/mod.py", n, "spectrum", size=5, score=0.8) for n in "bc"]
    taken = order(lineup)
    assert taken[:2] == [("b", True), ("c", True)] and ("a", False) not in taken
    lineup = Lineup()  # no opening, and a tie at the top: each of it swept, then the first rewritten whole
    lineup.suspects = [Target("pkg/mod.py", n, "spectrum", size=5, score=1.0) for n in "ab"] + [suspect("c")]
    assert order(lineup)[:3] == [("a", True), ("b", True), ("a", False)]


def test_when_the_ranking_is_in_doubt_every_suspect_is_swept_before_any_is_rewritten_whole():
    """The opening swept the function a check of examples alone calls (localize.chained): the suspects below it are
    swept next, whatever their score, and only then is any rewritten whole; without the doubt a lower score waits."""
    first = Target("pkg/mod.py", "a", "spectrum", size=5, score=0.7, swept=True)
    lower = [Target("pkg/mod.py", n, "spectrum", size=5, score=0.5) for n in "bc"]
    lineup = Lineup()
    lineup.doubt = True
    lineup.took(first)
    lineup.suspects = [replace(first, swept=False), *lower]
    assert "the examples' run went through it too" in lineup.next().why
    assert order(lineup)[:3] == [("b", True), ("c", True), ("a", False)]
    lineup = Lineup()
    lineup.took(first)
    lineup.suspects = [replace(first, swept=False), *lower]
    assert order(lineup)[0] == ("a", False)


def test_at_most_a_few_values_are_swept_and_a_swept_value_keeps_its_sampled_round():
    """The values the definitions tried read are swept after the suspects, SWEPT_VALUES at most, without spending the
    suspects' room; each keeps its sampled round for after the suspects' rewrites (MAX_VALUES of them)."""
    lineup = Lineup()
    lineup.took(suspect("a"))
    lineup.suspects = []
    lineup.values = [Target("pkg/mod.py", f"V{n}", "a reads it", size=1, reader="a") for n in range(SWEPT_VALUES + 2)]
    taken = order(lineup)
    assert taken == [*((f"V{n}", True) for n in range(SWEPT_VALUES)), ("V0", False), ("V1", False)]
    assert not lineup.swept and lineup.valued == {("pkg/mod.py", "V0"), ("pkg/mod.py", "V1")}
    lineup = Lineup(sweeps=0)  # mechanical candidates off: no sweep, the values sampled
    lineup.took(suspect("a"))
    lineup.suspects, lineup.values = [], [Target("pkg/mod.py", "V", "a reads it", size=1, reader="a")]
    assert order(lineup) == [("V", False)]


def test_a_long_definition_whose_sweep_stopped_at_its_budget_is_swept_again_once_after_the_others():
    """A sweep is all a definition too long to rewrite whole gets; when it stopped with candidates left (the
    strategy hands verified.py's `more` to the lineup), the rest come after the suspects' sweeps and before any
    suspect is rewritten whole, once."""
    lineup = Lineup()
    lineup.took(suspect("a"))  # the opening's round, sampled
    lineup.suspects = [suspect("big", 300), suspect("b"), suspect("c")]
    taken, why = [], {}
    while (target := lineup.next()) is not None:
        lineup.took(target)
        taken.append((target.symbol, target.swept))
        why[len(taken)] = target.why
        if len(taken) <= 3:  # the three sweeps: big's stops at its budget, the short ones' are done
            lineup.unfinished[(target.path, target.symbol)] = target.symbol == "big"
    assert taken == [("big", True), ("b", True), ("c", True), ("big", True), ("b", False), ("c", False)], taken
    assert "the rest of them" in why[4] and lineup.rounds[("pkg/mod.py", "big")] == 2
