"""What a repository may decide for the user, and what it may not without the user's say-so.

A repository's `.omni/config.toml` is content anyone with commit access (or an earlier run of the
model) could have written. Settings in it that weaken isolation, or that send code and keys
elsewhere, are honoured only after the user has trusted that file's exact content on this machine
(`omni trust`), as direnv does for `.envrc`. The content hashes live in the user's data directory.

Files that steer later runs or tools (agent instructions, omni's config, what the next sandbox installs, what
git ignores) are called out when a run's diff touches them, and so are symbolic links that point out of the
repository; `--yes` alone does not apply such a diff.

Trust is keyed by the repository and the file's content: the file is read without following a link, so a
hostile repository's `.omni/config.toml -> ~/trusted/.omni/config.toml` borrows nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from omni import safefs
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
# Files whose change steers later agent runs or the user's tools: called out, and held back under --yes. By name
# (any folder): agent instructions; what git ignores or runs; what the next sandbox image installs (its
# requirements are read from these); task spec state. By folder: editor, CI and hook configs that run commands,
# and a requirements/ folder (the next sandbox installs from it too: omni/box/requirements.py).
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", ".envrc", ".gitattributes", ".gitmodules",
                     ".gitignore", "pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py",
                     ".pre-commit-config.yaml")
STEERING_PATTERNS = ("requirements*.txt", "*-requirements.txt", "*_requirements.txt", "*.state.yaml")
STEERING_FOLDERS = (".omni", ".github", ".vscode", ".devcontainer", ".husky", "requirements")
OMNI_DIR = ".omni"
CONFIG = ".omni/config.toml"


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


def config_bytes(root: Path) -> bytes | None:
    """The repository's .omni/config.toml, read without following a link; None when there is none. A link on
    the way is a UsageError: a config that is a link is never read, trusted or not."""
    try:
        return safefs.read_bytes(root, CONFIG, limit=1 << 20)
    except FileNotFoundError:
        return None
    except safefs.LinkRefused:
        raise UsageError(f"{root / CONFIG} is a symbolic link (or reached through one); omni reads a project's "
                         "config only from a plain file in the repository") from None


def _key(root: Path) -> str:
    """The repository the file belongs to (its folder as the user runs omni there), not where a link points."""
    return str(root.resolve() / CONFIG)


def is_trusted(root: Path, data: bytes) -> bool:
    return _load().get(_key(root)) == hashlib.sha256(data).hexdigest()


def trust(root: Path, data: bytes | None) -> str:
    """Record the repository's config (data: its bytes, as shown to the user) as trusted; return its hash."""
    if data is None:
        raise UsageError(f"{root / CONFIG} does not exist; there is nothing to trust")
    entries = _load()
    entries[_key(root)] = value = hashlib.sha256(data).hexdigest()
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


def check_project_layer(root: Path, raw: bytes, data: dict[str, Any]) -> None:
    found = weakening(data)
    if found and not is_trusted(root, raw):
        raise UsageError(refusal(root / CONFIG, found))


def steering_files(paths: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """The paths among these that steer later runs or tools (extra: more paths that do, a spec run's own spec)."""
    found, more = [], set(extra)
    for name in paths:
        parts = PurePosixPath(name).parts
        if parts and (parts[0] in STEERING_FOLDERS or parts[-1] in INSTRUCTION_NAMES or name in more
                      or any(fnmatch.fnmatchcase(parts[-1], p) for p in STEERING_PATTERNS)):
            found.append(name)
    return found


def links_out(links: Iterable[tuple[str, str]]) -> list[str]:
    """'path -> target' of the symbolic links (path, target) whose target is absolute or leaves the repository:
    applied, they would let whatever follows them (a later run, the user's tools) reach outside it."""
    found = []
    for path, target in links:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if posixpath.isabs(target) or joined == ".." or joined.startswith("../"):
            found.append(f"{path} -> {target}")
    return found
