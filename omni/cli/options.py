"""The run options of the command line, made from the Settings model: one flag per setting, with its
group, help and default taken from the field. Unset flags stay None, so they do not override the
config files and OMNI_* variables."""

from __future__ import annotations

import argparse
import json
import types
import typing
from pathlib import Path
from typing import Any

from omni.settings import Settings

SETTING_FLAGS = tuple(Settings.model_fields)
GROUPS = ("model", "limits", "sandbox", "finishing", "interaction")


def _parts(annotation: Any) -> tuple[type | None, tuple[str, ...] | None]:
    """(the value type, the choices of a Literal) of a field's annotation, without None."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        return str, tuple(typing.get_args(annotation))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _parts(args[0])
    return annotation, None


def _help(text: str, default: Any) -> str:
    if default is None or default == "" or isinstance(default, bool):
        return text
    return f"{text} (default: {json.dumps(default)})"


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by a run, `omni plan` and `omni run`."""
    parser.add_argument("--repo", type=Path, default=None, help="the git repository (default: the current one)")
    groups = {name: parser.add_argument_group(name) for name in GROUPS}
    for key, field in Settings.model_fields.items():
        extra = field.json_schema_extra or {}
        group, more = groups[extra["group"]], dict(extra.get("argparse", {}))
        flag = "--" + key.replace("_", "-")
        names = [flag, *([more.pop("short")] if "short" in more else [])]
        kind, choices = _parts(field.annotation)
        if "off" in more:  # a default-on switch: only its --no- form is a flag
            group.add_argument(more.pop("off"), dest=key, action="store_false", default=None, help=extra["description"])
        elif kind is bool:
            group.add_argument(*names, dest=key, action="store_true", default=None, help=extra["description"])
        else:
            group.add_argument(*names, dest=key, type=kind, choices=choices, default=None,
                               help=_help(extra["description"], field.default))
    groups["interaction"].add_argument("--json", action="store_true",
                                       help="JSONL events on stdout; human output on stderr")


def add_goal_options(parser: argparse.ArgumentParser, version: str) -> None:
    """The flags of `omni "<goal>"` itself, beside the settings: the version, where the goal comes from, and
    which earlier run it continues. The run's parser and the completion parser both take them from here."""
    parser.add_argument("-V", "--version", action="version", version=version)
    parser.add_argument("--goal-file", type=Path, help="read the goal from a file")
    parser.add_argument("--last", action="store_true", help="continue the last run: its goal, steps, outcome and "
                        "diff open this run's context")
    parser.add_argument("--resume", metavar="RUN", default=None, help="continue the given run (an id, a prefix, last)")


def check_limits(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Numbers out of range get argparse's own one-line error (exit 2), before anything is read."""
    for key, field in Settings.model_fields.items():
        value = getattr(args, key, None)
        if value is None or isinstance(value, (bool, str)):
            continue
        for rule in field.metadata:
            floor = getattr(rule, "ge", None)
            above = getattr(rule, "gt", None)
            flag = "--" + key.replace("_", "-")
            if floor is not None and value < floor:
                parser.error(f"{flag} must be at least {floor}")
            if above is not None and value <= above:
                parser.error(f"{flag} must be {'positive' if above == 0 else f'above {above}'}")
            ceiling = getattr(rule, "le", None)
            if ceiling is not None and value > ceiling:
                parser.error(f"{flag} must be at most {ceiling}")


def settings_for(args: argparse.Namespace):
    """The run's settings: the layers merged, then the endpoint and model settled (a local server found, the one
    model it serves) and the profile chosen (omni/model/local.py)."""
    from omni import settings
    from omni.box.workspace import find_repo
    from omni.model.local import settle

    repo = find_repo((args.repo or Path.cwd()).resolve())
    merged, sources = settings.load({k: getattr(args, k, None) for k in SETTING_FLAGS}, Path(repo.working_tree_dir))
    return settle(merged, sources), sources
