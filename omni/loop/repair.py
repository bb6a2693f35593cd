"""Verified repair, a strategy of the loop: sample several complete rewrites of one definition (one short
prompt of its own: the goal, the check, the code; a sampling temperature), try each in a scratch copy of
the workspace against the run's check (the tests failing at the start, the goal's examples), and apply the
one that passes.

Rank: the check passes, then fewer failing tests; among those that pass, the behaviour most of them share
on the probes (omni/check/probes.py: calls near the goal's examples), then the fewest probes changed from
the code as it is, then more votes (candidates with the same syntax tree), then a smaller diff. A candidate
that leaves a call the goal says goes wrong as it was does not pass, nor does one that stops reading a
parameter the code as it is reads (omni/check/inputs.py: it answers the example instead of computing
it). When none passes, the model gets the best candidate and what it did to the check, not k raw failures.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable

from omni.box.toolbox import Toolbox, details
from omni.check.examples import bare_calls
from omni.check.inputs import first_statement, ignored_parameters, special_cases
from omni.check.localize import fix_target
from omni.check.probes import behaviour, left_as_it_was
from omni.check.settled import Check, CheckNow
from omni.loop.state import UsageMeter
from omni.model.textmode import code_of
from omni.prompts import Prompts
from omni.protocols import Events, Model, Sandbox
from omni.results import Action, ToolResult

TEMPERATURE = 0.8
ROUNDS = 2  # times the rung asks for candidates per definition
ROUNDS_PER_CALL = 2  # rounds of samples one propose_fixes asks for while none passes: the next hears how it failed


class VerifiedRepair:
    def __init__(self, model: Model, sandbox: Sandbox, prompts: Prompts, events: Events, meter: UsageMeter,
                 check: Callable[[], Check], samples: int, goal: str):
        self.model, self.sandbox, self.prompts, self.events, self.meter = model, sandbox, prompts, events, meter
        self.check, self.samples, self.goal = check, samples, goal

    def propose_fixes(self, path: str, symbol: str, note: str = "") -> ToolResult:
        check = self.check()
        if self.samples < 2:
            return ToolResult.fail("tool_error", "propose_fixes is off for this run (--samples 1); edit the code.")
        if not check.tests and not check.examples:
            return ToolResult.fail("tool_error", "there is no check to try fixes against: no test fails and the "
                                   "goal gives no example. Fix the code with an edit, or write a failing test first.")
        found, imports, whole = self.sandbox.run_tool("read_symbol", {"symbol": symbol, "path": path}, 60), "", ""
        if found.success:
            whole = details("read_symbol", found).sources[0]
            source = without_docstring(whole)
        elif (imports := self._new(path, symbol, check)) is not None:
            source = ""  # not written yet: the candidates are new functions, added at the end of path
        else:
            return found
        rows: list = []  # (id, code, outcome) of every candidate of this call
        votes: dict[str, int] = {}
        baseline: list[dict] = []  # what the probes give on the code as it is
        for _ in range(ROUNDS_PER_CALL):
            replies, how = self.model.samples(self._messages(
                symbol=symbol, path=path, check=check.describe(), note=note, source=source, imports=imports,
                documented=source != whole), self.samples, TEMPERATURE)
            for reply in replies:
                self.meter.count(reply.usage, "candidates")
            tried = self._round(path, symbol, whole, [code_of(r.text) for r in replies], check, how, rows, votes)
            if isinstance(tried, ToolResult):
                return tried
            baseline = tried or baseline
            ranked = self._ranked(rows, votes, check, baseline)
            copies = sum(1 for _, _, o in rows if o and o.unchanged)
            if ranked and ranked[0][2].passes and not ranked[0][2].breaks:
                break
            note = self._next_note(note, ranked, copies)
        return self._decide(path, symbol, ranked, votes, len(rows), copies)

    def _messages(self, **fields) -> list[dict]:
        """The candidates' request: a short conversation of its own, not the run's. Asked on the run's long
        one (system prompt, tools, briefing, plan, history), the local 1.5B model wrote a right rewrite of
        dateutil's _fix in 1 of 52 samples and of wcwidth's wcswidth in 0 of 32 (runs R-T); asked with only
        the goal, the check and the code, in 3 of 16 and 4 of 16. The price: a llama.cpp server keeps one
        prompt's cache, so the step after a round reads the run's prompt again."""
        return [{"role": "system", "content": self.prompts.render("repair_system")},
                {"role": "user", "content": self.prompts.render("propose", goal=self.goal, **fields)}]

    def _new(self, path: str, symbol: str, check: Check) -> str | None:
        """When symbol is a function the check calls that is not written yet, to go in path (a Python file
        that exists: a new feature's function, "add count_reps(seq) to funcy/seqs.py"), the import lines of
        path, for the candidates to use; else None."""
        if not symbol.isidentifier() or all(symbol not in bare_calls(e["expression"]) for e in check.examples):
            return None
        found = self.sandbox.run_tool("search", {"pattern": r"^(from|import)\s", "path": path}, 60)
        return "\n".join(m.text for m in details("search", found).matches) if found.success else None

    def _round(self, path: str, symbol: str, source: str, codes: list[str], check: Check, how: str, rows: list,
               votes: dict[str, int]) -> ToolResult | list[dict]:
        """Try one round's candidates in the sandbox; add them to rows (numbered on from the last round's)
        and votes, one event each. What the probes give on the code as it is; a ToolResult only when
        try_fixes itself failed."""
        usable = [c for c in codes if c]
        outcomes, baseline = [], []
        if usable:
            tried = self.sandbox.run_tool("try_fixes", {"path": path, "symbol": symbol, "candidates": usable,
                                                        "tests": check.tests, "examples": check.examples,
                                                        "probes": check.probes.all,
                                                        "failing_before": check.failing_at_start}, 900)
            if not tried.success:
                return tried
            found = details("try_fixes", tried)
            baseline = list(found.baseline)
            outcomes = [_judged(o, code, source, check, baseline)
                        for o, code in zip(found.outcomes, usable, strict=True)]
        first = len(rows)
        for n, code in enumerate(codes, first + 1):
            outcome = outcomes.pop(0) if code else None
            if outcome is not None:
                votes[outcome.shape] = votes.get(outcome.shape, 0) + 1
            rows.append((n, code, outcome))
        for n, code, outcome in rows[first:]:
            self.events.emit("candidate", id=n, target=f"{path}:{symbol}", asked=how,
                             parsed=bool(code), applied=bool(outcome and outcome.applied),
                             passes=bool(outcome and outcome.passes), failing=outcome.failing if outcome else [],
                             diff_lines=outcome.diff_lines if outcome else 0,
                             votes=votes.get(outcome.shape, 0) if outcome else 0,
                             breaks=outcome.breaks if outcome else [],
                             error=(outcome.error if outcome else "no code block in the reply"), code=code,
                             message=outcome.message if outcome else "")
        return baseline

    @staticmethod
    def _ranked(rows: list, votes: dict[str, int], check: Check, baseline: list[dict]) -> list:
        applied = [r for r in rows if r[2] and r[2].applied]
        seen = {r[0]: behaviour(check.probes, baseline, r[2].probes) for r in applied}
        alike = Counter(seen[r[0]][0] for r in applied if r[2].passes)
        return sorted(applied, key=lambda r: (
            not r[2].passes, len(r[2].breaks), len(r[2].failing), -alike[seen[r[0]][0]] if r[2].passes else 0,
            seen[r[0]][1], -votes[r[2].shape], r[2].diff_lines))

    @staticmethod
    def _next_note(note: str, ranked: list, copies: int) -> str:
        """The next round's note: how the best candidate so far still went wrong, and how many candidates
        were the code unchanged. Not the candidate's code: a 1.5B model shown a rewrite writes it again
        (wcwidth, funcy: the whole second round was copies of the miss it was shown)."""
        parts = [note] if note else []
        if ranked:
            outcome = ranked[0][2]
            parts.append(f"a rewrite that made the check pass broke {', '.join(outcome.breaks[:3])}"
                         if outcome.passes else "a rewrite tried before still failed: "
                         + (outcome.message or ", ".join(outcome.failing[:2]) or "the check"))
        if copies:
            parts.append(f"{copies} rewrite(s) were the code unchanged; change what is wrong")
        return "; ".join(parts) + "."

    def _decide(self, path: str, symbol: str, ranked: list, votes: dict, asked: int, copies: int) -> ToolResult:
        if not ranked:
            why = ("each was the code as it is now" if copies == asked else
                   "no code, or a syntax or lint error" + (f"; {copies} were the code unchanged" if copies else ""))
            return ToolResult.fail("edit_failed", f"none of the {asked} candidate rewrites of {symbol} could be "
                                   f"applied ({why}). Edit the code yourself.")
        n, code, outcome = ranked[0]
        said = f"{asked} candidate rewrites of {symbol} tried in a scratch copy"
        if outcome.passes and outcome.breaks:
            return ToolResult.fail("tests_failed", f"{said}; the best (candidate {n}) passes the check but breaks "
                                   f"tests that passed before: {', '.join(outcome.breaks[:3])}. Its code:\n```python"
                                   f"\n{code}\n```\nKeep what it fixes, and edit the code so those pass too.")
        if not outcome.passes:
            what = outcome.message or ", ".join(outcome.failing[:3]) or "the goal's examples do not hold"
            return ToolResult.fail("tests_failed", f"{said}; none passes the check. The best (candidate {n}) still "
                                   f"fails: {what}. Its code:\n```python\n{code}\n```\nWork out from the "
                                   "failure what it must do differently, and edit the code.")
        applied = self.sandbox.run_tool("replace_symbol", {"path": path, "symbol": symbol, "new_source": code}, 120)
        if not applied.success:
            return applied
        return ToolResult.ok(f"{said}; candidate {n} passes the check ({votes[outcome.shape]} of {asked} wrote "
                             f"it) and is applied.\n{applied.output}", details=applied.details)


def _judged(outcome, code: str, source: str, check: Check, baseline: list[dict]):
    """The outcome, not passing when it leaves a call the goal says goes wrong as it was, when it stops
    reading a parameter that the code as it is (source; "" for a new function) reads, or when it tests for
    a value the goal's examples are written with."""
    if not outcome.passes:
        return outcome
    if ignored := ignored_parameters(source, code):
        names = ", ".join(f"`{name}`" for name in ignored)
        miss = f"it no longer reads {names}, as the code now does: it answers the example instead of computing it"
    elif cases := special_cases(source, code, [e["expression"] for e in check.examples]):
        miss = (f"it tests `{cases[0]}`, a value from the goal's example: it answers the example instead of "
                "handling every input")
    elif not (miss := left_as_it_was(check.probes, baseline, outcome.probes)):
        return outcome
    return outcome.model_copy(update={"passes": False, "message": miss})


def without_docstring(source: str) -> str:
    """The definition as the candidates are asked to rewrite it: without its docstring, which replace_symbol
    keeps. A 1.5B model copies a docstring it is shown into every candidate, and generation is the cost
    (wcwidth's wcswidth: 25 lines of docstring in a 53-line function). Unchanged when it has none, when the
    docstring is the whole body, or when it shares a line with other code."""
    node = first_statement(source)
    body = getattr(node, "body", [])
    if len(body) < 2 or not isinstance(body[0], ast.Expr) or not isinstance(getattr(body[0], "value", None),
                                                                             ast.Constant):
        return source
    doc, after = body[0], body[1]
    if not isinstance(doc.value.value, str) or doc.lineno <= node.lineno or after.lineno <= doc.end_lineno:
        return source
    lines = source.splitlines()
    return "\n".join(lines[:doc.lineno - 1] + lines[doc.end_lineno:])


class RepairRung:
    """The ladder's rungs of verified repair. The first, before the model's first step: the definition the
    goal and the check point to (omni/check/localize.py), when they point to exactly one. The next, after an
    edit: the definition the model was working on, when its rewrite was refused or changed nothing, or when
    its edit landed and the run's check still fails. And when an edit made the check pass but the finish
    gate found tests it broke (they join the check), omni's next action is a round on that definition.
    At most ROUNDS rounds per definition. A model whose edit makes the check pass is not slowed down."""

    def __init__(self, repair: VerifiedRepair, toolbox: Toolbox, check_now: CheckNow, goal: str = "",
                 opening: bool = True):
        self.repair, self.toolbox, self.check_now, self.goal = repair, toolbox, check_now, goal
        self.rounds: Counter[tuple[str, str]] = Counter()
        self.to_open = opening
        self.passed: tuple[tuple[str, str], int] | None = None  # an edit the check passed after: (target, tests)

    def own_action(self) -> Action | None:
        """omni's next action of its own, in place of the model's: the opening round first; a round on the
        definition of an edit the check passed after, once the finish gate added tests it broke; else None."""
        if self.to_open:
            self.to_open = False
            return self.opening()
        if self.passed is None or len(self.check_now.check().tests) <= self.passed[1]:
            return None
        (path, symbol), self.passed = self.passed[0], None
        if self.rounds[(path, symbol)] >= ROUNDS:
            return None
        self.rounds[(path, symbol)] += 1
        why = "a rewrite made the check pass and broke tests that passed before"
        self.repair.events.emit("rung", path=path, symbol=symbol, why=why)
        return Action(name="propose_fixes", args={"path": path, "symbol": symbol, "note": why},
                      call_id=f"omni_rung_{self.rounds[(path, symbol)]}")

    def opening(self) -> Action | None:
        """omni's own first action: propose_fixes on the localized definition; None when nothing is localized
        or there is no check to try fixes against."""
        check = self.check_now.check()
        if not check:
            return None
        self.repair.events.emit("phase", name="looking for the definition to repair")
        target = fix_target(self.repair.sandbox, self.goal, check.tests, [e["expression"] for e in check.examples])
        if target is None:
            return None
        self.rounds[(target.path, target.symbol)] += 1
        self.repair.events.emit("opening", path=target.path, symbol=target.symbol, why=target.why)
        return Action(name="propose_fixes", args={"path": target.path, "symbol": target.symbol},
                      call_id="omni_opening")

    def __call__(self, action: Action, result: ToolResult) -> ToolResult:
        target = self.target(action, result)
        if action.name == "propose_fixes":  # a success: its candidate passed the check, and is applied
            where = (str(action.args["path"]), str(action.args["symbol"]))
            self.passed = (where, len(self.check_now.check().tests)) if result.success else None
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
            repaired = self.repair.propose_fixes(*target, note=f"a rewrite was refused: {why}")
            if repaired.success:
                self.check_now.changed()
                return repaired.model_copy(update={"output": f"Your rewrite was refused ({why}); omni then tried "
                                                             f"several of its own.\n{repaired.output}"})
            return result.model_copy(update={"error": result.error + "\n\nomni also tried rewrites of its own: "
                                             + repaired.error})
        repaired = self.repair.propose_fixes(*target, note="an edit to it landed, and the check still fails")
        if repaired.success:
            self.check_now.changed()
        said = (f"The run's check still failed after this edit, so omni tried rewrites of {target[1]} of its own: "
                + (repaired.output if repaired.success else repaired.error))
        return result.model_copy(update={"output": f"{result.output}\n\n{said}"})

    def target(self, action: Action, result: ToolResult) -> tuple[str, str] | None:
        """(path, definition): the rewrite's own target if it was refused; the one definition a landed
        edit changed; else None."""
        path = str(action.args.get("path", ""))
        if action.name not in self.toolbox.editing or action.name == "propose_fixes" or not path:
            return None
        if not result.success:
            symbol = str(action.args.get("symbol", ""))
            refused = result.failure in ("edit_failed", "lint_failed")
            return (path, symbol) if action.name == "replace_symbol" and refused and symbol else None
        changed = getattr(details(action.name, result), "symbols", [])
        return (path, changed[0]) if len(changed) == 1 else None
