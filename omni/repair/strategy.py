"""How verified repair reaches the loop: one object at the loop's named moments (omni/protocols.py: Strategy).
The loop knows it only by that protocol; omni/run/wiring.py makes it."""

from __future__ import annotations

from dataclasses import replace

from omni.box.toolbox import Toolbox, details
from omni.check.settled import Check, CheckNow
from omni.goal.reading import GoalReading
from omni.protocols import Events
from omni.repair.block import MAX_DEFINITION
from omni.repair.lineup import MAX_SWEPT, ROUNDS, Lineup
from omni.repair.localize import Spectrum, Target, chained, fix_target, outranked, suspects, tied, values_of
from omni.repair.verified import VerifiedRepair
from omni.results import Action, ToolResult

HINTED = 4  # the spectrum's suspects named to the model when omni's own rounds are done
OWN_ROUNDS = ("omni_opening", "omni_suspect")  # the call ids of those rounds


class RepairStrategy:
    """Verified repair as the loop's strategy (omni/protocols.py: Strategy), at the loop's four moments:

    - own_action: omni's next action instead of the model's. First, the opening round on the definition the goal
      and the check point to (omni/repair/localize.py), when they point to exactly one, else on the spectrum's
      best. When a round of its own finds no fix, a round on the next in line (omni/repair/lineup.py: a near miss's
      definition again with how the tests broke, the failing tests' suspects by their mechanical candidates alone,
      then rewritten whole, then the values they read): a wrong first target then costs a round, not the run. The
      last round names the model the suspects left. Later, a round on the definition of an edit that made the check
      pass, once the finish gate found tests it broke.
    - after_action: after an edit, a round on the definition the model was working on, when its rewrite was
      refused or changed nothing, or when its edit landed and the run's check still fails.
    - propose: the propose_fixes tool.
    - done: after an edit that landed, when the whole check passes, a summary for the finish gate, which is then
      asked at once (a small model goes on reading after its fix works, until the run's limit).

    At most ROUNDS rounds per definition. With repair off (--samples 1), only `done` remains."""

    def __init__(self, repair: VerifiedRepair | None, toolbox: Toolbox, check_now: CheckNow, reading: GoalReading,
                 events: Events, opening: bool = True, finish_on_check: bool = True):
        self.repair, self.toolbox, self.check_now, self.reading = repair, toolbox, check_now, reading
        self.events, self.finish_on_check = events, finish_on_check
        self.opens = opening and repair is not None
        self._start_over()

    def check_changed(self) -> None:
        """The run's check was settled again (the user's examples at a pause): what omni's rounds learnt against
        the old check (where its tests pointed, the rounds spent) is forgotten, and the opening round is owed again."""
        self._start_over()
        self.check_now.changed()

    def _start_over(self) -> None:
        repair = self.repair
        self.lineup = Lineup(MAX_SWEPT if repair is not None and repair.mechanical else 0,
                             blocks=repair is not None and repair.blocks is not None)
        self.rounds = self.lineup.rounds  # (path, symbol) -> rounds asked
        self.to_open = self.opens
        self.passed: tuple[tuple[str, str], int] | None = None  # an edit the check passed after: (target, tests)
        self.spectrum: Spectrum | None = None  # the failing tests' ranking, asked once by the opening and after it
        self.widen = False  # the last of omni's own rounds found no fix
        if repair is not None:
            for learnt in (repair.focus, repair.ran, repair.unsampled, repair.readers):
                learnt.clear()

    def plan(self) -> list[str] | None:
        return None  # the planner's

    def acts_first(self) -> bool:
        return self.to_open

    def propose(self, path: str, symbol: str, note: str = "") -> ToolResult:
        if self.repair is None:
            return ToolResult.fail("tool_error", "propose_fixes is off for this run (--samples 1); edit the code.")
        return self.repair.propose_fixes(path, symbol, note)

    def done(self, action: Action | None, result: ToolResult) -> str | None:
        if not self.finish_on_check or action is None or action.name not in self.toolbox.editing \
                or not result.success:
            return None
        check = self.check_now.check()
        if not check or not self.check_now.holds_after(action):
            return None
        self.events.emit("check_passes", tests=check.tests, examples=len(check.examples))
        return f"After the edit at this step, the run's check passes:\n{check.describe()}"

    def own_action(self) -> Action | None:
        """omni's next action of its own, in place of the model's: the opening round first; a round on the
        definition of an edit the check passed after, once the finish gate added tests it broke; else None."""
        if self.to_open:
            self.to_open = False
            return self.opening()
        if self.widen:
            self.widen = False
            if suspect := self.next_suspect():
                return suspect
        if self.repair is None or self.passed is None or len(self.check_now.check().tests) <= self.passed[1]:
            return None
        (path, symbol), self.passed = self.passed[0], None
        if self.rounds[(path, symbol)] >= ROUNDS:
            return None
        self.rounds[(path, symbol)] += 1
        why = "a rewrite made the check pass and broke tests that passed before"
        self.events.emit("rung", path=path, symbol=symbol, why=why)
        return Action(name="propose_fixes", args={"path": path, "symbol": symbol, "note": why},
                      call_id=f"omni_rung_{self.rounds[(path, symbol)]}")

    def opening(self) -> Action | None:
        """omni's own first action: propose_fixes on the localized definition; None when nothing is localized
        or there is no check to try fixes against."""
        check = self.check_now.check()
        if not check:
            return None
        self.events.emit("phase", name="looking for the definition to repair")
        self.spectrum = self._spectrum(check)
        target = fix_target(self.repair.sandbox, self.reading, check.tests, [e["expression"] for e in check.examples],
                            self.spectrum)
        if target is None:
            return self.next_suspect()
        if self.lineup.sweeps and not self.reading.fix:  # the cheap first, where the ranking is in doubt
            target = in_doubt(self.spectrum, target, self.lineup)
        return self._own_round(target, "opening", target.why, "omni_opening")

    def next_suspect(self) -> Action | None:
        """A round of omni's own on the next definition in line (omni/repair/lineup.py); None when there is none,
        or the room is spent."""
        lineup = self.lineup
        if lineup.wants_suspects():
            self.events.emit("phase", name="asking the tests where to look next")
            self.spectrum = self.spectrum or self._spectrum(self.check_now.check())
            lineup.suspects = suspects(self.spectrum, lineup.tried(), lineup.limit())
        if (target := lineup.next()) is None:
            return None
        near = lineup.near if lineup.near and lineup.near[:2] == (target.path, target.symbol) else None
        after = "" if near else "; a rewrite before it made part of the check pass" if lineup.stepped else \
            "; the rewrites of what came before found no fix"
        rounds = len(set(self.rounds))
        return self._own_round(target, "rung" if rounds else "opening", target.why + (after if rounds else ""),
                               f"omni_suspect_{rounds + 1}", note=near[2] if near else "")

    def _own_round(self, target: Target, kind: str, why: str, call_id: str, note: str = "") -> Action:
        """A round of omni's own on target, said as an event of `kind`; the lines the tests point to, when known,
        go to verified repair (its block rewrites); note: what the candidates are told first (how a near miss
        there went wrong)."""
        self.lineup.took(target)
        if target.swept:
            self.repair.unsampled.add((target.path, target.symbol))
        else:  # a swept definition back as a near miss: the place is right, so its round is sampled
            self.repair.unsampled.discard((target.path, target.symbol))
        if target.reader:
            self.repair.readers[(target.path, target.symbol)] = target.reader
        if target.lines:
            self.repair.focus[(target.path, target.symbol)] = target.lines
            self.repair.ran[(target.path, target.symbol)] = target.ran
        self.events.emit(kind, path=target.path, symbol=target.symbol, why=why, reader=target.reader)
        return Action(name="propose_fixes", args={"path": target.path, "symbol": target.symbol}
                      | ({"note": note} if note else {}), call_id=call_id)

    def _spectrum(self, check: Check) -> Spectrum:
        """The ranking of the check's failing tests, or of its examples when no test fails; its suspects may be
        long definitions (verified repair tries their mechanical candidates, or rewrites blocks of them)."""
        return Spectrum(self.repair.sandbox, check.tests, MAX_DEFINITION, check.examples, self.events,
                        self.reading.compares(), self.reading.code_words())

    def after_action(self, action: Action, result: ToolResult) -> ToolResult:
        if self.repair is None:
            return result
        target = _edited(self.toolbox.editing, action, result)
        if action.name == "propose_fixes":  # a success: its candidate passed the check, and is applied
            where = (str(action.args["path"]), str(action.args["symbol"]))
            self.passed = (where, len(self.check_now.check().tests)) if result.success else None
            self.widen = not result.success and action.call_id.startswith(OWN_ROUNDS)
            near = result.details.get("near") if self.widen else None
            self.lineup.near = (*where, near) if near else None
            self.lineup.moved[where] = int(result.details.get("moved", 0))
            self.lineup.unfinished[where] = bool(result.details.get("more"))
            if self.widen and where not in self.lineup.valued:
                self.lineup.values += [v for v in values_of(self.repair.sandbox, *where) if v not in self.lineup.values]
            self._after_step(result)
            if self.widen and self.lineup.suspects is not None and self.lineup.next() is None:
                result = result.model_copy(update={"error": result.error + _untried(self.spectrum, self.rounds)})
        if target is None:
            return result
        self.passed = None
        check = self.check_now.check()
        if self.rounds[target] >= ROUNDS or not check:
            return result
        if result.success and self.check_now.holds_after(action):
            self.passed = (target, len(check.tests))
            return result
        self.rounds[target] += 1
        if not result.success:
            why = (result.error.strip().splitlines() or [""])[0][:200]
            repaired = self._after_step(self.repair.propose_fixes(*target, note=f"a rewrite was refused: {why}"))
            if repaired.success:
                self.check_now.changed()
                return repaired.model_copy(update={"output": f"Your rewrite was refused ({why}); omni then tried "
                                                             f"several of its own.\n{repaired.output}"})
            return result.model_copy(update={"error": result.error + "\n\nomni also tried rewrites of its own: "
                                             + repaired.error})
        repaired = self._after_step(self.repair.propose_fixes(*target,
                                                              note="an edit to it landed, and the check still fails"))
        if repaired.success:
            self.check_now.changed()
        said = (f"The run's check still failed after this edit, so omni tried rewrites of {target[1]} of its own: "
                + (repaired.output if repaired.success else repaired.error))
        return result.model_copy(update={"output": f"{result.output}\n\n{said}"})

    def _after_step(self, result: ToolResult) -> ToolResult:
        """After a round that applied a step toward the check (a candidate that makes some of its failing tests
        pass: verified.py), what still fails may point elsewhere: the spectrum and the suspects are asked again,
        and the check is run again on the changed code."""
        step = result.details.get("step")
        self.lineup.stepped = (step["path"], step["symbol"]) if step else None
        if self.lineup.stepped:
            self.spectrum, self.lineup.suspects = None, None
            self.check_now.changed()
        return result


def in_doubt(spectrum: Spectrum, target: Target, lineup: Lineup) -> Target:
    """The opening's target, to be swept (its one-change candidates alone, before anything is sampled) when the
    ranking is in doubt: a tie at the top, a check of examples whose run goes through other definitions (then every
    suspect is swept first: lineup.doubt), or a target the spectrum ranks below another definition."""
    if tied(spectrum, target):
        return replace(target, swept=True, why=target.why + "; others score as high, so the one-change "
                       "candidates of each go before any is rewritten whole")
    if chained(spectrum, target):
        lineup.doubt = True
        return replace(target, swept=True, why=f"{target.why}; the examples' run goes through other definitions")
    if outranked(spectrum, target):
        return replace(target, swept=True, why=f"{target.why}; the failing tests' spectrum ranks other "
                       "definitions higher, so their one-change candidates go before any is rewritten whole")
    return target


def _edited(editing, action: Action, result: ToolResult) -> tuple[str, str] | None:
    """(path, definition): the rewrite's own target if it was refused; the one definition a landed
    edit changed; else None."""
    path = str(action.args.get("path", ""))
    if action.name not in editing or action.name == "propose_fixes" or not path:
        return None
    if not result.success:
        symbol = str(action.args.get("symbol", ""))
        refused = result.failure in ("edit_failed", "lint_failed")
        return (path, symbol) if action.name == "replace_symbol" and refused and symbol else None
    changed = getattr(details(action.name, result), "symbols", [])
    return (path, changed[0]) if len(changed) == 1 else None


def _untried(spectrum: Spectrum | None, rounds: dict) -> str:
    """Where else the failing tests point, for the model's steps once omni's own rounds are done: the spectrum's
    next suspects, with the line each is pointed to at ("" when there are none)."""
    rest = suspects(spectrum, set(rounds), HINTED) if spectrum else []
    named = "; ".join(f"{t.symbol} in {t.path}" + (f" (line {t.lines[0]})" if t.lines else "") for t in rest)
    return (f"\n\nomni's own rounds are done. The failing tests also point to, best first: {named}. Read the "
            "likeliest, then fix it (propose_fixes tries rewrites of one)." if named else "")
