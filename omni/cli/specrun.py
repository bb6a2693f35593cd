"""`omni plan GOAL --spec F` writes a task spec with the planner model; `omni run F` carries it out step by
step in dependency order, each step a full run behind the finish gate, with progress written to
F's state copy (<name>.state.yaml) so a later `omni run F` resumes at the first unfinished step."""

from __future__ import annotations

import argparse
import glob
import sys
from typing import Literal
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from omni.box import hostgit
from omni.cli import spec as specs
from omni.model.endpoint import resolve_models
from omni.errors import UsageError
from omni.prompts import Prompts
from omni.run.frame import Delegation
from omni.run.session import RunRequest, run_goal
from omni.model.textmode import json_object
from omni.box.workspace import find_repo
from omni.visible import safe

UNDERSTANDING_ROUNDS = 2


def add_commands(sub) -> None:
    """`omni plan` and `omni run`, added to the subcommand parser (omni/cli/commands.py)."""
    from omni.cli.options import add_run_options

    plan = sub.add_parser("plan", help="write a YAML task spec for a goal")
    plan.add_argument("goal")
    plan.add_argument("--spec", type=Path, required=True, help="where to write the spec")
    plan.add_argument("--force", action="store_true", help="overwrite an existing spec")
    add_run_options(plan)
    run = sub.add_parser("run", help="carry out a YAML task spec")
    run.add_argument("spec", type=Path)
    run.add_argument("--check-understanding", action="store_true",
                     help="before each step, check the executor's understanding with the planner model")
    add_run_options(run)


def _models(settings):
    from omni.model.client import ChatModel

    action, planner = resolve_models(settings)
    return ChatModel(action), ChatModel(planner)


def plan_spec(args, settings, console: Console) -> int:
    if args.spec.exists() and not args.force:
        raise UsageError(f"{args.spec} exists; pass --force to overwrite it")
    repo = find_repo((args.repo or Path.cwd()).resolve())
    files = hostgit.text(["ls-files"], Path(repo.working_tree_dir), check=False).splitlines()[:60]
    prompts = Prompts()
    _, planner = _models(settings)
    messages = [{"role": "user", "content": prompts.render("spec_plan", goal=args.goal, files=files)}]
    for attempt in range(2):
        reply = planner.text(messages, schema=specs.TaskSpec)
        try:
            spec = specs.parse(json_object(reply.text), "the planner's reply")
            break
        except (ValueError, UsageError) as exc:
            if attempt == 1:
                console.print(f"[red]the planner did not produce a valid spec: {safe(str(exc))}[/]")
                return 1
            messages += [{"role": "assistant", "content": reply.text},
                         {"role": "user", "content": prompts.render("spec_retry", error=str(exc))}]
    specs.dump(spec, args.spec)
    console.print(f"wrote {safe(args.spec)}: task {safe(spec.task_id)}, {len(spec.plan)} steps")
    for step in spec.ordered():
        after = f" (after {', '.join(step.depends_on)})" if step.depends_on else ""
        console.print(f"  {safe(step.step_id + after)}: {safe(step.description)}")
    return 0


class Judgement(BaseModel):
    """The planner's verdict on what the executor understood (the shape structured output asks for)."""

    verdict: Literal["satisfactory", "needs_refinement"]
    feedback: str = ""


def understand(spec, step, executor, planner, prompts: Prompts, state, console: Console) -> None:
    """The executor says what it understood; the planner judges; unclear instructions are rewritten
    (in the step itself, so the run and the state copy use them)."""
    for round_no in range(UNDERSTANDING_ROUNDS + 1):
        task = _task_text(prompts, spec, step)
        summary = executor.text([{"role": "user", "content": prompts.render("understand", task=task)}]).text.strip()
        judgement = planner.text([{"role": "user", "content": prompts.render(
            "judge_understanding", task=task, summary=summary)}], schema=Judgement).text
        try:
            data = json_object(judgement)
            verdict, feedback = str(data.get("verdict", "")), str(data.get("feedback", ""))
        except ValueError:
            verdict, feedback = "unreadable", judgement[:300]
        state.understanding.append(specs.Understanding(summary=summary, verdict=verdict, feedback=feedback))
        console.print(f"  understanding check {round_no + 1}: [bold]{safe(verdict)}[/] {safe(feedback[:200])}")
        if verdict != "needs_refinement":
            return
        if round_no == UNDERSTANDING_ROUNDS:
            console.print("  [yellow]still unclear after refining; proceeding with the latest instructions[/]")
            break
        step.agent_spec.instructions = planner.text([{"role": "user", "content": prompts.render(
            "refine_instructions", instructions=step.agent_spec.instructions, summary=summary,
            feedback=feedback)}]).text.strip()
        console.print(f"  [yellow]instructions refined:[/] {safe(step.agent_spec.instructions[:300])}")


def _task_text(prompts: Prompts, spec: specs.TaskSpec, step: specs.SpecStep) -> str:
    a = step.agent_spec
    return prompts.render("step_goal", description=step.description, step_id=step.step_id,
                          overall_goal=spec.natural_language_goal, overall_context=spec.overall_context,
                          instructions=a.instructions, constraints=a.constraints, inputs=a.input_artifacts,
                          outputs=a.output_artifacts, criteria=a.validation_criteria)


def _confirm(spec: specs.TaskSpec, console: Console) -> bool:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("omni run applies each step's changes to your working tree as the step passes; "
                         "pass --yes to allow that")
    return console.input(f"Run {len(spec.plan)} steps of {spec.task_id}, applying each step's changes to your "
                         "working tree as it passes? \\[y/N] ").strip().lower() in ("y", "yes")


def _carry_over(spec: specs.TaskSpec, state_path: Path) -> None:
    """Progress and refined instructions from an earlier run of the same spec."""
    if not state_path.exists():
        return
    saved = specs.load(state_path)
    if saved.task_id == spec.task_id:
        by_id = {s.step_id: s for s in saved.plan}
        for step in spec.plan:
            if step.step_id in by_id and by_id[step.step_id].refinement_state:
                step.refinement_state = by_id[step.step_id].refinement_state


def _delegation(step: specs.SpecStep, root: Path) -> Delegation | None:
    """A step of type aider (or aider:automatic, aider:interactive) hands its change to Aider: its instructions (and
    constraints) are the instruction, its input artifacts (globs expanded in the repository) the files."""
    a = step.agent_spec
    if a.type not in specs.AIDER_TYPES:
        return None
    files: list[str] = []
    for pattern in a.input_artifacts:
        found = sorted(glob.glob(pattern, root_dir=root, recursive=True)) if glob.has_magic(pattern) else [pattern]
        files += [f for f in found if not (root / f).is_dir()]
    instruction = a.instructions + ("\nConstraints:\n" + "\n".join(f"- {c}" for c in a.constraints)
                                    if a.constraints else "")
    return Delegation(instruction, files=list(dict.fromkeys(files)), interactive=a.type == "aider:interactive")


def run_spec(args, settings, console: Console) -> int:
    spec = specs.load(args.spec)
    repo = find_repo((args.repo or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    if not (settings.yes or settings.yes_all) and not _confirm(spec, console):
        return 1
    state_path = args.spec.with_name(args.spec.stem + ".state.yaml")
    _carry_over(spec, state_path)
    prompts = Prompts()
    passed: set[str] = set()
    executed: set[str] = set()  # steps run in this invocation: their dependents run again too
    for step in spec.ordered():
        state = step.refinement_state = step.refinement_state or specs.RefinementState()
        digest = specs.input_hash(step, root)
        if state.status == "passed" and state.input_hash == digest and not executed & set(step.depends_on):
            console.print(f"[dim]step {safe(step.step_id)}: skipped, passed before and its inputs are unchanged[/]")
            passed.add(step.step_id)
            continue
        if not set(step.depends_on) <= passed:
            state.status, state.message = "pending", "a step it depends on did not pass"
            break
        console.print(f"\n[bold magenta]step {safe(step.step_id)}[/]: {safe(step.description)}")
        executed.add(step.step_id)
        pref = step.agent_spec.model_preference
        step_settings = settings.model_copy(update={
            "yes": True, "model": pref.model or settings.model,
            "temperature": pref.temperature if pref.temperature is not None else settings.temperature,
            "max_tokens": pref.max_tokens or settings.max_tokens})
        if args.check_understanding:
            executor, planner = _models(step_settings)
            understand(spec, step, executor, planner, prompts, state, console)
        own = [p.resolve().relative_to(root).as_posix() for p in (args.spec, state_path)
               if p.resolve().is_relative_to(root)]  # a step that changes the spec or its state is held back
        code, summary = run_goal(RunRequest(_task_text(prompts, spec, step), step_settings, args.repo,
                                            criteria=step.agent_spec.validation_criteria, steering=own,
                                            delegate=_delegation(step, root)))
        state.attempts += 1
        ok = summary["status"] == "finished" and (summary["applied"] or not summary["changed_files"])
        said = summary["apply_note"] if summary["status"] == "finished" and not ok else summary["message"]
        state.run_id, state.message = summary["run_id"], said[:500]
        state.status = "passed" if ok else ("flagged" if summary["status"] == "flagged" else "failed")
        state.input_hash = None
        if not ok:
            specs.dump(spec, state_path)
            console.print(f"[red]step {safe(step.step_id)} {state.status}: {safe(state.message)}[/]")
            break
        passed.add(step.step_id)
        # Inputs changed by the spec's own later steps are not a reason to redo earlier ones: refresh
        # every passed step's hash, so only changes made outside the spec trigger a re-run.
        for other in spec.plan:
            if other.step_id in passed and other.refinement_state:
                other.refinement_state.input_hash = specs.input_hash(other, root)
        specs.dump(spec, state_path)
    specs.dump(spec, state_path)
    done = len(passed) == len(spec.plan)
    console.print(f"\n{safe(spec.task_id)}: {len(passed)}/{len(spec.plan)} steps passed. Progress: {safe(state_path)}")
    return 0 if done else 1


def main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from omni.cli.options import check_limits, settings_for

    check_limits(parser, args)
    settings, _ = settings_for(args)
    console = Console(highlight=False)
    if args.command == "plan":
        return plan_spec(args, settings, console)
    return run_spec(args, settings, console)
