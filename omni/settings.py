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


class Settings(BaseModel):
    """Everything a run can be configured with. Keys match the long flags (with _ for -)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="model id")
    planner_model: str | None = Field(None, description="model for planning and review (default: model)")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL")
    api_key: str | None = Field(None, description="API key")
    tool_mode: Literal["auto", "native", "text"] = "auto"
    tools: Literal["full", "core"] = Field("full", description="the tools offered: all, or a small set for small models")
    stream: bool = True
    request_timeout: float = Field(600.0, gt=0)
    temperature: float | None = Field(0.0, ge=0, le=2, description="sampling temperature (None: server default)")
    max_tokens: int | None = Field(4096, ge=1, description="cap on tokens per reply")
    max_steps: int = Field(40, ge=1)
    max_cost: float | None = Field(None, gt=0)
    timeout: float | None = Field(None, gt=0)
    sandbox: Literal["docker", "local"] = "docker"
    network: bool = False
    image: str | None = None
    base_image: str | None = None
    test_command: str = ""
    review: bool = Field(True, description="ask the planner model to review the diff at finish")
    max_refinements: int = Field(2, ge=0, description="times the gate sends work back before flagging")
    max_workspace_mb: int = Field(1024, ge=1, description="MiB the workspace may grow by before the run stops")
    yes: bool = Field(False, description="never prompt; apply the result (not a diff that changes instruction files)")
    yes_all: bool = Field(False, description="like yes, and apply a diff that changes instruction or config files")
    verbose: bool = False


def user_config_path(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    else:
        base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return Path(env.get("OMNI_CONFIG", base / "omni" / "config.toml"))


def _check(data: dict[str, Any], source: str) -> dict[str, Any]:
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"key '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid configuration in {source}: {problems}") from None
    return data


def _file_layer(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid configuration in {path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    return _check({k.replace("-", "_"): v for k, v in data.items()}, str(path))


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
        repo_file = repo_root / ".omni" / "config.toml"
        data = _file_layer(repo_file)
        if check_trust:
            trust.check_project_layer(repo_file, data)
        elif data and not trust.is_trusted(repo_file):
            untrusted = trust.weakening(data)
            data = {k: v for k, v in data.items() if k not in untrusted}
        layers.append(("repo config " + str(repo_file), data))
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
