"""Sandbox images: the omni image (tools runtime) and a per-repo project layer (its dependencies).

Builds forward the configured CA bundle and pip index settings into the build, for networks behind
a TLS-intercepting proxy; nothing about a particular host is written here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker

from omni import __version__
from omni.box.requirements import project_requirements
from omni.errors import SandboxError, UsageError
from omni.resources import data_dir

SANDBOX_TAG = f"omni-sandbox:{__version__}"
OFFLINE_BASE = "omni-base:bookworm"


def ca_bundle(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("OMNI_CA_BUNDLE"), os.environ.get("PIP_CERT"),
                      os.environ.get("REQUESTS_CA_BUNDLE"), os.environ.get("SSL_CERT_FILE")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def pip_build_args() -> dict[str, str]:
    args = {}
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        urls = [u for u in os.environ.get(key, "").split() if u.startswith(("http://", "https://"))]
        if urls:
            args[key] = " ".join(urls)
    return args


def _build(client: docker.DockerClient, context: Path, tag: str, buildargs: dict[str, str],
           dockerfile: str, emit: Callable[..., None]) -> None:
    emit("image_build", tag=tag, line=f"building {tag}")
    try:
        for chunk in client.api.build(path=str(context), tag=tag, buildargs=buildargs, dockerfile=dockerfile,
                                      rm=True, forcerm=True, decode=True):
            if "error" in chunk:
                raise SandboxError(f"building {tag} failed: {chunk['error'].strip()}")
            line = (chunk.get("stream") or chunk.get("status") or "").strip()
            if line:
                emit("image_build", tag=tag, line=line)
    except docker.errors.APIError as exc:
        raise SandboxError(f"building {tag} failed: {exc.explanation or exc}") from exc


def build_sandbox_image(client: docker.DockerClient, base_image: str, tag: str = SANDBOX_TAG,
                        ca: str | None = None, emit: Callable[..., None] = lambda *a, **k: None) -> str:
    with tempfile.TemporaryDirectory(prefix="omni-build-") as tmp:
        context = Path(tmp)
        source = data_dir("sandbox")
        for name in ("Dockerfile", "tool-requirements.txt"):
            shutil.copy(source / name, context / name)
        bundle = ca_bundle(ca)
        if bundle:
            shutil.copy(bundle, context / "omni-ca.crt")
        else:
            (context / "omni-ca.crt").write_text("")
        _build(client, context, tag, {"BASE_IMAGE": base_image, **pip_build_args()}, "Dockerfile", emit)
    return tag


def aider_tag(sandbox_tag: str) -> str:
    """The Aider layer's tag: a changed recipe, pinned version or sandbox image makes a new one."""
    source = data_dir("sandbox")
    recipe = (source / "Dockerfile.aider").read_text() + (source / "aider-requirements.txt").read_text()
    return f"omni-aider:{hashlib.sha256((recipe + sandbox_tag).encode()).hexdigest()[:16]}"


def build_aider_image(client: docker.DockerClient, sandbox_tag: str,
                      emit: Callable[..., None] = lambda *a, **k: None) -> str:
    """aider-chat in its own venv on top of the sandbox image (pip from the configured index, as the sandbox's)."""
    tag = aider_tag(sandbox_tag)
    with tempfile.TemporaryDirectory(prefix="omni-aider-") as tmp:
        for name in ("Dockerfile.aider", "aider-requirements.txt"):
            shutil.copy(data_dir("sandbox") / name, Path(tmp) / name)
        emit("image_build", tag=tag, line="adding Aider to the sandbox image (once; a few minutes)")
        _build(client, Path(tmp), tag, {"SANDBOX_IMAGE": sandbox_tag, **pip_build_args()}, "Dockerfile.aider", emit)
    return tag


def exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def pull(client: docker.DockerClient, tag: str, emit: Callable[..., None]) -> bool:
    """Pull an image from its registry; False when none is reachable (said in one line, not raised)."""
    emit("image_build", tag=tag, line=f"pulling {tag}")
    name, _, version = tag.partition(":")
    try:
        client.images.pull(name, tag=version or "latest")
        return True
    except docker.errors.APIError as exc:
        emit("image_build", tag=tag, line=f"cannot pull {tag}: {(exc.explanation or str(exc)).strip()[:200]}")
        return False


def check_offline_base_possible(base: str, asked: bool = False) -> None:
    """Making a base from Debian packages needs debootstrap and root: if either is missing, say the one
    command that does it instead (exit 2). asked: the user asked for it (--offline-base)."""
    missing = [what for what, ok in (("debootstrap", shutil.which("debootstrap")), ("root", os.geteuid() == 0))
               if not ok]
    if missing:
        install = "sudo apt-get install -y debootstrap && " if "debootstrap" in missing else ""
        raise UsageError(
            ("" if asked else f"the sandbox image must be built, and its base {base} cannot be pulled (no registry "
             "is reachable). ") + f"Making a base from Debian packages needs {' and '.join(missing)}. Run "
            f'once:\n  {install}sudo "$(command -v omni)" sandbox build --offline-base\n'
            "or use a reachable registry, or --sandbox local (no isolation)")


def build_offline_base(emit: Callable[..., None] = lambda *a, **k: None, tag: str = OFFLINE_BASE) -> str:
    """debootstrap + docker import: a base image with no container registry involved."""
    script = data_dir("sandbox") / "make-base-image.sh"
    emit("image_build", tag=tag, line=f"making {tag} with debootstrap (about a minute)")
    proc = subprocess.Popen(["bash", str(script), tag], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        emit("image_build", tag=tag, line=line.rstrip())
    if proc.wait() != 0:
        raise SandboxError(f"making the offline base image {tag} failed (see the lines above)")
    return tag


# ---- project environment ----------------------------------------------------------------------
def project_image(client: docker.DockerClient, root: Path, sandbox_tag: str,
                  emit: Callable[..., None] = lambda *a, **k: None) -> tuple[str, list[str]]:
    """An image with the repo's dependencies, cached by their hash; the sandbox image if there are none."""
    reqs = project_requirements(root)
    if not reqs:
        return sandbox_tag, []
    recipe = (data_dir("sandbox") / "Dockerfile.project").read_text()  # a changed recipe builds anew
    digest = hashlib.sha256(("\n".join(reqs) + sandbox_tag + recipe).encode()).hexdigest()[:16]
    tag = f"omni-project:{digest}"
    try:
        client.images.get(tag)
        emit("env_setup", line=f"project environment {tag} is cached", cached=True)
        return tag, reqs
    except docker.errors.ImageNotFound:
        pass
    with tempfile.TemporaryDirectory(prefix="omni-project-") as tmp:
        context = Path(tmp)
        (context / "Dockerfile.project").write_text(recipe)
        (context / "project-requirements.txt").write_text("\n".join(reqs) + "\n")
        emit("env_setup", line=f"installing {len(reqs)} project dependencies into {tag}", cached=False)
        _build(client, context, tag, {"SANDBOX_IMAGE": sandbox_tag, **pip_build_args()},
               "Dockerfile.project", emit)
    emit("env_setup", line=f"project environment {tag} is ready", cached=False)
    return tag, reqs
