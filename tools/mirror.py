"""The container's side of the copied workspace (a remote engine, Docker Desktop, Podman): the worktree lives in the
container, and the host keeps a copy of it for git. The server remembers what the tree looked like at the last
exchange, and hands over what changed since (`__pull__`), or writes what the host changed (`__push__`).

An entry is {"p": path, "k": kind}: kind "f" a file (with "x" for the exec bit and "data" in base64, or "big" when
the host is to fetch it through the engine's archive API), "l" a link (with "to"), "d" a folder, "-" gone. Paths
are the bytes of the name, each byte one character (latin-1), so a name that is not UTF-8 crosses unchanged.
The worktree's own .git (a pointer the host wrote) is never part of it."""

from __future__ import annotations

import base64
import os
import shutil
import stat

SEND_BYTES = 16 * 2**20  # file bytes in one reply (base64 makes them a third larger; the host takes 32 MiB)
BIG = 8 * 2**20  # a file larger than this travels through the engine's archive API, not the reply


def _name(rel: bytes) -> str:
    return rel.decode("latin-1")


def _rel(name: str) -> bytes:
    rel = name.encode("latin-1")
    parts = rel.split(b"/")
    if not rel or rel.startswith(b"/") or b".." in parts or b"" in parts or parts[0] == b".git":
        raise ValueError(f"{rel!r} is not a path inside the workspace")
    return rel


def scan(root: bytes, top: bool = True) -> dict[bytes, tuple]:
    """{path: (kind, mode, size, mtime, ctime, inode)} of everything under root (top: but the worktree's own .git);
    no link followed."""
    seen: dict[bytes, tuple] = {}
    stack = [(root, b"")]
    while stack:
        path, rel = stack.pop()
        try:
            with os.scandir(path) as listing:
                found = list(listing)
        except OSError:
            continue
        for entry in found:
            if top and not rel and entry.name == b".git":
                continue
            here = rel + b"/" + entry.name if rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            kind = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else \
                "f" if stat.S_ISREG(st.st_mode) else ""
            if not kind:  # a fifo, a socket, a device: git has no word for them
                continue
            seen[here] = (kind, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            if kind == "d":
                stack.append((entry.path, here))
    return seen


def _read(path: bytes) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None


class Mirror:
    def __init__(self, root: str):
        self.root = os.fsencode(root)
        self.seen = scan(self.root)

    def _path(self, rel: bytes) -> bytes:
        return self.root + b"/" + rel

    def pull(self) -> dict:
        """What changed since the last exchange, at most SEND_BYTES of file bytes ("more" when there is more)."""
        now = scan(self.root)
        gone = [p for p, was in self.seen.items() if p not in now or now[p][0] != was[0]]
        entries = [{"p": _name(p), "k": "-"} for p in sorted(gone, reverse=True)]  # the deepest first
        for p in gone:
            del self.seen[p]
        sent, more = 0, False
        for p in sorted(q for q, st in now.items() if self.seen.get(q) != st):
            kind, mode = now[p][0], now[p][1]
            entry = {"p": _name(p), "k": kind}
            if kind == "l":
                try:
                    entry["to"] = _name(os.readlink(self._path(p)))
                except OSError:
                    continue  # gone meanwhile: the next pull says so
            elif kind == "f":
                entry["x"] = bool(mode & 0o100)
                if now[p][2] > BIG:
                    entry["big"] = True
                else:
                    if sent and sent + now[p][2] > SEND_BYTES:
                        more = True
                        continue
                    data = _read(self._path(p))
                    if data is None:
                        continue
                    sent += len(data)
                    entry["data"] = base64.b64encode(data).decode()
            entries.append(entry)
            self.seen[p] = now[p]
        return {"entries": entries, "more": more}

    def push(self, entries: list[dict]) -> dict:
        """Write what the host changed (its git reset a step, or carried an earlier run in)."""
        written = 0
        for entry in entries:
            rel = _rel(entry["p"])
            path = self._path(rel)
            current = self._kind(path)
            if entry["k"] == "-" or (current and current != entry["k"]):
                self._remove(path)
            if entry.get("big"):
                pass  # the host wrote it through the engine's archive API
            elif entry["k"] == "d":
                os.makedirs(path, exist_ok=True)
            elif entry["k"] == "l":
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self._remove(path)
                os.symlink(entry["to"].encode("latin-1"), path)
            elif entry["k"] == "f":
                os.makedirs(os.path.dirname(path), exist_ok=True)
                tmp = path + b".omni-push"
                self._remove(tmp)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if entry["x"] else 0o644)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(base64.b64decode(entry["data"]))
                os.chmod(tmp, 0o755 if entry["x"] else 0o644)
                os.replace(tmp, path)
            written += 1
            self._restat(rel)
        return {"written": written}

    def _restat(self, rel: bytes) -> None:
        """The tree as it is now at rel (and below it, for a folder): what the next pull compares with."""
        for p in [q for q in self.seen if q == rel or q.startswith(rel + b"/")]:
            del self.seen[p]
        kind = self._kind(self._path(rel))
        if kind:
            st = os.lstat(self._path(rel))
            self.seen[rel] = (kind, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        if kind == "d":
            self.seen.update({rel + b"/" + p: st for p, st in scan(self._path(rel), top=False).items()})

    @staticmethod
    def _kind(path: bytes) -> str:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return ""
        return "d" if stat.S_ISDIR(mode) else "l" if stat.S_ISLNK(mode) else "f" if stat.S_ISREG(mode) else "?"

    @staticmethod
    def _remove(path: bytes) -> None:
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            pass
