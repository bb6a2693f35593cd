"""Verified repair: sample several complete rewrites of one definition (one short prompt of its own: the goal,
the check, the code; a sampling temperature), try each in a scratch copy of the workspace against the run's check
(the failing tests the goal is about, the goal's examples, the reproduction test), and apply the one that passes.
The mechanical candidates (omni/repair/mutants.py: one small change each, no model call), once a definition (but a
sweep of a long definition that stopped at its budget is resumed where it stopped, omni/repair/swept.py): the
FIRST_MUTANTS likeliest (on the lines the failing tests point to, else on those whose names the goal's words name:
omni/repair/worded.py), then as many more as fit in MECHANICAL_S at the rate those took, all before the samples: a
round of four samples took 50 to 170 s on the CPU server in run BZ, a one-change candidate one or two seconds. But
when the check is the goal's examples alone, only the likeliest go before the samples, the rest after them, and a
mechanical fix does not settle the call before the samples are asked: one change that makes the one example hold
may go wrong on every other input (a negated type
test that turned strings into lists), and only the rewrites beside it show which behaviour most passing ones share.
Once such a fix is in hand, the rounds before the samples (infilled fills, merges) are not asked: they would find
candidates, and one is found; what is still wanted is the samples' vote (a fill round took 86 s before a one-change
fix's samples were asked: run CQ).
After a round of samples that left near misses (they pass the check and break tests that passed) and none that
passes, each near miss is tried again with the branch it replaced kept beside it (omni/repair/merged.py). With
--missing-lines, when the first call's rounds on a definition found no fix, the model is asked once which lines are
missing from it, and where (omni/repair/gaps.py). A candidate of the same shape as one tried before is not tried
again; it takes that one's outcome.

Rank: the check passes, then fewer broken and failing tests (the whole suite's, when it ran in WHOLE_SUITE_S at the
start; else the module's test files); among those that pass, the behaviour most of them share
on the probes (omni/repair/probes.py: calls near the goal's examples), then the fewest probes changed from the code
as it is, then the fewest lint findings added (tools/lintfix.py: ruff's fixes for them, safe ones first, are made
before a candidate is checked, and that tidied code is what is applied), then more votes (candidates with the same
syntax tree), then a smaller diff. A candidate that leaves a call the goal says goes wrong as it was does not pass, nor
does one that stops reading a parameter the code as it is reads, or tests for a value the example is written with
(omni/repair/inputs.py: it answers the example instead of computing it). When none passes, the model gets the best
candidate and what it did to the check, not k raw failures; but when one is a step toward the check (some of its
failing tests pass with it, no other test fails, none that passed breaks: a fault in two places, one of them
here), it is applied, and the result says what still fails; a sweep's (one-change candidates alone) as much as
a sampled round's: thrown away, its definition's sampled rewrites began again from the bug (run CR). The loop
reaches all of this through omni/repair/strategy.py, which then asks the tests where the rest points.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial

from omni.box.toolbox import details
from omni.check.settled import Check, how_it_fails
from omni.goal.examples import bare_calls
from omni.goal.reading import GoalReading
from omni.model.textmode import code_of
from omni.model.usage import UsageMeter
from omni.prompts import Prompts
from omni.protocols import Events, Model, Sandbox
from omni.repair.block import Block, around, inside, marked, spliced
from omni.repair.decided import decide, is_step, next_note
from omni.repair.gaps import lines_added, numbered
from omni.repair.infilled import Infilling
from omni.repair.merged import merges
from omni.repair.mutants import MAX_MUTANTS, mutants
from omni.repair.inputs import ignored_parameters, special_cases
from omni.repair.localize import MAX_LINES, missing_method
from omni.repair.probes import Probes, behaviour, goal_probes, left_as_it_was
from omni.repair.rewritten import in_rewrite, shape, without_docstring
from omni.repair.swept import Sweeps
from omni.repair.worded import worded_lines
from omni.results import ToolResult

TEMPERATURE = 0.8
MECHANICAL_S = 60  # seconds of trying the mechanical candidates may take, at the rate the last round's were tried
MIN_MUTANTS = 3
UNTIMED = 16  # mechanical candidates tried before any round has timed one
FIRST_MUTANTS = 8  # mechanical candidates tried before the samples: a fix among them settles the round unsampled
ROUNDS_PER_CALL = 2  # rounds of samples one propose_fixes asks for while none passes: the next hears how it failed
WHOLE_SUITE_S = 20  # a suite that ran this fast at the start is what a passing candidate must not break, whole


class VerifiedRepair:
    def __init__(self, model: Model, sandbox: Sandbox, prompts: Prompts, events: Events, meter: UsageMeter,
                 check: Callable[[], Check], samples: int, reading: GoalReading, mechanical: bool = True,
                 blocks: int | None = None, lines: bool = False, infilling: Infilling | None = None):
        self.model, self.sandbox, self.prompts, self.events, self.meter = model, sandbox, prompts, events, meter
        self.check, self.samples, self.reading = check, samples, reading
        self.mechanical, self.blocks = mechanical, blocks  # blocks: rewritten in definitions this long; None: off
        self.lines, self.gapped = lines, set()  # ask which lines are missing (repair/gaps.py); those asked so
        self.focus: dict[tuple[str, str], tuple[int, ...]] = {}  # (path, symbol) -> lines the failing tests point to
        self.ran: dict[tuple[str, str], tuple[tuple[int, ...], ...]] = {}  # -> the other lines they ran, best first
        self.readers: dict[tuple[str, str], str] = {}  # (path, value) -> the definition that reads it
        self.sweeps = Sweeps()  # how far each definition's mechanical candidates were tried (omni/repair/swept.py)
        self.unsampled: set[tuple[str, str]] = set()  # definitions to try by their mechanical candidates alone
        self.seconds_each: float | None = None  # what trying one candidate took, in the last round
        self.infilling = infilling  # the infilled candidates (omni/repair/infilled.py); None: off

    def propose_fixes(self, path: str, symbol: str, note: str = "") -> ToolResult:
        check = self.check()
        probes = goal_probes(self.reading.wrong, [e["expression"] for e in check.examples])
        if self.samples < 2:
            return ToolResult.fail("tool_error", "propose_fixes is off for this run (--samples 1); edit the code.")
        if not check.tests and not check.examples:
            return ToolResult.fail("tool_error", "there is no check to try fixes against: no test fails and the "
                                   "goal gives no example. Fix the code with an edit, or write a failing test first.")
        found, imports, whole = self.sandbox.run_tool("read_symbol", {"symbol": symbol, "path": path}, 60), "", ""
        block, near, then, size, start = None, frozenset(), (), 0, 0
        if found.success:
            read = details("read_symbol", found)
            start, whole = read.definitions[0].start, read.sources[0]
            size = read.definitions[0].end - start + 1
            source = without_docstring(whole)
            block = self._block(path, symbol, start, whole, size, len(source.splitlines()))
            near, then = _tiers(self.focus.get((path, symbol), ()), self.ran.get((path, symbol), ()), start, whole,
                                source, self.reading.plain)
        elif (imports := _new(self.sandbox, path, symbol, check)) is not None:
            source = ""  # not written yet: the candidates are new functions, added at the end of path
        else:
            return found
        alone = (long := block is None and size > MAX_LINES) or (path, symbol) in self.unsampled  # no samples
        if alone and (not self.mechanical or self.sweeps.begun((path, symbol))
                      and not self.sweeps.unfinished((path, symbol))):
            tried = ", and its one-change candidates were tried already" if self.mechanical else ""
            what = f"{symbol} is {size} lines, too long to rewrite whole" if long else f"{symbol} was tried"
            return ToolResult.fail("tool_error", f"{what}{tried}: read the lines at fault, and edit them yourself.")
        failure = "" if alone else how_it_fails(self.sandbox, check)  # the samples' prompt shows it
        rows: list = []  # (id, code, outcome) of every candidate of this call
        votes: dict[str, int] = {}
        baseline: list[dict] = []  # what the probes give on the code as it is
        made, sampled, ranked = partial(mechanical, whole, source, block, (near, *then)), False, []
        for round_number in range(1 if alone else ROUNDS_PER_CALL):
            rounds = [] if alone else [partial(self._sampled, path, symbol, whole, source, block, imports, check,
                                              probes, note, failure), partial(merges, whole, rows)]
            if round_number == 0 and source:
                rounds = self._cheap(rounds, path, symbol, start, whole, made, bool(check.tests), alone, long)
            if not alone and not block:
                rounds += self._missing_lines(path, symbol, source, failure, check, probes)
            for make in rounds:
                if _settled(ranked) and getattr(make, "func", None) != self._sampled:
                    continue  # the goal's examples alone, a fix in hand: only the samples' vote is still wanted
                codes, how = make()
                tried = self._round(path, symbol, whole, codes, check, probes, how, rows, votes)
                if isinstance(tried, ToolResult):
                    return tried
                baseline, sampled = tried or baseline, sampled or how not in ("mechanical", "infilled")
                ranked = _ranked(rows, votes, probes, baseline)
                if _settled(ranked) and (sampled or alone or check.tests):  # examples alone: the samples too
                    break
            copies = sum(1 for _, _, o in rows if o and o.unchanged)
            if _settled(ranked):
                break
            note = next_note(note, ranked, copies)
        if alone and not _settled(ranked):
            return self._swept(path, symbol, size if long else 0, ranked, votes, len(rows), copies)
        return decide(self.sandbox, self.events, path, symbol, ranked, votes, len(rows), copies)

    def _missing_lines(self, path: str, symbol: str, source: str, failure: str, check: Check,
                       probes: Probes) -> list:
        """With --missing-lines, the round that asks which lines are missing from the definition and where
        (omni/repair/gaps.py), once a definition, after its other rounds; none otherwise."""
        if not self.lines or not source or (path, symbol) in self.gapped:
            return []
        self.gapped.add((path, symbol))
        return [partial(lines_added, self.model, self.meter, self._messages(
            "propose_lines", symbol=symbol, path=path, failure=failure, check=described(check, probes),
            numbered=numbered(source)), source, self.samples, TEMPERATURE)]

    def _swept(self, path: str, symbol: str, size: int, ranked: list, votes: dict[str, int], asked: int,
               copies: int) -> ToolResult:
        """A sweep (one-change candidates alone) that found no fix: a step toward the check among them is applied,
        as a sampled round's is (decided.py); else where to look (size: the definition's length when it is too long
        to ask for whole, else 0)."""
        if not (ranked and ranked[0][2].passes) and any(is_step(o) for _, _, o in ranked):
            return decide(self.sandbox, self.events, path, symbol, ranked, votes, asked, copies)
        return _unfixed_alone(symbol, size, path, self.focus.get((path, symbol), ()), ranked,
                              bool(size) and self.sweeps.unfinished((path, symbol)))

    def _cheap(self, rounds: list, path: str, symbol: str, start: int, whole: str, made: Callable,
               tests: bool, alone: bool, long: bool) -> list:
        """The call's rounds with the cheap candidates put in, once a definition: the mechanical ones (made: the
        likeliest, timed, then the rest; with the goal's examples alone as the check, the rest after the samples),
        then the infilled ones (omni/repair/infilled.py) before the samples: none in a sweep (alone: the mechanical
        ones alone), but for a definition too long to rewrite whole, whose rounds are all sweeps (its best line)."""
        place = (path, symbol)
        if self.mechanical and not self.sweeps.begun(place):
            self.sweeps.begin(place)
            first, rest = (lambda: (self.sweeps.next(made, place, FIRST_MUTANTS), "mechanical"),
                           lambda: (self.sweeps.next(made, place, _affordable(self.seconds_each)), "mechanical"))
            rounds = [first, rest, *rounds] if tests else [first, *rounds, rest]
        elif self.mechanical and alone and self.sweeps.unfinished(place):  # resumed: the rest of its candidates
            self.sweeps.begin(place)
            return [lambda: (self.sweeps.next(made, place, self.sweeps.made_to[place]
                                               + _affordable(self.seconds_each)), "mechanical")]
        if self.infilling and (long or not alone):
            at = next((n for n, make in enumerate(rounds) if getattr(make, "func", None) == self._sampled),
                      len(rounds))
            rounds[at:at] = self.infilling.rounds(path, symbol, start, whole, self.focus.get((path, symbol), ()),
                                                  self.ran.get((path, symbol), ()), swept=alone)
        return rounds

    def _sampled(self, path: str, symbol: str, whole: str, source: str, block: Block | None, imports: str,
                 check: Check, probes: Probes, note: str, failure: str) -> tuple[list[str], str]:
        """One round of sampled rewrites (of the block, when there is one): their code, and how they were asked.
        failure: how the check fails on the code as it is (the assertion and its values), "" when unknown."""
        fields = dict(symbol=symbol, path=path, check=described(check, probes), note=note, failure=failure,
                      owner="" if source else symbol.rpartition(".")[0],  # a new method's class
                      **_reader(self.sandbox, path, symbol, self.readers.get((path, symbol))))
        replies, how = self.model.samples(self._messages("propose_block", source=marked(whole, block), **fields)
                                          if block else self._messages("propose", source=source, imports=imports,
                                                                       documented=source != whole, **fields),
                                          self.samples, TEMPERATURE)
        for reply in replies:
            self.meter.count(reply.usage, "candidates")
        codes = [code_of(r.text) for r in replies]
        return [spliced(whole, block, c) if c else c for c in codes] if block else codes, how

    def _block(self, path: str, symbol: str, start: int, whole: str, size: int, written: int) -> Block | None:
        """With block rewrites on (--block-rewrites), the block around the lines the failing tests point to in this
        definition (omni/repair/block.py); None when off, when no line is known, when no short block holds them, or
        when it is shorter than --block-from and short enough to rewrite whole (then it is: few lines, few tokens).
        size: its length in lines; written: without its docstring, as a whole rewrite would write it."""
        wanted = self.blocks is not None and (size > MAX_LINES or written >= self.blocks)
        lines = self.focus.get((path, symbol)) if wanted else None
        return around(whole, [line - start + 1 for line in lines]) if lines else None

    def _messages(self, template: str, **fields) -> list[dict]:
        """The candidates' request: a short conversation of its own. A small model writes far more right rewrites
        from the goal, the check and the code alone than after the run's long conversation (bench/README.md). The
        price: a llama.cpp server keeps one prompt's cache, so the step after a round reads the run's again."""
        return [{"role": "system", "content": self.prompts.render("repair_system")},
                {"role": "user", "content": self.prompts.render(template, goal=self.reading.text, **fields)}]

    def _round(self, path: str, symbol: str, source: str, codes: list[str], check: Check, probes: Probes, how: str,
               rows: list, votes: dict[str, int]) -> ToolResult | list[dict]:
        """Try one round's candidates in the sandbox; add them to rows (numbered on from the last round's)
        and votes, one event each. What the probes give on the code as it is; a ToolResult only when
        try_fixes itself failed."""
        known = {shape(code): outcome for _, code, outcome in rows if outcome is not None}
        fresh: dict[str, str] = {}  # each fix is tried once: a copy of one tried before takes its outcome
        for code in codes:
            if code and shape(code) not in known:
                fresh.setdefault(shape(code), code)
        usable, baseline = list(fresh.values()), []
        quick = check.suite_s is not None and check.suite_s <= WHOLE_SUITE_S
        if usable:
            started = time.monotonic()
            tried = self.sandbox.run_tool("try_fixes", {"path": path, "symbol": symbol, "candidates": usable,
                                                        "tests": check.tests, "examples": check.examples,
                                                        "probes": probes.all,
                                                        "failing_before": check.failing_at_start,
                                                        "whole_suite": quick}, 900)
            if not tried.success:
                return tried
            found = details("try_fixes", tried)
            self.seconds_each = (time.monotonic() - started) / len(usable)
            baseline = list(found.baseline)
            known |= {shape(code): _judged(o, code, source, check, probes, baseline)
                      for o, code in zip(found.outcomes, usable, strict=True)}
        first = len(rows)
        for n, code in enumerate(codes, first + 1):
            outcome = known[shape(code)] if code else None
            if outcome is not None:
                votes[outcome.shape] = votes.get(outcome.shape, 0) + 1
            rows.append((n, code, outcome))
        for n, code, outcome in rows[first:]:
            self.events.emit("candidate", id=n, target=f"{path}:{symbol}", asked=how,
                             parsed=bool(code), applied=bool(outcome and outcome.applied),
                             passes=bool(outcome and outcome.passes), failing=outcome.failing if outcome else [],
                             diff_lines=outcome.diff_lines if outcome else 0,
                             votes=votes.get(outcome.shape, 0) if outcome else 0,
                             breaks=outcome.breaks if outcome else [], lint=outcome.lint if outcome else [],
                             error=(outcome.error if outcome else "no code block in the reply"), code=code,
                             message=outcome.message if outcome else "")
        return baseline


def _new(sandbox: Sandbox, path: str, symbol: str, check: Check) -> str | None:
    """When symbol is not written yet and goes in path (a Python file that exists): a function the check calls
    ("add word_count(text) to text/stats.py"), or a method its class there lacks (localize.missing_method), the
    import lines of path, for the candidates to use; else None."""
    called = symbol.isidentifier() and any(symbol in bare_calls(e["expression"]) for e in check.examples)
    if not (called or missing_method(sandbox, path, symbol)):
        return None
    if not sandbox.run_tool("outline", {"path": path}, 60).success:  # not a module that parses: nowhere to add
        return None
    found = sandbox.run_tool("search", {"pattern": r"^(from|import)\s", "path": path}, 60)
    return "\n".join(m.text for m in details("search", found).matches) if found.success else None


def mechanical(whole: str, source: str, block: Block | None, tiers: tuple[frozenset[int], ...],
               limit: int) -> list[str]:
    """Up to limit mechanical candidates of the definition whole (source: without its docstring), of its block when
    there is one; those on the lines of the first of tiers first (the lines the failing tests point to), then of
    the next (the other lines they ran, by score)."""
    if block:
        return [spliced(whole, block, m) for m in mutants(inside(whole, block), limit)]
    return mutants(source, limit, tiers[0], tiers[1:]) if tiers else mutants(source, limit)


def _tiers(focus: tuple[int, ...], ran: tuple[tuple[int, ...], ...], start: int, whole: str, source: str,
           words: frozenset[str]) -> tuple[frozenset[int], tuple[frozenset[int], ...]]:
    """Where the mechanical candidates begin, as lines of source (the definition whole, at line start, without
    its docstring): the lines the failing tests point to (focus), then the other lines they ran, best first; when
    no test points to any, the lines whose names share a word with the goal's (omni/repair/worded.py)."""
    near = in_rewrite(focus, start, whole) or worded_lines(source, words)
    return near, tuple(in_rewrite(lines, start, whole) for lines in ran)


def _affordable(seconds_each: float | None) -> int:
    """How many mechanical candidates fit in MECHANICAL_S, at seconds_each (what trying one candidate took in the
    last round); UNTIMED before any round was timed."""
    if seconds_each is None:
        return UNTIMED
    return max(MIN_MUTANTS, min(MAX_MUTANTS, int(MECHANICAL_S / max(seconds_each, 0.1))))


def _reader(sandbox: Sandbox, path: str, symbol: str, reader: str | None) -> dict:
    """For a value (omni/repair/localize.py: values_of), the definition that reads it and its code, for the
    prompt: how the value is used says what it must hold. No reader for a definition."""
    found = sandbox.run_tool("read_symbol", {"symbol": reader, "path": path}, 60) if reader else None
    if not found or not found.success:
        return {"reader": "", "reader_source": "", "value_name": symbol}
    return {"reader": reader, "reader_source": without_docstring(details("read_symbol", found).sources[0]),
            "value_name": symbol.rsplit(".", 1)[-1]}


def _ranked(rows: list, votes: dict[str, int], probes: Probes, baseline: list[dict]) -> list:
    applied = [r for r in rows if r[2] and r[2].applied]
    seen = {r[0]: behaviour(probes, baseline, r[2].probes) for r in applied}
    alike = Counter(seen[r[0]][0] for r in applied if r[2].passes)
    return sorted(applied, key=lambda r: (
        not r[2].passes, len(r[2].breaks), len(r[2].failing), -alike[seen[r[0]][0]] if r[2].passes else 0,
        seen[r[0]][1], len(r[2].lint), -votes[r[2].shape], r[2].diff_lines))

def _unfixed_alone(symbol: str, size: int, path: str, lines: tuple[int, ...], ranked: list,
                   more: bool = False) -> ToolResult:
    """A definition tried by its one-change candidates alone (size: its length when it is too long to ask for whole,
    else 0: swept, its rewrite to come, the opening's target as much as a later suspect), which found no fix: where to
    look (lines: those the failing tests point to), without its code (the model reads the lines it needs). A swept
    definition whose best passed the check and broke tests is a near miss, as a sampled round's is (`details.near`):
    a definition short enough gets a sampled round there.
    `details.moved`: how many of its candidates made some of the check's failing tests pass (lineup.py);
    `details.more`: a long definition (a sweep is all it gets) has one-change candidates not yet made: its sweep
    stopped at its budget, and may be resumed (lineup.py)."""
    where = f" The failing tests point to line(s) {', '.join(map(str, lines[:5]))} of {path}." if lines else ""
    best = ranked[0][2] if ranked else None
    how = (f" The best broke {', '.join(best.breaks[:3])}." if best and best.passes else
           f" The best still fails: {best.message or ', '.join(best.failing[:3])}." if best else "")
    tried = (f"omni tried {len(ranked)} one-change edit(s) of it, those at the lines the tests point to first, "
             "and none passes the check without breaking tests" if ranked else "no one-change edit of it applies")
    what = f"{symbol} is {size} lines, too long to rewrite whole" if size else \
        f"{symbol} was tried by one-change edits alone (no rewrite of it asked yet)"
    near = {"near": next_note("", ranked, 0)} if best and best.passes and not size else {}  # sampled next: right place
    moved = sum(bool(getattr(o, "progress", False)) for _, _, o in ranked)  # made some failing tests pass
    return ToolResult.fail("tests_failed", f"{what}; {tried}.{how}{where} Read those lines, and edit the ones at "
                           "fault.", details=near | {"moved": moved, "more": more})


def _settled(ranked: list) -> bool:
    """Whether the best candidate so far passes the check and breaks nothing: no more rounds are needed."""
    return bool(ranked) and ranked[0][2].passes and not ranked[0][2].breaks


def described(check: Check, probes: Probes) -> str:
    """The check as the candidates' prompt says it, with the calls the goal says go wrong."""
    named = [f"- {p} gives something else than now (the goal says it goes wrong)" for p in probes.named]
    return "\n".join([check.describe(), *named])


def _judged(outcome, code: str, source: str, check: Check, probes: Probes, baseline: list[dict]):
    """The outcome, not passing when it leaves a call the goal says goes wrong as it was, when it stops
    reading a parameter that the code as it is (source; "" for a new function) reads, or when it tests for
    a value the goal's examples are written with."""
    if not outcome.passes and not is_step(outcome):
        return outcome
    if ignored := ignored_parameters(source, code):
        names = ", ".join(f"`{name}`" for name in ignored)
        miss = f"it no longer reads {names}, as the code now does: it answers the example instead of computing it"
    elif cases := special_cases(source, code, [e["expression"] for e in check.examples]):
        miss = (f"it tests `{cases[0]}`, a value from the goal's example: it answers the example instead of "
                "handling every input")
    elif not (miss := left_as_it_was(probes, baseline, outcome.probes)):
        return outcome
    return outcome.model_copy(update={"passes": False, "progress": False, "message": miss})
