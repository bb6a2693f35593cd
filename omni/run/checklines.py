"""The lines of a run's log that say how its work was checked: the run's check and the baseline, verified
repair's candidates, the finish gate's validation, review and decision, and the summary at the end. ConsoleUI
(omni/run/ui.py) hands these events here; like it, this only prints."""

from __future__ import annotations

from collections.abc import Callable

from omni.check.reproduction import MODEL_WRITTEN
from omni.results import cost_text
from omni.visible import safe


class CheckLines:
    def __init__(self, print_: Callable[..., None], close: Callable[[], None]):
        self.print, self.close = print_, close

    def on_check(self, source, tests, result, tried=True, unrelated=(), asserts=(), **_):
        mark = "[green]✓[/]" if source != "none" else "[red]✗[/]" if tried else "[dim]·[/]"
        self.print(f"  {mark} check: {safe(source)}: {safe(result)}"
                   f"{' (' + safe(', '.join(tests[:3])) + ')' if tests else ''}")
        if source in MODEL_WRITTEN and asserts:
            self.print(f"    [dim]written by the model; it asserts: {safe('; '.join(asserts))}[/]")
        if unrelated:
            self.print(f"  [dim]failing before the run, and not what the goal is about (they do not block): "
                       f"{safe(', '.join(unrelated[:3]))}{' …' if len(unrelated) > 3 else ''}[/]")

    def on_reproduction_try(self, attempt, fails_as_it_should, outcome, form="test", sample=None, **_):
        shows = "fails on the starting code, as it should" if form == "test" else \
            "does not hold on the starting code, as it should"
        said = shows if fails_as_it_should else (outcome.strip().splitlines() or [f"no {form}"])[0][:140]
        which = f", sample {sample}" if sample else ""
        self.print(f"  [dim]reproduction {safe(form)}, try {attempt}{which}: {safe(said)}[/]")

    def on_check_passes(self, tests, examples, **_):
        what = ", ".join(p for p in (f"{len(tests)} test(s)" if tests else "", f"{examples} example(s)" if examples
                                     else "") if p)
        self.print(f"  [green]✓ the run's check passes now[/] ({what}): asking the finish gate")

    def on_spectrum(self, suspects, error="", **_):
        best = ", ".join(f"{s['symbol']} {s['score']:.2f}" for s in suspects[:3])
        said = f"best {best}" if best else f"no suspect ({error[:120]})" if error else "no suspect"
        self.print(f"  [dim]the failing tests' spectrum: {safe(said)}[/]")

    def on_opening(self, path, symbol, why, **_):
        self.print(f"  [cyan]omni starts by trying rewrites of {safe(symbol)}[/] in {safe(path)} ({safe(why)})")

    def on_rung(self, path, symbol, why, **_):
        self.print(f"  [cyan]omni tries rewrites of {safe(symbol)}[/] in {safe(path)} ({safe(why)})")

    def on_step_applied(self, target, candidate, still_failing, **_):
        self.print(f"  [yellow]◐ candidate {candidate} for {safe(target)} makes part of the check pass and breaks "
                   f"nothing: applied[/]; still failing: {safe(', '.join(still_failing[:3]))}"
                   f"{' …' if len(still_failing) > 3 else ''}")

    def on_candidate(self, id, target, passes, applied, failing, diff_lines, votes, error="", breaks=(), message="",
                     **_):
        if passes and breaks:
            said = f"[red]✗ passes the check but breaks[/] {safe(', '.join(breaks[:2]))}"
        elif passes:
            said = f"[green]✓ passes the check[/] ({diff_lines} line(s), {votes} vote(s))"
        elif applied and message and not failing:  # an example that does not hold, or why it does not pass
            said = f"[red]✗[/] {safe(message[:100])} ({diff_lines} line(s))"
        elif applied:
            said = f"[red]✗ fails[/] {safe(', '.join(failing[:2]) or 'the examples')} ({diff_lines} line(s))"
        else:
            said = f"[red]✗ not applied[/]: {safe(error[:100])}"
        self.print(f"  candidate {id} for {safe(target)}: {said}")

    def on_review(self, verdict, confidence, reasons, **_):
        style = {"approved": "green", "refine": "yellow", "flag": "red"}.get(verdict, "")
        self.print(f"  [{style}]review: {safe(verdict)} ({confidence:.0%})[/] {safe('; '.join(reasons)[:300])}")

    def on_baseline(self, tests, lint_problems, **_):
        self.print(f"[dim]baseline: {safe(tests or 'no tests')}; {lint_problems} lint problem(s) before the run[/]")

    def on_gate(self, decision, attempt, reasons, **_):
        style = {"accept": "green", "refine": "yellow"}.get(decision, "red")
        self.print(f"  [{style}]gate: {decision}[/] (check {attempt}) {safe('; '.join(reasons)[:300])}")

    def on_validation(self, new_failures, **_):
        if new_failures:
            self.print(f"  [yellow]validation: {safe('; '.join(new_failures)[:300])}[/]")
        else:
            self.print("  [green]validation: no new test or lint failures[/]")

    def on_summary(self, run_id, status, steps, usage, wall_s, changed_files, applied, apply_note, branch,
                   record, tests=None, assumptions=(), first_action_s=None, cached_share=0.0, check=None, **_):
        self.close()
        tokens = f"{usage.get('prompt_tokens', 0):,}+{usage.get('completion_tokens', 0):,} tokens"
        self.print(f"\n[bold]Run {safe(run_id)}[/]: {safe(status)}; {steps} steps, {tokens}, "
                   f"{cost_text(usage)}, {wall_s:.1f}s")
        for row in changed_files:
            self.print(f"  {safe(row['path'])}  [green]+{row['added']}[/] [red]-{row['removed']}[/]")
        if tests:
            self.print(f"  tests: {safe(tests)}")
        self.print(f"  {_check_line(check)}")
        if first_action_s is not None:
            self.print(f"  [dim]first action after {first_action_s:.0f}s; {cached_share:.0%} of prompt tokens "
                       "after the first request came from the server's cache[/]")
        for question in assumptions:
            self.print(f"  [yellow]assumed an answer to:[/] {safe(question)}")
        if applied:
            self.print(f"[green]{safe(apply_note)}[/]. Undo with: omni undo {safe(run_id)}")
        elif changed_files:
            if apply_note:
                self.print(f"[yellow]{safe(apply_note)}[/]")
            self.print(f"The changes are on branch {safe(branch)}. Apply them with: omni apply {safe(run_id)}")
        self.print(f"Run record: {safe(record)}")


def _check_line(check: dict | None) -> str:
    """The summary's line on the run's check: whether the result is verified, and by what; a check the model wrote
    is said with what it asserts, under --yes too (nothing asked the user before the apply)."""
    check = check or {"source": "none", "holds": None}
    if check["source"] == "none":
        return "[yellow]unchecked:[/] no check could be settled (no example in the goal, no failing test it is " \
               "about, no reproduction that fails on the code as it was); the tests that passed before and the " \
               "review are all that looked at it"
    if check["holds"] is True and check["source"] in MODEL_WRITTEN and check.get("asserts"):
        return f"[green]verified[/] [yellow]by a check the model wrote[/] (a {safe(check['source'])}, not a test of " \
               f"yours): it holds, and it asserts {safe('; '.join(check['asserts'][:3]))}"
    if check["holds"] is True:
        return f"[green]verified:[/] the run's check holds ({safe(check['source'])})"
    if check["holds"] is False:
        return f"[red]not verified:[/] the run's check still fails: {safe('; '.join(check.get('failing', [])[:3]))}"
    return f"[yellow]not verified:[/] the run ended before its check ({safe(check['source'])}) was run at a finish"
