"""git on the host, hardened against what the sandbox wrote.

The run's worktree is written by the model. Host git must not run anything it finds there: no hooks,
no fsmonitor, no external diff or textconv, no pager, no ssh command, no file-protocol submodules,
and no GIT_* variable from omni's own environment steering it elsewhere. `-c` settings given on
the command line win over every config file and reach git's own child processes too (git passes
them on in GIT_CONFIG_PARAMETERS), so a nested repository's config cannot switch them back on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

# Each pair is one `-c` override. core.hooksPath points into /dev/null, a path no one can create a
# hook under; the others turn off every setting that names a command to run.
OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "diff.external=",
    "diff.renames=false",  # a rename is shown as a deletion and an addition: both names are seen and checked
    "protocol.file.allow=never",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
SAFE_FLAGS = [part for pair in OVERRIDES for part in ("-c", pair)]


class GitError(RuntimeError):
    """A host git command failed; the message has git's own words."""


def clean_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """omni's environment without any GIT_* variable (a GIT_DIR, GIT_CONFIG_* or GIT_EXTERNAL_DIFF
    inherited from the caller would change what git reads or runs), and never a prompt."""
    env = dict(os.environ if env is None else env)
    for key in list(env):
        if key.startswith("GIT_"):
            env.pop(key)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


def run(args: list[str], cwd: Path, input: bytes | None = None, check: bool = True,
        extra: list[str] | None = None) -> subprocess.CompletedProcess:
    """git with the safe overrides (plus `extra` -c flags), bytes in and out."""
    feed = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
    done = subprocess.run(["git", *SAFE_FLAGS, *(extra or []), *args], cwd=cwd, capture_output=True,
                          check=False, env=clean_env(), **feed)
    if check and done.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done


def text(args: list[str], cwd: Path, **kw) -> str:
    return run(args, cwd, **kw).stdout.decode("utf-8", "replace")
