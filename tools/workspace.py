"""Paths inside the workspace only, atomic writes, and text reading with a clear word for binaries."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path


class ToolError(Exception):
    """A model-facing failure: the message says what was wrong and what to do instead."""

    def __init__(self, message: str, failure: str = "tool_error"):
        super().__init__(message)
        self.failure = failure


MAX_FILE_BYTES = 2 * 1024 * 1024


def resolve(root: Path, path: str, must_exist: bool = True, kind: str = "file") -> Path:
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path is empty: give a path relative to the repository root, e.g. src/app.py")
    if os.path.isabs(path):
        raise ToolError(f"{path!r} is absolute: give a path relative to the repository root")
    candidate = root / path
    if must_exist and kind in ("file", "any") and not os.path.lexists(candidate):
        # a module named as in an import (stats, pkg.mod): small models often leave out the .py, or keep it on a
        # dotted name (pkg.mod.py), and then repeat that path whatever the error suggests
        dotted = path.removesuffix(".py").replace(".", "/") + ".py"
        module = next((g for g in (path + ".py", dotted) if (root / g).is_file()), None)
        candidate = root / module if module else candidate
    real = Path(os.path.realpath(candidate))
    if real != root and root not in real.parents:
        raise ToolError(f"{path!r} points outside the repository; only files inside it can be used")
    parts = Path(path).parts
    if parts and parts[0] == ".git":
        raise ToolError(".git is not open to tools; use git_status or git_diff")
    if must_exist and not candidate.exists():
        raise ToolError(f"{path} does not exist. {nearest_paths(root, path)}")
    if must_exist and kind == "file" and candidate.is_dir():
        raise ToolError(f"{path} is a directory, not a file. read_file on a directory lists its files.")
    if must_exist and kind == "dir" and not candidate.is_dir():
        raise ToolError(f"{path} is a file, not a directory.")
    return candidate


def nearest_paths(root: Path, path: str, limit: int = 5000) -> str:
    """A hint for a wrong path: the closest existing files by name (a quick walk, capped)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        found += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
        if len(found) > limit:
            break
    close = difflib.get_close_matches(path, found, n=5, cutoff=0.3)
    close += [f for f in difflib.get_close_matches(os.path.basename(path), [os.path.basename(f) for f in found],
                                                   n=5, cutoff=0.5) if f not in close]
    if close:
        return f"Did you mean: {', '.join(close[:5])}?"
    if len(found) <= 15:
        return f"The repository has: {', '.join(sorted(found)) or '(no files)'}."
    return "Use list_files or find_files to find the right path."


BOM = b"\xef\xbb\xbf"


def read_text(file: Path, rel: str) -> str:
    """The file as text for searching, parsing and editing. Bytes that are not UTF-8 become lone
    surrogates (surrogateescape), so writing the text back restores them exactly; a leading BOM is
    left out here and kept by write_atomic."""
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(f"{rel} is {size} bytes, too large to handle whole; read it with start_line/end_line")
    data = file.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{rel} is a binary file; it cannot be read or edited as text")
    return data.removeprefix(BOM).decode("utf-8", "surrogateescape")


def not_utf8(text: str) -> str:
    """'' for text read from valid UTF-8; else where the first byte that is not UTF-8 is."""
    for n, line in enumerate(text.splitlines(), 1):
        for char in line:
            if "\udc80" <= char <= "\udcff":
                return f"byte 0x{ord(char) - 0xDC00:02x} on line {n}"
    return ""


def write_atomic(file: Path, text: str) -> None:
    """Write via a temp file and rename, so a kill never leaves a torn file; keeps the mode, a UTF-8
    BOM the file had, and every byte read_text kept as a surrogate."""
    file.parent.mkdir(parents=True, exist_ok=True)
    mode = file.stat().st_mode & 0o7777 if file.exists() else None
    data = text.encode("utf-8", "surrogateescape")
    if file.is_file() and not data.startswith(BOM):
        with open(file, "rb") as handle:
            if handle.read(3) == BOM:
                data = BOM + data
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".omni-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, file)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
