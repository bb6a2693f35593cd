"""Where tools run. DockerSandbox: a hardened container over the run's worktree, with a tool server
inside reached through a Unix socket. LocalSandbox: the same tool server on the host (opt-in)."""

from __future__ import annotations

import grp
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from omni.box import hostgit
from omni.box import images
from omni.errors import SandboxError, UsageError
from omni.resources import data_dir
from omni.results import ToolResult

LABEL = "org.omni.run"
SOCKET = "tools.sock"
# When omni runs as root, the container runs as a uid that no account on this host has, so no other
# local user shares it (a shared uid could read the server's environment or enter its folder).
SANDBOX_UIDS = range(61000, 62000)
NO_DOCKER = (
    "No Docker engine answered ({reason}).\n"
    "omni runs every tool in a Docker container. Install Docker (https://docs.docker.com/engine/install/,\n"
    "or `apt-get install docker.io` on Debian/Ubuntu) and start it (`sudo systemctl start docker`, or\n"
    "`sudo dockerd &`), then check with `docker info`.\n"
    "To run without a container, on an isolated copy of the repo, pass --sandbox local (no isolation)."
)


class SandboxConfig(BaseModel):
    """How the sandbox container is made."""

    image: str = Field(images.SANDBOX_TAG, description="sandbox image tag; built on first use if missing")
    base_image: str = Field("python:3.11-slim-bookworm", description="base for building the sandbox image")
    network: bool = Field(False, description="allow network during the agent run (off by default)")
    memory: str = Field("2g", description="memory limit (no swap beyond it)")
    cpus: float = Field(2.0, description="CPU limit")
    pids: int = Field(512, description="process limit (stops fork bombs)")
    tmp_size: str = Field("1g", description="size of the /tmp tmpfs")
    ca_bundle: str | None = Field(None, description="CA bundle for image builds behind a TLS proxy")
    project_env: bool = Field(True, description="install the repo's dependencies in a cached layer")
    workspace_limit_mb: int | None = Field(None, description="MiB the workspace may grow by (no file larger)")


class ToolClient:
    """Talks to a tool server over its Unix socket: one request per connection, each carrying the run's
    secret (the server refuses a request without it)."""

    def __init__(self, socket_path: Path, token: str):
        self.socket_path = socket_path
        self.token = token

    def call(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        started = time.monotonic()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(timeout + 30)  # the server enforces the command timeout itself
            conn.connect(str(self.socket_path))
            conn.sendall(json.dumps({"token": self.token, "tool": name, "args": args}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, OSError) as exc:
            return ToolResult.fail("sandbox_error", f"the sandbox did not answer: {exc}")
        finally:
            conn.close()  # closing early (Ctrl-C) tells the server to kill the running command
        try:
            reply = ToolResult.model_validate_json(data)
        except ValueError:
            return ToolResult.fail("sandbox_error", f"the sandbox sent an unreadable reply: {data[:300]!r}")
        reply.duration_s = reply.duration_s or round(time.monotonic() - started, 4)
        return reply

    def wait_ready(self, alive: Callable[[], bool], limit: float = 30.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.socket_path.exists():
                probe = self.call("noop", {}, timeout=5)
                if probe.success:
                    return
            if not alive():
                raise SandboxError("the tool server stopped while starting")
            time.sleep(0.02)
        raise SandboxError(f"the tool server did not start within {limit:.0f}s")


RUN_DIR_PREFIX = "omni-run-"


class RunDir:
    """A private folder per run on the host: the tool socket's folder (ipc/, 0700, owned by the user
    the tool server runs as), the secret that every request must carry, and the sanitized git config
    the container sees. Its name carries omni's pid, so a later start can remove it after a kill -9."""

    def __init__(self, owner: tuple[int, int] | None = None):
        self.path = Path(tempfile.mkdtemp(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-"))  # 0700
        self.ipc = self.path / "ipc"
        self.ipc.mkdir(mode=0o700)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            os.chown(self.ipc, *owner)
        self.token = secrets.token_hex(16)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale_run_dirs() -> list[str]:
    """Run folders (and the older omni-ipc-* ones) of omni processes that no longer run."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob("omni-*"):
        name = folder.name
        if name.startswith("omni-ipc-"):
            owner = None  # written before run folders carried a pid: their runs are long gone if stale
            stale = time.time() - folder.stat().st_mtime > 24 * 3600 or not any(folder.iterdir())
        elif name.startswith(RUN_DIR_PREFIX):
            owner = name[len(RUN_DIR_PREFIX):].split("-", 1)[0]
            stale = not (owner.isdigit() and _pid_alive(int(owner)))
        else:
            continue
        if stale and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def _server_env(token: str, test_command: str, base_rev: str, limit_bytes: int | None) -> dict[str, str]:
    return {"OMNI_TOOL_TOKEN": token, "OMNI_TEST_COMMAND": test_command, "OMNI_BASE_REV": base_rev,
            "OMNI_WORKSPACE_LIMIT": str(limit_bytes or "")}


class LocalSandbox:
    """Tools on the host, in the run's worktree. No isolation: an explicit opt-in."""

    kind = "local"

    def __init__(self, workspace: Path, test_command: str = "", base_rev: str = "HEAD",
                 limit_bytes: int | None = None):
        self.run_dir = RunDir()
        env = dict(os.environ)
        for key in list(env):  # keys stay out of the tools' reach here too
            if key.endswith(("_API_KEY", "_TOKEN", "_SECRET")):
                env.pop(key)
        env["OMNI_PROJECT_PYTHON"] = shutil.which("python3") or sys.executable
        env.update(_server_env(self.run_dir.token, test_command, base_rev, limit_bytes))
        self.proc = subprocess.Popen(
            [sys.executable, str(data_dir("tools") / "server.py"), "--socket", str(self.run_dir.ipc / SOCKET),
             "--root", str(workspace)],
            cwd=workspace, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        self.client = ToolClient(self.run_dir.ipc / SOCKET, self.run_dir.token)
        self.client.wait_ready(lambda: self.proc.poll() is None)

    def run_tool(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        return self.client.call(name, args, timeout)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.run_dir.remove()


def docker_client():
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except Exception as exc:  # docker raises several unrelated types when no engine answers
        raise UsageError(NO_DOCKER.format(reason=str(exc).splitlines()[0][:200])) from exc


def remove_stale(client) -> list[str]:
    """Remove sandboxes left by omni processes that no longer run (a crash, a kill -9)."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        pid = int(container.labels.get("org.omni.pid", "0") or 0)
        host = container.labels.get("org.omni.host", "")
        alive = host == socket.gethostname() and pid > 0 and _pid_alive(pid)
        if not alive:
            container.remove(force=True)
            removed.append(container.name)
    return removed


def _chown_tree(root: Path, uid: int) -> None:
    """Give the worktree (not its .git pointer) to uid; used only when omni runs as root."""
    os.chown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames:
            dirnames.remove(".git")
        for name in dirnames + filenames:
            if name != ".git" or dirpath != str(root):
                os.lchown(os.path.join(dirpath, name), uid, uid)


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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def ensure_image(client, config: SandboxConfig, emit: Callable[..., None]) -> str:
    import docker

    try:
        client.images.get(config.image)
        return config.image
    except docker.errors.ImageNotFound:
        pass
    emit("image_build", tag=config.image, line=f"the sandbox image {config.image} is missing; building it")
    try:
        client.images.get(config.base_image)
    except docker.errors.ImageNotFound:
        if config.base_image == images.OFFLINE_BASE:
            images.build_offline_base(emit)
    try:
        return images.build_sandbox_image(client, config.base_image, config.image, config.ca_bundle, emit)
    except SandboxError as exc:
        raise SandboxError(f"{exc}\nWithout a reachable registry, build from Debian packages instead: "
                           f"`omni sandbox build --offline-base`") from exc


class DockerSandbox:
    """One hardened container per run, over the run's worktree."""

    kind = "docker"

    def __init__(self, run_id: str, workspace: Path, git_dir: Path, config: SandboxConfig,
                 emit: Callable[..., None] = lambda *a, **k: None, test_command: str = "", base_rev: str = "HEAD",
                 client=None):
        from docker.types import Ulimit

        self.client = client or docker_client()
        for name in remove_stale(self.client):
            emit("sandbox", line=f"removed stale sandbox {name}")
        image = ensure_image(self.client, config, emit)
        self.install_note = ""
        if config.project_env:
            image = self._project_image(workspace, image, emit)
        self.workspace = workspace
        self.owner = self._container_user(workspace)
        uid = self.owner[0]
        self.run_dir = RunDir(self.owner)
        project_python = "/opt/project/bin/python"
        volumes = {
            str(workspace): {"bind": "/workspace", "mode": "rw"},
            str(data_dir("tools")): {"bind": "/omni/tools", "mode": "ro"},
            str(self.run_dir.ipc): {"bind": "/omni/ipc", "mode": "rw"},
            **git_mounts(workspace, git_dir, self.run_dir.path),
        }
        limit = config.workspace_limit_mb * 2**20 if config.workspace_limit_mb else None
        environment = {
            "HOME": "/tmp",
            "PATH": "/opt/project/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "OMNI_PROJECT_PYTHON": project_python if image.startswith("omni-project:") else
            "/opt/omni-tools/bin/python",
            **_server_env(self.run_dir.token, test_command, base_rev, limit),
            "PYTHONDONTWRITEBYTECODE": "1",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
            "PIP_NO_INPUT": "1",
        }
        try:
            self.container = self.client.containers.run(
                image,
                ["/opt/omni-tools/bin/python", "/omni/tools/server.py", "--socket", f"/omni/ipc/{SOCKET}",
                 "--root", "/workspace"],
                name=f"omni-{run_id}",
                detach=True,
                user=f"{uid}:{self.owner[1]}",
                working_dir="/workspace",
                environment=environment,
                volumes=volumes,
                labels={LABEL: run_id, "org.omni.pid": str(os.getpid()), "org.omni.host": socket.gethostname()},
                read_only=True,
                tmpfs={"/tmp": f"rw,nosuid,nodev,size={config.tmp_size},mode=1777"},
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                pids_limit=config.pids,
                ulimits=[Ulimit(name="fsize", soft=limit, hard=limit)] if limit else None,
                mem_limit=config.memory,
                memswap_limit=config.memory,
                nano_cpus=int(config.cpus * 1e9),
                network_mode="bridge" if config.network else "none",
                stdin_open=False,
                tty=False,
            )
        except Exception as exc:
            self.run_dir.remove()
            raise SandboxError(f"could not start the sandbox container: {exc}") from exc
        self.client_tools = ToolClient(self.run_dir.ipc / SOCKET, self.run_dir.token)
        try:
            self.client_tools.wait_ready(self._alive)
        except SandboxError as exc:
            logs = self.container.logs(tail=20).decode(errors="replace")
            self.close()
            raise SandboxError(f"{exc}\n{logs}") from exc
        if image.startswith("omni-project:"):
            status = self.run_tool("shell", {"command": "cat /etc/omni/install.status; tail -15 /etc/omni/install.log",
                                             "timeout": 30}, 40)
            if not status.output.startswith("ok"):
                self.install_note = ("Installing the project's dependencies failed; tests may not import. "
                                     "Log tail:\n" + status.output[-1500:])
                emit("env_setup", line=self.install_note, failed=True)

    def _project_image(self, workspace: Path, image: str, emit) -> str:
        try:
            tag, _ = images.project_image(self.client, workspace, image, emit)
            return tag
        except SandboxError as exc:
            emit("env_setup", line=f"project environment setup failed: {exc}", failed=True)
            return image

    @staticmethod
    def _container_user(workspace: Path) -> tuple[int, int]:
        uid, gid = os.getuid(), os.getgid()
        if uid != 0:
            return uid, gid  # files the agent creates belong to the user
        uid = unused_uid()  # root user: hand the copy to a uid of its own for the run
        _chown_tree(workspace, uid)
        return uid, uid

    def give_back(self) -> None:
        """After host-side git rewrote files (/undo), hand them to the container user again."""
        if os.getuid() == 0:
            _chown_tree(self.workspace, self.owner[0])

    def _alive(self) -> bool:
        self.container.reload()
        return self.container.status in ("created", "running")

    def run_tool(self, name: str, args: dict[str, Any], timeout: float) -> ToolResult:
        return self.client_tools.call(name, args, timeout)

    def close(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception:
            pass
        if os.getuid() == 0 and self.workspace.exists():  # give the copy back to its owner
            _chown_tree(self.workspace, 0)
        self.run_dir.remove()
