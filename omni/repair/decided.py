"""What a call's ranked candidates come to (omni/repair/verified.py): the best that passes is applied; a near miss
(it passes and breaks tests) or the best miss is told to the model with its code; a step toward the check (some of
its failing tests pass, nothing breaks) is applied and said so."""

from __future__ import annotations

from omni.protocols import Events, Sandbox
from omni.results import ToolResult


def decide(sandbox: Sandbox, events: Events, path: str, symbol: str, ranked: list, votes: dict, asked: int,
       copies: int) -> ToolResult:
    if not ranked:
        why = ("each was the code as it is now" if copies == asked else
               "no code, or a syntax or lint error" + (f"; {copies} were the code unchanged" if copies else ""))
        return ToolResult.fail("edit_failed", f"none of the {asked} candidate rewrites of {symbol} could be "
                               f"applied ({why}). Edit the code yourself.")
    n, code, outcome = ranked[0]
    said = f"{asked} candidate rewrites of {symbol} tried in a scratch copy"
    if outcome.passes and outcome.breaks:
        how = f" The first fails so:\n{outcome.message}\n" if outcome.message else " "
        return ToolResult.fail("tests_failed", f"{said}; the best (candidate {n}) passes the check but breaks "
                               f"tests that passed before: {', '.join(outcome.breaks[:3])}.{how}Its code:\n"
                               f"```python\n{code}\n```\nKeep what it fixes, and edit the code so those pass too.",
                               details={"near": next_note("", ranked, 0)})  # for the strategy: a near miss
    step = next((r for r in ranked if is_step(r[2])), None) if not outcome.passes else None
    if step is not None:
        return _step_taken(sandbox, events, path, symbol, step, said)
    if not outcome.passes:
        what = outcome.message or ", ".join(outcome.failing[:3]) or "the goal's examples do not hold"
        return ToolResult.fail("tests_failed", f"{said}; none passes the check. The best (candidate {n}) still "
                               f"fails: {what}. Its code:\n```python\n{code}\n```\nWork out from the "
                               "failure what it must do differently, and edit the code.")
    applied = _apply(sandbox, path, symbol, outcome.tidied or code)
    if not applied.success:
        return applied
    tidied = " with ruff's fixes for the lint findings it added" if outcome.tidied else ""
    lint = (f"\nIt adds lint findings the finish gate will hold against the run: {'; '.join(outcome.lint[:3])}. "
            "Clear them with an edit that keeps what it does." if outcome.lint else "")
    return ToolResult.ok(f"{said}; candidate {n} passes the check ({votes[outcome.shape]} of {asked} wrote "
                         f"it) and is applied{tidied}.{lint}\n{applied.output}", details=applied.details)


def _apply(sandbox: Sandbox, path: str, symbol: str, code: str) -> ToolResult:
    return sandbox.run_tool("replace_symbol", {"path": path, "symbol": symbol, "new_source": code}, 120)


def _step_taken(sandbox: Sandbox, events: Events, path: str, symbol: str, step: tuple, said: str) -> ToolResult:
    """No candidate passes the whole check, and one is a step toward it (is_step): it is applied, and the result
    says so and what still fails (a fault in two places: the other place's own tests). Not a success: the check
    still fails; `details.step` says where it was applied, for the strategy."""
    n, code, outcome = step
    applied = _apply(sandbox, path, symbol, outcome.tidied or code)
    if not applied.success:
        return applied
    events.emit("step_applied", target=f"{path}:{symbol}", candidate=n, still_failing=outcome.failing)
    return ToolResult.fail("tests_failed", f"{said}; none passes the whole check, but candidate {n} makes some "
                           f"of its failing tests pass and breaks none, and is applied. Still failing: "
                           f"{', '.join(outcome.failing[:5])}" + (f"\n{outcome.message}" if outcome.message
                                                                  else "")
                           + "\nThe rest may need a change somewhere else.",
                           details={"step": {"path": path, "symbol": symbol, "still_failing": outcome.failing}})


def next_note(note: str, ranked: list, copies: int) -> str:
    """The next round's note: how the best candidate so far still went wrong, and how many candidates
    were the code unchanged. Not the candidate's code: a small model shown a rewrite writes it again."""
    parts = [note] if note else []
    if ranked:
        outcome = ranked[0][2]
        parts.append(f"a rewrite that made the check pass broke {', '.join(outcome.breaks[:3])}"
                     + (f", the first so: {outcome.message}" if outcome.message else "")
                     if outcome.passes else "a rewrite tried before still failed: "
                     + (outcome.message or ", ".join(outcome.failing[:2]) or "the check"))
    if copies:
        parts.append(f"{copies} rewrite(s) were the code unchanged; change what is wrong")
    return "; ".join(parts) + "."


def is_step(outcome) -> bool:
    """Whether a candidate that does not pass the check is a step toward it: some of the check's tests that fail
    now pass with it, no other fails, and no test that passed before breaks."""
    return bool(getattr(outcome, "progress", False)) and not outcome.passes and not outcome.breaks
