"""What git inside the container may see of the user's repository: read-only, only what reading history
needs, and a config without remote URLs, credential helpers or commands."""

from __future__ import annotations

import json
from pathlib import Path

from omni.box import hostgit


# The parts of the user's git folder that git inside the container needs to read the run's history.
GIT_PARTS = ("objects", "refs", "packed-refs", "HEAD", "info", "shallow")
GIT_CONFIG_KEEP = ("core.repositoryformatversion", "core.bare", "core.filemode", "core.symlinks",
                   "core.ignorecase", "core.precomposeunicode", "core.logallrefupdates")


def sanitized_git_config(git_dir: Path) -> str:
    """The repository's config with only the keys git needs to read it: no remote URLs (which can
    hold credentials), no credential helpers, no commands."""
    listed = hostgit.text(["config", "--file", str(git_dir / "config"), "--list", "-z"], git_dir, check=False)
    sections: dict[str, list[str]] = {}
    for entry in filter(None, listed.split("\0")):
        key, _, value = entry.partition("\n")
        if key in GIT_CONFIG_KEEP or key.startswith("extensions."):
            section, _, name = key.partition(".")
            sections.setdefault(section, []).append(f"\t{name} = {json.dumps(value)}")
    return "".join(f"[{section}]\n" + "\n".join(lines) + "\n" for section, lines in sections.items())


def git_mounts(workspace: Path, git_dir: Path, run_dir: Path) -> dict[str, dict[str, str]]:
    """Read-only mounts of what git in the container needs, at the paths the worktree names: the
    objects, refs and HEAD, this worktree's own admin folder, and a config without secrets. Not the
    rest of the user's .git (FETCH_HEAD, logs, modules/ and the real config can hold remote URLs)."""
    pointer = workspace / ".git"
    mounts = {str(pointer): {"bind": "/workspace/.git", "mode": "ro"}} if pointer.is_file() else {}
    if not git_dir.is_dir():
        return mounts
    for part in GIT_PARTS:
        if (git_dir / part).exists():
            mounts[str(git_dir / part)] = {"bind": str(git_dir / part), "mode": "ro"}
    if pointer.is_file():
        admin = Path(pointer.read_text().split("gitdir:", 1)[-1].strip())
        if admin.is_dir():
            mounts[str(admin)] = {"bind": str(admin), "mode": "ro"}
    config = run_dir / "gitconfig"
    config.write_text(sanitized_git_config(git_dir))
    config.chmod(0o644)
    mounts[str(config)] = {"bind": str(git_dir / "config"), "mode": "ro"}
    return mounts
