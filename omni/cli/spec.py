"""YAML task specs: a goal decomposed into steps with dependencies, each carried out by the adaptive
loop with its own instructions, constraints, validation criteria and model preference."""

from __future__ import annotations

import glob
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omni import safefs
from omni.errors import UsageError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelPreference(Strict):
    model: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)


AIDER_TYPES = ("aider", "aider:automatic", "aider:interactive")  # the step's change is Aider's (omni/delegate/)


class AgentSpec(Strict):
    type: str = Field("coder", description="coder (omni's loop), or aider / aider:automatic / aider:interactive")
    input_artifacts: list[str] = Field(default_factory=list, description="repo paths or globs the step reads")
    output_artifacts: list[str] = Field(default_factory=list, description="repo paths the step produces")
    instructions: str
    constraints: list[str] = Field(default_factory=list)
    validation_criteria: list[str] = Field(default_factory=list,
                                           description="'run: <command>' runs in the sandbox; others are judged")
    model_preference: ModelPreference = Field(default_factory=ModelPreference)


class Understanding(Strict):
    summary: str
    verdict: str
    feedback: str = ""


class RefinementState(Strict):
    status: Literal["pending", "passed", "failed", "flagged"] = "pending"
    attempts: int = 0
    input_hash: str | None = None
    run_id: str | None = None
    message: str = ""
    understanding: list[Understanding] = Field(default_factory=list)


class SpecStep(Strict):
    step_id: str = Field(min_length=1)
    description: str
    depends_on: list[str] = Field(default_factory=list)
    agent_spec: AgentSpec
    refinement_state: RefinementState | None = None


class TaskSpec(Strict):
    task_id: str = Field(min_length=1)
    natural_language_goal: str = Field(min_length=1)
    overall_context: str = ""
    plan: list[SpecStep] = Field(min_length=1)

    def ordered(self) -> list[SpecStep]:
        """Steps in dependency order (file order among steps that are ready together). check() has
        already refused cycles and unknown dependencies."""
        done: list[str] = []
        order: list[SpecStep] = []
        pending = list(self.plan)
        while pending:
            ready = [s for s in pending if all(d in done for d in s.depends_on)]
            for step in ready:
                done.append(step.step_id)
                pending.remove(step)
            order += ready
        return order


def _where(spec_data: dict, loc: tuple) -> str:
    """'step build_parser, field agent_spec.instructions' from a pydantic error location."""
    if len(loc) >= 2 and loc[0] == "plan" and isinstance(loc[1], int):
        steps = spec_data.get("plan") or []
        step = steps[loc[1]] if loc[1] < len(steps) and isinstance(steps[loc[1]], dict) else {}
        name = step.get("step_id", f"#{loc[1] + 1}")
        rest = ".".join(map(str, loc[2:]))
        return f"step {name}" + (f", field {rest}" if rest else "")
    return f"field {'.'.join(map(str, loc))}"


def check(spec: TaskSpec, source: str) -> TaskSpec:
    ids = [s.step_id for s in spec.plan]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UsageError(f"{source}: duplicate step_id {', '.join(dupes)}")
    for step in spec.plan:
        unknown = [d for d in step.depends_on if d not in ids]
        if unknown:
            raise UsageError(f"{source}: step {step.step_id}, field depends_on: unknown step {', '.join(unknown)}")
    # Cycle check: Kahn's algorithm over the whole graph.
    indegree = {s.step_id: len(set(s.depends_on)) for s in spec.plan}
    ready = [i for i, n in indegree.items() if n == 0]
    seen = 0
    while ready:
        current = ready.pop()
        seen += 1
        for step in spec.plan:
            if current in step.depends_on:
                indegree[step.step_id] -= 1
                if indegree[step.step_id] == 0:
                    ready.append(step.step_id)
    if seen != len(spec.plan):
        cycle = sorted(i for i, n in indegree.items() if n > 0)
        raise UsageError(f"{source}: field depends_on: the steps {', '.join(cycle)} form a cycle")
    return spec


def parse(data: Any, source: str) -> TaskSpec:
    if not isinstance(data, dict):
        raise UsageError(f"{source}: a task spec is a mapping with task_id, natural_language_goal and plan")
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(data, e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise UsageError(f"invalid task spec {source}: {problems}") from None
    return check(spec, source)


def load(path: Path) -> TaskSpec:
    """A spec (or its state copy) from a plain file: a spec step's diff could have put a link in its place."""
    try:
        data = yaml.safe_load(safefs.read_text(*safefs.split(path), limit=8 << 20))
    except safefs.LinkRefused:
        raise UsageError(f"{path} is a symbolic link or not a plain file; omni reads specs only from plain "
                         "files") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path} is not valid YAML: {exc}") from None
    return parse(data, str(path))


def dump(spec: TaskSpec, path: Path) -> None:
    """Write atomically through a fresh temporary name: never through a link a step's diff left at the path or
    beside it (task.state.yaml.tmp -> ~/.vimrc), which is replaced instead."""
    data = spec.model_dump(exclude_none=True)
    safefs.write_text(*safefs.split(path), yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


def input_hash(step: SpecStep, repo_root: Path) -> str:
    """What the step's outputs are made from: its own spec and the content of its input artifacts."""
    digest = hashlib.sha256()
    digest.update(json.dumps(step.model_dump(exclude={"refinement_state"}), sort_keys=True).encode())
    for pattern in step.agent_spec.input_artifacts:
        matches = sorted(glob.glob(str(repo_root / pattern), recursive=True))
        if not matches:
            digest.update(f"missing:{pattern}".encode())
        for match in matches:
            rel = Path(match).relative_to(repo_root)
            data = safefs.read_optional(repo_root, rel)  # a link is its own text, never what it points at
            if data is None and os.path.islink(match):
                data = b"link:" + os.readlink(match).encode()
            if data is not None:
                digest.update(rel.as_posix().encode() + b"\0" + data)
    return digest.hexdigest()[:16]
