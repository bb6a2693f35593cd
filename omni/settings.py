"""Layered settings: built-in defaults < user config file < <repo>/.omni/config.toml < OMNI_* environment
variables < command-line flags. Each layer is validated on its own, so an error names its source."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omni import trust
from omni.errors import UsageError


def _flag(group: str, help: str, **argparse: Any) -> dict[str, Any]:
    """Field metadata for the command line: the argument group, and argparse details (a short form, a
    --no-X switch for a default-on boolean). omni/cli/options.py makes every flag from these."""
    return {"group": group, "argparse": argparse, "description": help}


class Settings(BaseModel):
    """Everything a run can be configured with, and the only place a default is written. Keys are the long
    flags with _ for -, the keys of the config files, and OMNI_<KEY> in the environment."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, json_schema_extra=_flag("model", "model id"))
    planner_model: str | None = Field(None, json_schema_extra=_flag(
        "model", "model for planning and review (default: --model)"))
    base_url: str | None = Field(None, json_schema_extra=_flag(
        "model", "OpenAI-compatible base URL (else OPENAI_BASE_URL, OPENAI_API_BASE, OLLAMA_HOST)"))
    api_key: str | None = Field(None, json_schema_extra=_flag(
        "model", "API key (else OPENAI_API_KEY, OPENROUTER_API_KEY)"))
    local: bool = Field(False, json_schema_extra=_flag(
        "model", "use a model server on this machine: Ollama, llama.cpp, LM Studio or vLLM, the first that answers"))
    profile: Literal["auto", "default", "small"] = Field("auto", json_schema_extra=_flag(
        "model", "small: core tools, 1024-token replies, no reviewer call; auto: small for a small local model"))
    tool_mode: Literal["auto", "native", "text"] = Field("auto", json_schema_extra=_flag(
        "model", "native tool calls, a text format, or auto: probe the server once"))
    tools: Literal["full", "core"] = Field("full", json_schema_extra=_flag(
        "model", "offer every tool (full) or a core set of 8 that small models handle better"))
    stream: bool = Field(True, json_schema_extra=_flag("model", "do not stream replies", off="--no-stream"))
    request_timeout: float = Field(600.0, gt=0, json_schema_extra=_flag(
        "model", "seconds without data before a request is cut"))
    temperature: float | None = Field(0.0, ge=0, le=2, json_schema_extra=_flag(
        "model", "sampling temperature (unset in a config file: the server's default)"))
    max_tokens: int | None = Field(4096, ge=1, json_schema_extra=_flag(
        "model", "cap on tokens per reply; small local models: ~1024"))
    samples: int = Field(4, ge=1, le=16, json_schema_extra=_flag(
        "model", "candidate rewrites verified repair samples and tries against the check (1: off)"))
    mechanical: bool = Field(True, json_schema_extra=_flag(
        "model", "skip the mechanical candidates verified repair tries when sampled rewrites fail (one-token "
        "changes: an operator, an integer one off, two arguments swapped)", off="--no-mechanical"))
    infill: bool = Field(True, json_schema_extra=_flag(
        "model", "skip verified repair's infilled candidates: the model fills a suspicious line, or one "
        "expression on it, from the code around it (fill in the middle; code models whose family omni knows)",
        off="--no-infill"))
    missing_lines: bool = Field(False, json_schema_extra=_flag(
        "model", "when a definition's rewrites find no fix, verified repair asks the model once which lines are "
        "missing from it and where (off: no run showed it helps; bench/README.md, runs BV and DP)"))
    block_rewrites: bool = Field(False, json_schema_extra=_flag(
        "model", "when the failing tests point to a line, verified repair's candidates rewrite only the few lines "
        "around it, and may then repair definitions too long to rewrite whole (off: no run showed it helps; "
        "bench/README.md, runs BF and DP)"))
    block_from: int = Field(1, ge=1, json_schema_extra=_flag(
        "model", "with --block-rewrites, rewrite blocks only in definitions at least this many lines long (without "
        "their docstring); shorter ones are rewritten whole"))
    opening_repair: bool = Field(True, json_schema_extra=_flag(
        "model", "let the model take the first step even when the goal and the check point to one definition "
        "(by default omni first tries --samples rewrites of it)", off="--no-opening-repair"))
    reproduce: bool = Field(True, json_schema_extra=_flag(
        "model", "with no failing test and no example in the goal, skip the reproduction test the model writes "
        "first", off="--no-reproduce"))
    aider: bool = Field(False, json_schema_extra=_flag(
        "model", "offer the aider_edit tool: hand an edit to Aider, run in the sandbox through omni's model relay "
        "(adds Aider to the sandbox image the first time)"))
    aider_edit_format: Literal["diff", "whole", "udiff", "diff-fenced"] = Field("diff", json_schema_extra=_flag(
        "model", "the edit format Aider asks the model for: diff (SEARCH/REPLACE blocks), whole, udiff, diff-fenced"))
    aider_map_tokens: int = Field(1024, ge=0, json_schema_extra=_flag(
        "model", "tokens of Aider's repository map in each request (0: none)"))
    max_steps: int = Field(40, ge=1, json_schema_extra=_flag("limits", "tool calls before stopping"))
    max_cost: float | None = Field(None, gt=0, json_schema_extra=_flag(
        "limits", "USD before stopping (the model needs a known price: see --price)"))
    price: str | None = Field(None, json_schema_extra=_flag(
        "limits", "USD per million tokens as INPUT,OUTPUT[,CACHED], for a model whose price omni does not know"))
    timeout: float | None = Field(None, gt=0, json_schema_extra=_flag("limits", "wall-clock seconds before stopping"))
    sandbox: Literal["docker", "local"] = Field("docker", json_schema_extra=_flag(
        "sandbox", "docker, or local: no container, tools run on the host (no isolation)"))
    mount: Literal["auto", "bind", "copy"] = Field("auto", json_schema_extra=_flag(
        "sandbox", "how the worktree reaches the container: bind (a mount; an engine on this machine), copy (in "
        "and back; a remote engine, Docker Desktop, Podman), or auto: whichever the engine allows"))
    network: bool = Field(False, json_schema_extra=_flag("sandbox", "allow network in the sandbox"))
    image: str | None = Field(None, json_schema_extra=_flag("sandbox", "sandbox image"))
    base_image: str | None = Field(None, json_schema_extra=_flag(
        "sandbox", "base image if the sandbox image must be built"))
    test_command: str = Field("", json_schema_extra=_flag("sandbox", "the repo's test command, if not pytest"))
    max_workspace_mb: int = Field(1024, ge=1, json_schema_extra=_flag(
        "sandbox", "MiB the workspace may grow by before the run stops"))
    review: bool = Field(True, json_schema_extra=_flag(
        "finishing", "skip the reviewer call at finish (validation still runs)", off="--no-review"))
    finish_on_check: bool = Field(True, json_schema_extra=_flag(
        "finishing", "wait for the model to call finish even when an edit makes the run's check pass (by default "
        "the gate is asked then)", off="--no-finish-on-check"))
    max_refinements: int = Field(2, ge=0, json_schema_extra=_flag(
        "finishing", "times the gate sends work back before flagging"))
    yes: bool = Field(False, json_schema_extra=_flag(
        "interaction", "never prompt; apply the result, unless it changes instruction or config files",
        short="-y"))
    yes_all: bool = Field(False, json_schema_extra=_flag(
        "interaction", "like --yes, and also apply a result that changes AGENTS.md, .omni/ and the like"))
    verbose: bool = Field(False, json_schema_extra=_flag("interaction", "stream the model's text", short="-v"))


def user_config_path(env: Mapping[str, str] = os.environ) -> Path:
    if env.get("OMNI_CONFIG"):
        return Path(env["OMNI_CONFIG"])
    if env.get("XDG_CONFIG_HOME") and sys.platform not in ("darwin", "win32"):
        return Path(env["XDG_CONFIG_HOME"]) / "omni" / "config.toml"
    from platformdirs import user_config_dir

    return Path(user_config_dir("omni", appauthor=False)) / "config.toml"


def _check(data: dict[str, Any], source: str) -> dict[str, Any]:
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"key '{'.'.join(map(str, e['loc']))}': {e['msg']}{_close_key(e)}" for e in exc.errors())
        raise UsageError(f"invalid configuration in {source}: {problems}") from None
    return data


def _close_key(error: dict) -> str:
    """For a key Settings does not have: the one it was most likely meant to be."""
    if error.get("type") != "extra_forbidden" or not error.get("loc"):
        return ""
    import difflib

    close = difflib.get_close_matches(str(error["loc"][0]), list(Settings.model_fields), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _file_layer(path: Path) -> dict[str, Any]:
    """The user's own config file (a link to it, say from a dotfiles folder, is the user's choice)."""
    if not path.is_file():
        return {}
    try:
        return _toml_layer(path.read_bytes(), path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _toml_layer(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"invalid configuration in {path}: {exc}") from None
    return _check({k.replace("-", "_"): v for k, v in data.items()}, str(path))


def repo_layer(root: Path) -> tuple[bytes | None, dict[str, Any]]:
    """A repository's .omni/config.toml as (its bytes, its settings): read without following a link, since
    anyone who can commit, or an earlier run's model, may have written it (omni/trust.py)."""
    raw = trust.config_bytes(root)
    return raw, _toml_layer(raw, root / trust.CONFIG) if raw is not None else {}


ENV_NAMES = {"image": "OMNI_SANDBOX_IMAGE"}  # clearer than OMNI_IMAGE for the sandbox image


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    data = {}
    for key in Settings.model_fields:
        name = ENV_NAMES.get(key, f"OMNI_{key.upper()}")
        if env.get(name) not in (None, ""):
            value: Any = env[name]
            if Settings.model_fields[key].annotation is bool:
                value = value.strip().lower() in ("1", "true", "yes", "on")
            data[key] = value
    for key, value in data.items():
        _check({key: value}, f"environment variable {ENV_NAMES.get(key, f'OMNI_{key.upper()}')}")
    return data


def load(flags: dict[str, Any], repo_root: Path | None, env: Mapping[str, str] = os.environ,
         check_trust: bool = True) -> tuple[Settings, dict[str, str]]:
    """The effective settings and, for each key, where its value came from. A repository's config file
    that weakens isolation is refused unless trusted (omni/trust.py); with check_trust=False its
    weakening keys are left out and their source says why (for `omni config`)."""
    layers: list[tuple[str, dict[str, Any]]] = [("user config " + str(user_config_path(env)),
                                                 _file_layer(user_config_path(env)))]
    untrusted: dict[str, Any] = {}
    if repo_root is not None:
        raw, data = repo_layer(repo_root)
        if check_trust and raw is not None:
            trust.check_project_layer(repo_root, raw, data)
        elif raw is not None and data and not trust.is_trusted(repo_root, raw):
            untrusted = trust.weakening(data)
            data = {k: v for k, v in data.items() if k not in untrusted}
        layers.append(("repo config " + str(repo_root / trust.CONFIG), data))
    layers.append(("environment", _env_layer(env)))
    layers.append(("flag", _check({k: v for k, v in flags.items() if v is not None}, "the command line")))
    merged: dict[str, Any] = {}
    sources = {key: "default" for key in Settings.model_fields}
    for name, data in layers:
        for key, value in data.items():
            merged[key] = value
            sources[key] = name
    for key, value in untrusted.items():
        sources[key] += f"; the repo config's {key} = {value!r} is refused: not trusted (`omni trust`)"
    return Settings.model_validate(merged), sources
