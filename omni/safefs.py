"""Files under a folder the model may have written to (the user's repository after an apply, the run's worktree),
read and written without ever following a symbolic link.

A model can leave a symlink anywhere in a diff: `requirements-dev.txt -> ~/.netrc`, `.omni -> ~/other-repo/.omni`,
`task.state.yaml.tmp -> ~/.vimrc`. Host code that opened such a path would read a secret into the sandbox or a
prompt, or write over a file outside the repository. So every component below the folder is opened with
O_NOFOLLOW, one at a time from the folder's own descriptor (openat), and a link anywhere on the way is refused
with LinkRefused. Writes go to a fresh name made with O_EXCL in the same folder, then replace the target.
"""

from __future__ import annotations

import errno
import os
import secrets
from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_AT = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd  # os.replace is renameat too, though not listed


class LinkRefused(OSError):
    """A path below the folder is, or passes through, a symbolic link (or is not what it should be)."""


def _parts(rel: str | os.PathLike) -> list[str]:
    parts = [p for p in PurePosixPath(Path(rel).as_posix()).parts if p not in ("", ".")]
    if not parts or parts[0] == "/" or ".." in parts:
        raise LinkRefused(errno.EINVAL, f"{rel} is not a plain path below the folder")
    return parts


@contextmanager
def _parent(root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of the folder that holds the last part, reached without following a link (with create,
    missing folders are made)."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkRefused(exc.errno, f"{'/'.join(parts)}: {name} is a symbolic link or not a folder") \
                        from None
                raise
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _refuse_links_by_path(root: Path, parts: list[str]) -> Path:
    """Where openat is missing (Windows): the same refusal, checked with lstat (racy, but no worse there)."""
    path = root
    for name in parts:
        path = path / name
        if path.is_symlink():
            raise LinkRefused(errno.ELOOP, f"{'/'.join(parts)}: {name} is a symbolic link")
    return path


def read_bytes(root: Path, rel: str | os.PathLike, limit: int | None = None) -> bytes:
    """The file's bytes (at most limit). FileNotFoundError when it is missing; LinkRefused when it or a folder
    on the way is a link, or it is not a regular file."""
    parts = _parts(rel)
    if not _AT:
        path = _refuse_links_by_path(root, parts)
        with open(path, "rb") as handle:
            return handle.read(limit if limit is not None else -1)
    with _parent(root, parts) as folder:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(exc.errno, f"{'/'.join(parts)} is a symbolic link") from None
            raise
    with os.fdopen(fd, "rb") as handle:
        if not _is_file(handle.fileno()):  # a fifo or a device would block or never end
            raise LinkRefused(errno.EINVAL, f"{'/'.join(parts)} is not a regular file")
        return handle.read(limit if limit is not None else -1)


def read_text(root: Path, rel: str | os.PathLike, limit: int | None = None) -> str:
    return read_bytes(root, rel, limit).decode("utf-8", "replace")


def read_optional(root: Path, rel: str | os.PathLike, limit: int | None = None) -> bytes | None:
    """read_bytes, or None when the file is missing, is a link or passes through one."""
    try:
        return read_bytes(root, rel, limit)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, LinkRefused):
        return None


def write_bytes(root: Path, rel: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Write atomically: a fresh file made beside the target (O_EXCL: never an existing name or link), then
    renamed over it. A link at the target is replaced, never written through; a link on the way is refused."""
    parts = _parts(rel)
    if not _AT:
        path = _refuse_links_by_path(root, parts)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        with open(tmp, "xb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        return
    with _parent(root, parts, create=True) as folder:
        tmp = f".{parts[-1]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=folder)
            except OSError:
                pass
            raise


def write_text(root: Path, rel: str | os.PathLike, text: str, mode: int = 0o644) -> None:
    write_bytes(root, rel, text.encode("utf-8"), mode)


def is_plain_file(root: Path, rel: str | os.PathLike) -> bool:
    """Whether rel is a regular file reached without a link."""
    try:
        parts = _parts(rel)
        if not _AT:
            return _refuse_links_by_path(root, parts).is_file()
        with _parent(root, parts) as folder:
            st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    import stat

    return stat.S_ISREG(st.st_mode)


def kind(root: Path, rel: str | os.PathLike) -> str:
    """What rel is, not following it: "f" a file, "l" a link, "d" a folder, "?" something else, "" nothing (or a
    link on the way)."""
    import stat

    try:
        parts = _parts(rel)
        with _parent(root, parts) as folder:
            mode = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False).st_mode
    except OSError:
        return ""
    return "d" if stat.S_ISDIR(mode) else "l" if stat.S_ISLNK(mode) else "f" if stat.S_ISREG(mode) else "?"


def remove(root: Path, rel: str | os.PathLike) -> None:
    """Remove rel (a folder with everything in it), following no link; nothing when it is missing."""
    import shutil

    parts = _parts(rel)
    try:
        with _parent(root, parts) as folder:
            try:
                os.unlink(parts[-1], dir_fd=folder)
            except (IsADirectoryError, PermissionError):
                shutil.rmtree(parts[-1], dir_fd=folder)  # fd-based: a link inside is removed, never followed
    except FileNotFoundError:
        pass


def make_dir(root: Path, rel: str | os.PathLike) -> None:
    """rel and the folders on the way, as folders (a link on the way is refused)."""
    parts = _parts(rel)
    with _parent(root, parts, create=True) as folder:
        try:
            os.mkdir(parts[-1], 0o755, dir_fd=folder)
        except FileExistsError:
            if not _is_dir_at(folder, parts[-1]):
                raise LinkRefused(errno.ENOTDIR, f"{'/'.join(parts)} is not a folder") from None


def _is_dir_at(folder: int, name: str) -> bool:
    import stat

    return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)


def make_link(root: Path, rel: str | os.PathLike, target: str | bytes) -> None:
    """A symbolic link at rel (replacing a file or link there) that points at target; nothing follows it here."""
    parts = _parts(rel)
    with _parent(root, parts, create=True) as folder:
        tmp = f".{parts[-1]}.{secrets.token_hex(6)}.tmp"
        os.symlink(target, tmp, dir_fd=folder)
        try:
            os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            os.unlink(tmp, dir_fd=folder)
            raise


def _is_file(fd: int) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(fd).st_mode)


def split(path: Path) -> tuple[Path, str]:
    """(folder, name) of a path the user gave: the folder is the user's own, the name is read without following."""
    path = Path(path)
    return path.parent.resolve(), path.name
