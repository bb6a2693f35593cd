"""A batch's task list: YAML (a list of tasks, or {settings: {...}, tasks: [...]}) or JSONL (one task a line).

A task: a repository (a local path or a git URL) and a ref, the goal (or a goal file), an id (made from the
repository's name when missing), and omni settings of its own (`settings: {model: ..., max_steps: 20}`), over
the file's settings for every task. Everything wrong with the file is said at once, with the entry it is in, before
anything runs (exit 2)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omni.errors import UsageError
from omni.settings import Settings

# What a batch decides for every task itself: each runs with --yes on a fresh clone, never on the source.
BATCH_OWNED = {"yes", "yes_all"}
SAFE_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class BatchTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = ""
    repo: str = Field(description="a local path (relative to the task file) or a git URL")
    ref: str = Field("HEAD", description="branch, tag or commit to start from")
    goal: str = ""
    goal_file: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)


def _is_url(repo: str) -> bool:
    """A git URL: scheme://..., or scp-like user@host:path."""
    head = repo.split(":", 1)[0]
    return "://" in repo or (":" in repo and "@" in head and "/" not in head)


def safe_id(text: str) -> str:
    """A name for a task's folder: letters, digits, . _ -, the rest made a dash."""
    return "".join(c if c in SAFE_ID_CHARS else "-" for c in text).strip("-.")


def _entries(path: Path) -> tuple[dict[str, Any], list[Any]]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"cannot read the task file {path}: {exc.strerror}") from None
    if path.suffix == ".jsonl":
        entries = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{path}:{n}: not JSON: {exc.msg}") from None
        return {}, entries
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None
    if isinstance(data, dict) and "tasks" in data:
        return data.get("settings") or {}, data["tasks"] or []
    if isinstance(data, list):
        return {}, data
    raise UsageError(f"{path}: a task file is a list of tasks, or a mapping with tasks (and settings)")


def check_settings(where: str, given: Any) -> list[str]:
    if not isinstance(given, dict):
        return [f"{where}: settings is a mapping of omni settings (model, max_steps, test_command, ...)"]
    problems = []
    for key, value in given.items():
        if key in BATCH_OWNED:
            problems.append(f"{where}: {key} is the batch's to decide (every task runs with --yes on a clone)")
        elif key not in Settings.model_fields:
            close = difflib.get_close_matches(key, list(Settings.model_fields), n=1)
            problems.append(f"{where}: unknown setting {key!r}" + (f"; did you mean {close[0]!r}?" if close else ""))
        else:
            try:
                Settings.model_validate({key: value})
            except ValidationError as exc:
                problems.append(f"{where}: setting {key}: {exc.errors()[0]['msg']}")
    return problems


def load_tasks(path: Path) -> list[BatchTask]:
    """The file's tasks, their settings merged over the file's, goal files read, local paths made absolute."""
    common, entries = _entries(path)
    problems = check_settings(f"{path}: settings", common)
    tasks: list[BatchTask] = []
    for n, entry in enumerate(entries, 1):
        where = f"{path}: task {n}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: a task is a mapping with repo and goal")
            continue
        try:
            task = BatchTask.model_validate(entry)
        except ValidationError as exc:
            problems += [f"{where}: {'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in exc.errors()]
            continue
        problems += check_settings(where, task.settings)
        if bool(task.goal.strip()) == bool(task.goal_file):
            problems.append(f"{where}: give goal or goal_file (one of them)")
            continue
        if task.goal_file:
            goal_path = (path.parent / task.goal_file).resolve()
            try:
                task.goal = goal_path.read_text().strip()
            except OSError as exc:
                problems.append(f"{where}: cannot read goal_file {goal_path}: {exc.strerror}")
                continue
        if not _is_url(task.repo):
            task.repo = str((path.parent / task.repo).resolve())
        task.settings = {**common, **task.settings} if isinstance(common, dict) else task.settings
        task.id = safe_id(task.id or f"{Path(task.repo.rstrip('/')).stem}-{n}") or f"task-{n}"
        tasks.append(task)
    seen: dict[str, int] = {}
    for task in tasks:
        seen[task.id] = seen.get(task.id, 0) + 1
    problems += [f"{path}: the id {name!r} is given to {count} tasks" for name, count in seen.items() if count > 1]
    if problems:
        raise UsageError("the task file has problems:\n  " + "\n  ".join(problems))
    if not tasks:
        raise UsageError(f"{path} has no tasks")
    return tasks
