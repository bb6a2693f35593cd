"""The worktree copied into the container: for an engine that does not share this machine's files (a remote
DOCKER_HOST, Docker Desktop's or Colima's VM, rootless Podman), or when --mount copy asks for it.

Three anonymous volumes go with the container and die with it: /workspace (the worktree, the sandbox user's), the
tool server's code and the git history it may read (both root's, so the sandbox user can read them and not write
them). They are filled through the engine's archive API before the container starts. Afterwards the tool server
keeps the copy in step (tools/mirror.py): before host code reads the worktree (git's staging), what changed in the
container comes back (`__pull__`); after host git rewrote files (/undo, a carried run), they go in (`__push__`).
The host's worktree is then only ever written by omni itself, with no link followed (omni/safefs.py), so the
container has no way to make host git read or write anything outside it."""

from __future__ import annotations

import base64
import io
import os
import stat
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from docker.types import Mount

from omni import safefs
from omni.box import hostgit
from omni.box.gitmounts import GIT_PARTS, sanitized_git_config
from omni.box.workspace import WorkspaceTooLarge, walk_tree
from omni.errors import SandboxError
from omni.resources import data_dir

PUSH_BYTES = 16 * 2**20  # file bytes in one __push__ request
BIG = 8 * 2**20  # a file larger than this goes through the archive API (as tools/mirror.py says)
SYNC_TIMEOUT = 120.0


def _state(st: os.stat_result) -> tuple:
    kind = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f" if stat.S_ISREG(
        st.st_mode) else ""
    return kind, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino


def host_view(root: Path) -> dict[str, tuple]:
    """{path: (kind, mode, size, mtime, inode)} of the host's worktree: what a push compares with."""
    view = {}
    for entry, rel, _ in walk_tree(root):
        try:
            state = _state(entry.stat(follow_symlinks=False))
        except OSError:
            continue
        if state[0]:
            view[rel] = state
    return view


class TarWriter:
    """A tar in a spooled file, every entry with the owner and mode given, links stored as links."""

    def __init__(self):
        self.file = tempfile.SpooledTemporaryFile(max_size=64 * 2**20)
        self.tar = tarfile.open(fileobj=self.file, mode="w", format=tarfile.PAX_FORMAT)

    def add(self, path: Path, name: str, uid: int, mode: int | None = None) -> None:
        info = self.tar.gettarinfo(str(path), arcname=name)
        if info is None or not (info.isfile() or info.isdir() or info.issym()):
            return  # sockets and fifos have no place in a copy
        info.uid = info.gid = uid
        info.uname = info.gname = ""
        if mode is not None:
            info.mode = mode | (info.mode & 0o111 if info.isfile() else 0)
        if info.isfile():
            with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as handle:
                self.tar.addfile(info, handle)
        else:
            self.tar.addfile(info)

    def add_bytes(self, name: str, data: bytes, uid: int, mode: int) -> None:
        info = tarfile.TarInfo(name)
        info.size, info.uid, info.gid, info.mode = len(data), uid, uid, mode
        self.tar.addfile(info, io.BytesIO(data))

    def add_dir(self, name: str, uid: int) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.uid, info.gid, info.mode = tarfile.DIRTYPE, uid, uid, 0o755
        self.tar.addfile(info)

    def done(self):
        self.tar.close()
        self.file.seek(0)
        return self.file


def _add_tree(tar: TarWriter, root: Path, prefix: str, uid: int, skip=()) -> None:
    for _, rel, _ in walk_tree(root):
        if rel.split("/", 1)[0] not in skip and "__pycache__" not in rel.split("/"):
            tar.add(root / rel, f"{prefix}{rel}", uid)


def git_tar(git_dir: Path, workspace: Path) -> TarWriter:
    """What git in the container needs to read the run's history, as gitmounts.py names it for the bind path."""
    tar = TarWriter()
    for part in GIT_PARTS:
        path = git_dir / part
        if part == "objects":
            _add_objects(tar, git_dir)
        elif path.is_dir():
            tar.add_dir(part, 0)
            _add_tree(tar, path, f"{part}/", 0)
        elif path.is_file():
            tar.add(path, part, 0)
    pointer = workspace / ".git"
    if pointer.is_file():
        admin = Path(pointer.read_text().split("gitdir:", 1)[-1].strip())
        if admin.is_dir() and git_dir in admin.parents:
            rel = admin.relative_to(git_dir).as_posix()
            parts = rel.split("/")
            for depth in range(1, len(parts) + 1):
                tar.add_dir("/".join(parts[:depth]), 0)
            _add_tree(tar, admin, f"{rel}/", 0)
    tar.add_bytes("config", sanitized_git_config(git_dir).encode(), 0, 0o444)
    return tar


def _add_objects(tar: TarWriter, git_dir: Path) -> None:
    """The object store: its packs as they are, and its loose objects (one file each; thousands after a first
    commit) as one more pack, made here: a file per object would cost a file write each in the container."""
    objects = git_dir / "objects"
    tar.add_dir("objects", 0)
    for part in ("info", "pack"):
        if (objects / part).is_dir():
            tar.add_dir(f"objects/{part}", 0)
            _add_tree(tar, objects / part, f"objects/{part}/", 0)
    loose = [f"{folder.name}{entry.name}" for folder in objects.iterdir()
             if len(folder.name) == 2 and folder.is_dir() for entry in folder.iterdir()]
    if not loose:
        return
    with tempfile.TemporaryDirectory(prefix="omni-pack-") as tmp:
        hostgit.run(["pack-objects", "-q", f"{tmp}/pack"], git_dir,
                    input="\n".join(loose).encode() + b"\n")
        if not (objects / "pack").is_dir():
            tar.add_dir("objects/pack", 0)
        for made in sorted(Path(tmp).iterdir()):
            tar.add(made, f"objects/pack/{made.name}", 0, 0o444)


class CopiedWorktree:
    kind = "copy"
    server_flags = ["--mirror"]

    def __init__(self, workspace: Path, git_dir: Path, owner: tuple[int, int]):
        self.workspace, self.git_dir, self.owner = workspace, git_dir, owner
        self.container = self.channel = None
        self.view: dict[str, tuple] = {}
        self._held, self._lock, self.closed = 0, threading.RLock(), False

    def create_args(self) -> dict:
        return {"mounts": [Mount(target, None, type="volume")
                           for target in ("/workspace", "/omni/tools", str(self.git_dir))]}

    def fill(self, container) -> None:
        """Before the container starts: the tools, the git history and the worktree, into their volumes."""
        self.container = container
        tools = TarWriter()
        _add_tree(tools, data_dir("tools"), "", 0)
        self._put("/omni/tools", tools.done())
        self._put(str(self.git_dir), git_tar(self.git_dir, self.workspace).done())
        work = TarWriter()
        self.view = host_view(self.workspace)
        for rel in sorted(self.view):
            work.add(self.workspace / rel, rel, self.owner[0])
        pointer = self.workspace / ".git"
        if pointer.is_file() and not pointer.is_symlink():  # root's: the sandbox user cannot repoint it
            work.add(pointer, ".git", 0, 0o444)
        self._put("/workspace", work.done())

    def _put(self, target: str, data) -> None:
        with data:
            if not self.container.put_archive(target, data):
                raise SandboxError(f"could not copy into the sandbox's {target}")

    def started(self, channel) -> None:
        """The container runs: its top folder opens to the sandbox user (a volume's top belongs to root, and
        without CAP_CHOWN root can only open it: sticky, so the root-owned .git pointer stays)."""
        self.channel = channel
        done = self.container.exec_run(["chmod", "1777", "/workspace"], user="0:0")
        if done.exit_code != 0:
            raise SandboxError(f"could not open the copied workspace: {done.output.decode(errors='replace')}")

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Host code reads the worktree inside this block: it first gets what changed in the container."""
        with self._lock:
            if self._held == 0 and not self.closed and self.channel is not None:
                self.pull()
            self._held += 1
            try:
                yield
            finally:
                self._held -= 1

    def pull(self) -> None:
        more = True
        while more:
            reply = self.channel.call("__pull__", {}, SYNC_TIMEOUT)
            if reply.failure == "workspace_full":
                said = reply.error.removeprefix("stopped: ").split("; remove", 1)[0]
                raise WorkspaceTooLarge(f"{said} (--max-workspace-mb); the run was stopped and nothing it wrote was "
                                        "saved")
            if not reply.success:
                raise SandboxError(f"could not bring the sandbox's changes back: {reply.error}")
            for entry in reply.details.get("entries", []):
                self._take(entry)
            more = bool(reply.details.get("more"))

    def _take(self, entry: dict) -> None:
        """One change from the container, written into the host's worktree with no link followed."""
        rel = os.fsdecode(entry["p"].encode("latin-1"))
        parts = rel.split("/")
        if not rel or rel.startswith("/") or ".." in parts or "" in parts or parts[0] == ".git":
            raise SandboxError(f"the sandbox named a path outside the workspace: {rel!r}")
        kind = entry["k"]
        try:
            if kind == "-" or safefs.kind(self.workspace, rel) not in ("", kind):
                safefs.remove(self.workspace, rel)
            if kind == "d":
                safefs.make_dir(self.workspace, rel)
            elif kind == "l":
                safefs.make_link(self.workspace, rel, entry["to"].encode("latin-1"))
            elif kind == "f":
                data = self._fetch(rel) if entry.get("big") else base64.b64decode(entry["data"])
                safefs.write_bytes(self.workspace, rel, data, 0o755 if entry.get("x") else 0o644)
        except safefs.LinkRefused as exc:
            raise SandboxError(f"the sandbox's change to {rel!r} passes through a link: {exc}") from None
        self._restat(rel)

    def _fetch(self, rel: str) -> bytes:
        """A large file, through the engine's archive API (the stream is not made for it)."""
        stream, _ = self.container.get_archive(f"/workspace/{rel}")
        with tempfile.SpooledTemporaryFile(max_size=64 * 2**20) as spool:
            for chunk in stream:
                spool.write(chunk)
            spool.seek(0)
            with tarfile.open(fileobj=spool) as tar:
                member = tar.next()
                if member is None or not member.isfile():
                    raise SandboxError(f"{rel} is no longer a file in the sandbox")
                return tar.extractfile(member).read()

    def _restat(self, rel: str) -> None:
        for path in [p for p in self.view if p == rel or p.startswith(rel + "/")]:
            del self.view[path]
        try:
            state = _state(os.lstat(self.workspace / rel))
        except OSError:
            return
        self.view[rel] = state
        if state[0] == "d":
            self.view.update({f"{rel}/{p}": s for p, s in host_view(self.workspace / rel).items()})

    def give_back(self) -> None:
        """After host git rewrote files: what it changed goes into the container."""
        with self._lock:
            now = host_view(self.workspace)
            gone = [p for p, was in self.view.items() if p not in now or now[p][0] != was[0]]
            entries = [{"p": self._name(p), "k": "-"} for p in sorted(gone, reverse=True)]
            batch, size = entries, 0
            for rel in sorted(p for p, st in now.items() if self.view.get(p) != st):
                entry = {"p": self._name(rel), "k": now[rel][0]}
                if entry["k"] == "l":
                    entry["to"] = os.readlink(self.workspace / rel).encode(errors="surrogateescape") \
                        .decode("latin-1")
                elif entry["k"] == "f":
                    data = safefs.read_bytes(self.workspace, rel)
                    entry["x"] = bool(now[rel][1] & 0o100)
                    if len(data) > BIG:
                        self._put_big(rel, data)
                        entry["big"] = True
                    else:
                        entry["data"], size = base64.b64encode(data).decode(), size + len(data)
                batch.append(entry)
                if size > PUSH_BYTES:
                    self._push(batch)
                    batch, size = [], 0
            self._push(batch)
            self.view = now

    def _put_big(self, rel: str, data: bytes) -> None:
        tar = TarWriter()
        tar.add_bytes(rel, data, self.owner[0], 0o644)
        self._put("/workspace", tar.done())

    def _push(self, entries: list[dict]) -> None:
        if not entries:
            return
        reply = self.channel.call("__push__", {"entries": entries}, SYNC_TIMEOUT)
        if not reply.success:
            raise SandboxError(f"could not copy the host's changes into the sandbox: {reply.error}")

    @staticmethod
    def _name(rel: str) -> str:
        return os.fsencode(rel).decode("latin-1")

    def close(self) -> None:
        self.closed = True
