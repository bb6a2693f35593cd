"""The worktree bind-mounted into the container: for an engine on this machine's own kernel (Linux, rootful).

The container writes the host's worktree directly, so while host code reads or writes it (git's staging, a reset,
handing files back) the container is held (`docker pause`, the cgroup freezer): a process in it cannot swap a
folder for a link under host git's feet. When omni runs as root, the worktree is handed to the sandbox's own uid
for the run and back to root at the end."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker.errors

from omni.box.gitmounts import git_mounts
from omni.box.workspace import walk_tree
from omni.resources import data_dir

PAUSE_TRIES = 5  # a freeze that fails is tried again, this many times in all


def chown_tree(root: Path, uid: int) -> None:
    """Give the worktree (not its .git pointer) to uid; only while the container is not running or is held (a
    folder swapped for a link mid-walk would lead lchown elsewhere)."""
    os.chown(root, uid, uid)
    for entry, _, _ in walk_tree(root):
        with contextlib.suppress(OSError):
            os.lchown(entry.path, uid, uid)


def paused(container, tries: int = PAUSE_TRIES) -> None:
    """Pause the container; a freeze the kernel could not finish in time (runc's "unable to freeze", seen while a
    process in it renames folders in a tight loop on a loaded machine) is tried again after a short wait. The last
    failure is raised: host code must not go on while the container runs."""
    for attempt in range(1, tries + 1):
        try:
            container.pause()
            return
        except docker.errors.APIError:
            container.reload()
            if container.status == "paused":  # it was, or the failed answer came after all
                return
            if attempt == tries:
                raise
            time.sleep(0.1 * attempt)


class MountNotSeen(Exception):
    """The container's /workspace is not the host's worktree: the engine cannot see this machine's files."""


class BoundWorktree:
    kind = "bind"
    server_flags: list[str] = []

    def __init__(self, workspace: Path, git_dir: Path, owner: tuple[int, int], run_dir: Path):
        self.workspace, self.owner = workspace, owner
        self.container = None
        self._held, self._hold_lock, self.closed = 0, threading.Lock(), False
        if os.getuid() == 0:  # root user: the copy belongs to the run's own uid while it runs
            chown_tree(workspace, owner[0])
        self.volumes = {
            str(workspace): {"bind": "/workspace", "mode": "rw"},
            str(data_dir("tools")): {"bind": "/omni/tools", "mode": "ro"},
            **git_mounts(workspace, git_dir, run_dir),
        }

    def create_args(self) -> dict:
        return {"volumes": self.volumes}

    def fill(self, container) -> None:
        self.container = container

    def started(self, channel) -> None:
        """The probe: the worktree's .git pointer, a file on the host, is a file in the container too. An engine that
        cannot see the host's folder (a VM's, a snap's) makes an empty folder in its place."""
        seen = channel.call("shell", {"command": "test -f .git && echo seen", "timeout": 10}, 20)
        if seen.output.strip() != "seen":
            raise MountNotSeen("a probe found the bind-mounted worktree empty")

    @contextmanager
    def hold(self) -> Iterator[None]:
        """No process in the container runs while host code is inside this block (nested blocks hold once)."""
        with self._hold_lock:
            if self._held == 0 and not self.closed and self.container is not None:
                paused(self.container)
            self._held += 1
        try:
            yield
        finally:
            with self._hold_lock:
                self._held -= 1
                if self._held == 0 and not self.closed and self.container is not None:
                    self.container.unpause()

    def give_back(self) -> None:
        """After host git rewrote files (/undo), hand them to the container user again."""
        if os.getuid() == 0:
            with self.hold():
                chown_tree(self.workspace, self.owner[0])

    def close(self) -> None:
        self.closed = True
        if os.getuid() == 0 and self.workspace.exists():  # give the copy back to its owner
            chown_tree(self.workspace, 0)
