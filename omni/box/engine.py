"""The Docker engine omni talks to, and how the sandbox gets the worktree from it.

The engine is DOCKER_HOST's, else the current Docker context's (Docker Desktop, Colima, Rancher Desktop and
Podman machine each make one), else the local socket. The worktree is bind-mounted when the engine runs on this
machine's own kernel and sees its files; otherwise it is copied in and back (omni/box/copied.py): a remote engine
(tcp:// or ssh://), Docker Desktop, a VM's engine (another kernel: Colima, Podman machine, any macOS or Windows
host), a rootless engine (its uids are not this machine's). --mount bind|copy decides instead."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

from omni.errors import UsageError

NO_DOCKER = (
    "No Docker engine answered ({reason}).\n"
    "omni runs every tool in a Docker container. Install Docker (https://docs.docker.com/engine/install/,\n"
    "or `apt-get install docker.io` on Debian/Ubuntu) and start it (`sudo systemctl start docker`, or\n"
    "`sudo dockerd &`), then check with `docker info`. A remote engine works too: DOCKER_HOST=tcp://… or\n"
    "ssh://…, or a Docker context (`docker context use …`).\n"
    "To run without a container, on an isolated copy of the repo, pass --sandbox local (no isolation)."
)


@dataclass(frozen=True)
class MountChoice:
    kind: str  # "bind" or "copy"
    reason: str


def endpoint() -> tuple[str, object]:
    """(the engine's address, its TLS config): DOCKER_HOST, else the current Docker context's, else ''."""
    if os.environ.get("DOCKER_HOST"):
        return os.environ["DOCKER_HOST"], None
    try:
        from docker.context import ContextAPI

        context = ContextAPI.get_current_context()
    except Exception:  # noqa: BLE001 - a broken ~/.docker/config.json: the default socket, as docker-py does
        return "", None
    if context is None or context.Name == "default" or not context.Host:
        return "", None
    return context.Host, context.TLSConfig


def docker_client(timeout: float = 120):
    import docker

    host, tls = endpoint()
    try:
        ssh = host.startswith("ssh://")  # through the ssh program, with the user's own keys and config
        if not host or os.environ.get("DOCKER_HOST"):  # DOCKER_TLS_VERIFY and DOCKER_CERT_PATH apply too
            client = docker.from_env(timeout=timeout, use_ssh_client=ssh)
        else:
            client = docker.DockerClient(base_url=host, tls=tls or False, timeout=timeout, use_ssh_client=ssh)
        client.ping()
    except Exception as exc:  # docker raises several unrelated types when no engine answers
        where = f" at {host}" if host else ""
        raise UsageError(NO_DOCKER.format(reason=f"{str(exc).splitlines()[0][:200]}{where}")) from exc
    client.omni_endpoint = host or "unix:///var/run/docker.sock"
    return client


def _scheme(address: str) -> str:
    """unix, npipe, tcp or ssh, from DOCKER_HOST's form or docker-py's base_url (http+docker://localhost is the
    unix socket, http+docker://ssh an ssh engine, http(s):// a TCP one)."""
    scheme, _, rest = address.partition("://")
    if scheme == "http+docker":
        return "ssh" if rest.startswith("ssh") else "unix"
    return {"http": "tcp", "https": "tcp"}.get(scheme, scheme or "unix")


def choose_mount(client, asked: str = "auto") -> MountChoice:
    """bind or copy, and why (the run header and `omni config` say it)."""
    if asked in ("bind", "copy"):
        return MountChoice(asked, "asked for (--mount)")
    address = getattr(client, "omni_endpoint", "") or client.api.base_url
    info = None
    if _scheme(address) in ("unix", "npipe"):
        try:
            info = client.info()
        except Exception:  # noqa: BLE001 - no answer: the start says so; copying is right wherever the engine is
            info = {}
    return decide(address, info, platform.system(), platform.release())


def decide(address: str, info: dict | None, system: str, release: str) -> MountChoice:
    """The choice from what is known: the engine's address, what it says of itself (docker info; None when it was
    not asked), and this machine's system and kernel release."""
    scheme = _scheme(address)
    if scheme not in ("unix", "npipe"):
        return MountChoice("copy", f"the engine is reached over {scheme} ({address}) and does not see this "
                           "machine's files")
    info = info or {}
    if "Docker Desktop" in str(info.get("OperatingSystem", "")):
        return MountChoice("copy", "Docker Desktop runs the engine in a VM")
    if any("rootless" in str(o) for o in info.get("SecurityOptions") or []):
        return MountChoice("copy", "the engine is rootless (its users are not this machine's)")
    kernel = str(info.get("KernelVersion", ""))
    if system != "Linux" or kernel != release:
        return MountChoice("copy", f"the engine runs another kernel ({kernel or 'unknown'}; here {system} "
                           f"{release}): a VM")
    return MountChoice("bind", "the engine runs on this machine's kernel")


def is_podman(client) -> bool:
    """Podman's Docker-compatible service: its default open-files limit is above what a container without
    capabilities may be given, so the sandbox sets its own."""
    try:
        return any("Podman" in c.get("Name", "") for c in client.version().get("Components") or [])
    except Exception:  # noqa: BLE001 - an engine that does not say: Docker's defaults apply
        return False
