"""Where tools run: DockerSandbox, a hardened container over the run's worktree, with a tool server inside
reached through the channel in omni/box/channel.py. (LocalSandbox, the opt-in without a container, is in
omni/box/local.py.)

The worktree reaches the container one of two ways (omni/box/engine.py chooses): bind-mounted, with the container
held while host code touches it (omni/box/bound.py), or copied in and back for an engine that does not share this
machine's files (omni/box/copied.py). Everything else is the same on both."""

from __future__ import annotations

import grp
import json
import os
import pwd
import socket
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from omni.box import images
from omni.box.bound import BoundWorktree, MountNotSeen
from omni.box.channel import DockerStream, OverChannel, RunDir, ToolStream, pid_alive, server_env
from omni.box.copied import CopiedWorktree
from omni.box.engine import MountChoice, choose_mount, docker_client, is_podman
from omni.box.toolbox import server_table
from omni.errors import SandboxError
from omni.settings import Settings

LABEL = "org.omni.run"
TOOLS_PYTHON = "/opt/omni-tools/bin/python"  # the tool runtime's own Python in the image
# When omni runs as root, the container runs as a uid that no account on this host has, so no other
# local user shares it (a shared uid could read the server's environment or enter its folder).
SANDBOX_UIDS = range(61000, 62000)
# Open files in a Podman sandbox: Podman's own defaults (for processes too) are more than a container without
# capabilities may be given, so both are set; processes to the pids limit.
PODMAN_NOFILE = 4096
class SandboxConfig(BaseModel):
    """How the sandbox container is made."""

    image: str = Field(images.SANDBOX_TAG, description="sandbox image tag; built on first use if missing")
    base_image: str = Field("python:3.11-slim-bookworm", description="base for building the sandbox image")
    network: bool = Field(Settings.model_fields["network"].default, description="allow network during the run")
    memory: str = Field("2g", description="memory limit (no swap beyond it)")
    cpus: float = Field(2.0, description="CPU limit")
    pids: int = Field(512, description="process limit (stops fork bombs)")
    tmp_size: str = Field("1g", description="size of the /tmp tmpfs")
    ca_bundle: str | None = Field(None, description="CA bundle for image builds behind a TLS proxy")
    project_env: bool = Field(True, description="install the repo's dependencies in a cached layer")
    workspace_limit_mb: int | None = Field(None, description="MiB the workspace may grow by (no file larger)")
    mount: str = Field("auto", description="how the worktree reaches the container: bind, copy, or auto")
    aider: bool = Field(False, description="the image with Aider's layer (built on first use if missing)")


def remove_stale(client) -> list[str]:
    """Remove sandboxes left by omni processes of this machine that no longer run (a crash, a kill -9). Another
    machine's are left alone (an engine may be shared: a remote one), and so is one that another omni removes
    meanwhile (runs at once, `omni batch`): the list is read once, without a lookup per container."""
    import docker

    removed = []
    for found in client.api.containers(all=True, filters={"label": LABEL}):
        labels = found.get("Labels") or {}
        pid = int(labels.get("org.omni.pid", "0") or 0)
        if labels.get("org.omni.host", "") != socket.gethostname() or (pid > 0 and pid_alive(pid)):
            continue
        try:
            client.api.remove_container(found["Id"], force=True, v=True)  # with its volumes (a copied workspace's)
        except docker.errors.APIError as exc:  # gone (404), or another omni's removal of it under way (409)
            if exc.status_code in (404, 409):
                continue
            raise
        removed.append((found.get("Names") or [found["Id"][:12]])[0].lstrip("/"))
    return removed


def unused_uid() -> int:
    """A uid (equal to its gid) that no account or group on this host has."""
    for uid in SANDBOX_UIDS:
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            return uid
    raise SandboxError(f"no free uid in {SANDBOX_UIDS.start}-{SANDBOX_UIDS.stop - 1} for the sandbox user")


def ensure_image(client, config: SandboxConfig, emit: Callable[..., None]) -> str:
    """The sandbox image, built if missing. Its base comes from the registry; where none is reachable,
    from Debian packages (debootstrap), made here. Where that cannot be done either (no debootstrap, not
    root), a UsageError says which command installs what is missing: called before a run writes anything. With
    config.aider, the image with Aider's layer on top (built too if missing)."""
    image = config.image
    if not images.exists(client, image):
        emit("image_build", tag=image, line=f"the sandbox image {image} is missing; building it")
        base = config.base_image
        if not images.exists(client, base) and (base == images.OFFLINE_BASE or not images.pull(client, base, emit)):
            images.check_offline_base_possible(base)
            base = images.build_offline_base(emit)
        images.build_sandbox_image(client, base, image, config.ca_bundle, emit)
    if not config.aider:
        return image
    tag = images.aider_tag(image)
    return tag if images.exists(client, tag) else images.build_aider_image(client, image, emit)


def _environment(image: str) -> dict[str, str]:
    """The container's environment: no host variables, the project's Python first when it has one."""
    project = image.startswith("omni-project:")
    return {
        "HOME": "/tmp",
        "PATH": "/opt/project/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "OMNI_PROJECT_PYTHON": "/opt/project/bin/python" if project else "/opt/omni-tools/bin/python",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*",
        "PIP_NO_INPUT": "1",
    }


class DockerSandbox(OverChannel):
    """One hardened container per run, over the run's worktree."""

    kind = "docker"

    def __init__(self, run_id: str, workspace: Path, git_dir: Path, config: SandboxConfig,
                 emit: Callable[..., None] = lambda *a, **k: None, test_command: str = "", base_rev: str = "HEAD",
                 client=None):
        self.client = client or docker_client()
        for name in remove_stale(self.client):
            emit("sandbox", line=f"removed stale sandbox {name}")
        image = ensure_image(self.client, config, emit)
        self.install_note = ""
        if config.project_env:
            image = self._project_image(workspace, image, emit)
        self.workspace = workspace
        self.mount: MountChoice = choose_mount(self.client, config.mount)
        self.owner = self._container_user()
        self.run_dir = RunDir()
        self.closed = False
        try:
            self._start(run_id, image, config, git_dir, test_command, base_rev)
        except MountNotSeen as exc:  # the engine said it is local, but the mount is empty: copy instead
            self._discard()
            self.mount = MountChoice("copy", f"the engine does not see this machine's files ({exc})")
            self._start(run_id, image, config, git_dir, test_command, base_rev)
        if image.startswith("omni-project:"):
            self._check_install(emit)

    def _start(self, run_id: str, image: str, config: SandboxConfig, git_dir: Path, test_command: str,
               base_rev: str) -> None:
        self.files = BoundWorktree(self.workspace, git_dir, self.owner, self.run_dir.path) \
            if self.mount.kind == "bind" else CopiedWorktree(self.workspace, git_dir, self.owner)
        limit = config.workspace_limit_mb * 2**20 if config.workspace_limit_mb else None
        try:
            self.container = self._create(run_id, image, config, _environment(image), limit)
            self.files.fill(self.container)
            self.container.start()
            self.channel = ToolStream(DockerStream(self.client, self.container, [
                TOOLS_PYTHON, "/omni/tools/server.py", "--stdio", "--contained", *self.files.server_flags,
                "--root", "/workspace", "--tools", json.dumps(server_table())], self.owner,
                server_env(test_command, base_rev, limit)))
            self.channel.wait_ready()
            self.files.started(self.channel)
        except MountNotSeen:
            raise
        except Exception as exc:
            logs = self._logs()
            self.close()
            raise SandboxError(f"could not start the sandbox: {exc}{logs}") from exc

    def _create(self, run_id: str, image: str, config: SandboxConfig, environment: dict, limit: int | None):
        """The container, hardened: not root, no capabilities, read-only root, limits, no network."""
        from docker.types import Ulimit

        ulimits = [Ulimit(name="fsize", soft=limit, hard=limit)] if limit else []
        if is_podman(self.client):
            ulimits += [Ulimit(name="nofile", soft=PODMAN_NOFILE, hard=PODMAN_NOFILE),
                        Ulimit(name="nproc", soft=config.pids, hard=config.pids)]
        return self.client.containers.create(
            image, [TOOLS_PYTHON, "/omni/tools/server.py", "--idle"],
            name=f"omni-{run_id}", user=f"{self.owner[0]}:{self.owner[1]}", working_dir="/workspace",
            environment=environment, **self.files.create_args(),
            labels={LABEL: run_id, "org.omni.pid": str(os.getpid()), "org.omni.host": socket.gethostname()},
            read_only=True, tmpfs={"/tmp": f"rw,nosuid,nodev,size={config.tmp_size},mode=1777"},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=config.pids,
            ulimits=ulimits or None,
            mem_limit=config.memory, memswap_limit=config.memory, nano_cpus=int(config.cpus * 1e9),
            network_mode="bridge" if config.network else "none", stdin_open=False, tty=False)

    def _check_install(self, emit) -> None:
        status = self.run_tool("shell", {"command": "cat /etc/omni/install.status; tail -15 /etc/omni/install.log",
                                         "timeout": 30}, 40)
        if not status.output.startswith("ok"):
            # The model is told where the log is, never given its contents: what a failed install printed is
            # not omni's to paste into a prompt (a requirement line could be anything the repository holds).
            self.install_note = ("Installing the project's dependencies failed; tests may not import. The "
                                 "install log is /etc/omni/install.log in the sandbox.")
            emit("env_setup", line="installing the project's dependencies failed; the log's end:\n"
                 + status.output[-1500:], failed=True)

    def _project_image(self, workspace: Path, image: str, emit) -> str:
        try:
            tag, _ = images.project_image(self.client, workspace, image, emit)
            return tag
        except SandboxError as exc:
            emit("env_setup", line=f"project environment setup failed: {exc} (every build line is in the run's "
                 "record: omni show)", failed=True)
            return image

    def _container_user(self) -> tuple[int, int]:
        """omni's own user; when omni runs as root, a uid of the run's own (the bound worktree is handed to it)."""
        if os.getuid() != 0:
            return os.getuid(), os.getgid()  # files the agent creates belong to the user
        uid = unused_uid()
        return uid, uid

    def hold(self):
        """A block in which host code reads or writes the worktree (bound: the container is paused; copied: the
        container's changes come back first)."""
        return self.files.hold()

    def give_back(self) -> None:
        """After host git rewrote files (/undo, a carried run): the container's again."""
        self.files.give_back()

    def _logs(self) -> str:
        try:
            return "\n" + self.container.logs(tail=20).decode(errors="replace")
        except Exception:  # noqa: BLE001 - no container, or the engine is gone: nothing more to say
            return ""

    def attach_tool(self, script: str, args: list[str]) -> int:
        """A tools/ script in the container on this terminal, as the sandbox user, until it exits; its exit code."""
        from omni.box.terminal import attach

        return attach(self.client, self.container.id, [TOOLS_PYTHON, f"/omni/tools/{script}", *args], self.owner,
                      {"OMNI_TERM": os.environ.get("TERM", "xterm")})

    def _discard(self) -> None:
        """The container and its channel, gone (the worktree's files stay as they are)."""
        if getattr(self, "channel", None) is not None:
            self.channel.close()
        self.files.closed = True
        try:
            self.container.remove(force=True, v=True)
        except Exception:  # noqa: BLE001 - already gone, or never made
            pass
        self.files.close()

    def close(self) -> None:
        self.closed = True
        self._discard()
        self.run_dir.remove()
