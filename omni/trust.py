"""What a repository may decide for the user, and what it may not without the user's say-so.

A repository's `.omni/config.toml` is content anyone with commit access (or an earlier run of the
model) could have written. Settings in it that weaken isolation, or that send code and keys
elsewhere, are honoured only after the user has trusted that file's exact content on this machine
(`omni trust`), as direnv does for `.envrc`. The content hashes live in the user's data directory.

Files that steer later runs or tools (agent instructions, omni's config) are called out when a run's
diff touches them, and `--yes` alone does not apply such a diff.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from omni.errors import UsageError

# Settings a project file may not set to these values (or, with None, to any value) until trusted.
WEAKENING: dict[str, Any] = {
    "sandbox": "local",   # tools on the host, no container
    "network": True,      # the sandbox reaches the network
    "image": None,        # any image is any code
    "base_image": None,
    "base_url": None,     # where the code and the API key are sent
    "api_key": None,
    "planner_model": None,
    "yes": True,          # apply without asking
    "yes_all": True,
}
# Files whose change steers later agent runs or the user's tools: called out, and held back under --yes.
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", ".envrc", ".gitattributes", ".gitmodules")
OMNI_DIR = ".omni"


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("OMNI_DATA_DIR") or user_data_dir("omni", appauthor=False))


def _store() -> Path:
    return data_dir() / "trusted-configs.json"


def _load() -> dict[str, str]:
    try:
        data = json.loads(_store().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_trusted(path: Path) -> bool:
    return _load().get(str(path.resolve())) == digest(path)


def trust(path: Path) -> str:
    """Record the file's current content as trusted; return its hash."""
    entries = _load()
    entries[str(path.resolve())] = value = digest(path)
    store = _store()
    store.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = store.with_suffix(".tmp")
    tmp.write_text(json.dumps(entries, indent=2, sort_keys=True))
    os.replace(tmp, store)
    return value


def weakening(data: dict[str, Any]) -> dict[str, Any]:
    """The settings in a project file that weaken isolation or redirect the model."""
    return {key: value for key, value in data.items()
            if key in WEAKENING and (WEAKENING[key] is None or value == WEAKENING[key])}


def refusal(path: Path, found: dict[str, Any]) -> str:
    named = ", ".join(f"{k} = {json.dumps(v)}" for k, v in found.items())
    return (f"{path} sets {named}, which this machine has not trusted; review the file, then run "
            f"`omni trust` in the repository to allow it")


def check_project_layer(path: Path, data: dict[str, Any]) -> None:
    found = weakening(data)
    if found and not is_trusted(path):
        raise UsageError(refusal(path, found))


def steering_files(paths: Iterable[str]) -> list[str]:
    """The paths among these that steer later runs or tools."""
    found = []
    for name in paths:
        parts = PurePosixPath(name).parts
        if parts and (parts[0] == OMNI_DIR or parts[-1] in INSTRUCTION_NAMES):
            found.append(name)
    return found
