"""The agent's isolated copy of the repo: a git worktree on branch omni/<run-id>, seeded with the
user's uncommitted and untracked files. The user's working tree, index and history are only read,
until the user agrees to apply the result."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import git

from omni.box import hostgit
from omni.errors import SandboxError, UsageError

IDENTITY = ["-c", "user.name=omni", "-c", "user.email=omni@localhost", "-c", "commit.gpgsign=false"]
OMNI_DIR = ".omni"
GENERATED_BYTES = 1 << 20  # an ignored source file in a package larger than this is data, not a build's output
# Run data stays out of git; a team's shared .omni/config.toml does not.
OMNI_GITIGNORE = ("# omni's run data; not part of the project (config.toml may be committed)\n"
                  "runs/\nworktrees/\n.gitignore\n")


def find_repo(path: Path) -> git.Repo:
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(f"{path} is not inside a git repository; run omni in a repo, or pass --repo PATH") from None
    if repo.bare:
        raise UsageError(f"{path} is a bare repository; omni needs a working tree")
    return repo


def ensure_omni_dir(root: Path) -> Path:
    """<repo>/.omni, its run data ignored by git through its own .gitignore (the user's files are not
    touched). An old ignore-everything .gitignore is narrowed, so the config can be committed."""
    folder = root / OMNI_DIR
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists() or ignore.read_text().strip().endswith("\n*"):
        ignore.write_text(OMNI_GITIGNORE)
    return folder


class WorkspaceTooLarge(SandboxError):
    """The worktree grew past its size limit; nothing of it is committed."""


# What one file or folder costs the growth budget beyond its bytes: a filesystem block and an inode. 60,000 empty
# files are 234 MiB of budget, not 0 bytes.
ENTRY_BYTES = 4096


@dataclass
class TreeScan:
    """What a walk of the worktree found: its bytes, its entries, and folders that are git repositories of their
    own. Everything counts: .git folders at any depth and .omni too (only the worktree's own .git pointer does not)."""

    size: int
    entries: int
    nested_repos: list[str]

    @property
    def cost(self) -> int:
        """What the tree weighs against the growth budget: its bytes and a block for each entry."""
        return self.size + self.entries * ENTRY_BYTES


def walk_tree(root: Path) -> Iterator[tuple[os.DirEntry, str, bool]]:
    """(entry, its path under root, whether it is a folder) for everything under root but the worktree's own .git
    pointer: a walk with a stack, never recursion (a folder 1,100 deep is a tree like any other), that follows no
    link. Only for a tree nothing else changes meanwhile (the sandbox is held while host code walks it)."""
    stack = [(str(root), "")]
    while stack:
        path, rel = stack.pop()
        try:
            with os.scandir(path) as listing:
                found = list(listing)
        except OSError:
            continue
        for entry in found:
            if not rel and entry.name == ".git":
                continue
            here = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                stack.append((entry.path, here))
            yield entry, here, is_dir


def scan_tree(root: Path) -> TreeScan:
    size = entries = 0
    nested: set[str] = set()
    for entry, rel, is_dir in walk_tree(root):
        entries += 1
        if entry.name == ".git":  # below the root: a repository of its own (the root's pointer is not walked)
            nested.add(rel.rsplit("/", 1)[0])
        if not is_dir:
            with contextlib.suppress(OSError):
                size += entry.stat(follow_symlinks=False).st_size
    return TreeScan(size, entries, sorted(nested))


@dataclass
class ApplyOutcome:
    applied: bool
    message: str
    conflicts: list[str]


class Workspace:
    def __init__(self, repo: git.Repo, run_id: str, limit_bytes: int | None = None):
        self.repo = repo
        self.user_root = Path(repo.working_tree_dir)
        self.run_id = run_id
        self.branch = f"omni/{run_id}"
        self.path = self.user_root / OMNI_DIR / "worktrees" / run_id
        self.seed = ""
        self.limit_bytes = limit_bytes
        self.start_size = 0
        self.left_out: list[str] = []  # nested repositories kept out of the result
        self.keep = False  # leave the worktree in place at the end (its result could not be saved)
        # While host git reads or writes the worktree, nothing else may change it: the sandbox's hold (a paused
        # container) once it runs; before it starts and after it ends, nothing else runs.
        self.hold: Callable[[], AbstractContextManager] = contextlib.nullcontext

    def _git(self, *args: str, cwd: Path | None = None, input: bytes | None = None) -> str:
        # The worktree may belong to the sandbox's uid during a run; it is ours, so git may trust it.
        trust = ["-c", f"safe.directory={self.path}"]
        return hostgit.text(list(args), cwd or self.path, input=input, extra=IDENTITY + trust)

    def create(self) -> Path:
        try:
            head = self.repo.head.commit.hexsha
        except ValueError:
            raise UsageError("the repository has no commits yet; make a first commit, then run omni") from None
        ensure_omni_dir(self.user_root)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._git("worktree", "add", "--quiet", "-b", self.branch, str(self.path), head, cwd=self.user_root)
        # Seed with the user's uncommitted work: tracked changes as a binary patch, untracked files copied.
        patch = hostgit.run(["diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv"], self.user_root).stdout
        if patch.strip():
            self._git("apply", "--binary", "--whitespace=nowarn", "-", input=patch)
        untracked = self._git("ls-files", "--others", "--exclude-standard", "-z", cwd=self.user_root)
        for name in filter(None, untracked.split("\0")):
            if name.startswith(OMNI_DIR + "/") or name.endswith("/"):  # run data; a nested repository
                continue
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.user_root / name, target, follow_symlinks=False)
        for name in self._generated_sources():  # ignored by git, so they stay ignored here: never in the diff
            shutil.copy2(self.user_root / name, self.path / name, follow_symlinks=False)
        self._stage()
        self._git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "omni: starting state")
        self.seed = self._git("rev-parse", "HEAD").strip()
        self.start_size = scan_tree(self.path).cost
        return self.path

    def _generated_sources(self) -> list[str]:
        """The Python files git ignores inside the project's own packages (a folder whose __init__.py git tracks):
        what a build writes and the code imports, such as the _version.py of setuptools-scm or hatch-vcs. Without
        them the package does not import in the worktree, and every test fails before the run begins. Ignored
        folders are listed whole (a virtualenv is one entry), and are not entered."""
        ignored = self._git("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z",
                            cwd=self.user_root)
        names = [n for n in ignored.split("\0") if n.endswith(".py") and not n.startswith(OMNI_DIR + "/")]
        if not names:
            return []
        packages = {os.path.dirname(n) for n in self._git("ls-files", "-z", "--", "*__init__.py",
                                                           cwd=self.user_root).split("\0") if n}
        return [n for n in names if os.path.dirname(n) in packages and (self.path / os.path.dirname(n)).is_dir()
                and (self.user_root / n).is_file() and not (self.user_root / n).is_symlink()
                and (self.user_root / n).stat().st_size <= GENERATED_BYTES]

    def carry(self, patch: bytes, message: str) -> bool:
        """Start from an earlier run's changes too: applied on the starting state as the first commit after it (so
        the run's diff holds them). False, with nothing changed, when they do not apply."""
        with self.hold():
            done = hostgit.run(["apply", "--binary", "--whitespace=nowarn", "-"], self.path, input=patch, check=False,
                               extra=["-c", f"safe.directory={self.path}"])
        if done.returncode != 0:
            return False
        self.checkpoint(message)
        return True

    def _stage(self) -> list[str]:
        """git add everything but .omni/ and nested repositories; return the nested ones new since the
        last call. Refuses (WorkspaceTooLarge) when the tree grew past its limit: nothing is added."""
        with self.hold():
            return self._stage_held()

    def _stage_held(self) -> list[str]:
        scan = scan_tree(self.path)
        grown = scan.cost - self.start_size
        if self.seed and self.limit_bytes is not None and grown >= self.limit_bytes:
            raise WorkspaceTooLarge(
                f"the workspace grew by {grown // 2**20} MiB (its bytes, and {ENTRY_BYTES // 1024} KiB for each file "
                f"or folder), past its limit of {self.limit_bytes // 2**20} MiB (--max-workspace-mb); the run was "
                "stopped and nothing it wrote was saved")
        keep_out = [OMNI_DIR, *scan.nested_repos]
        self._git("add", "-A", "--", ".", *[f":(exclude,literal){p}" for p in keep_out])
        new = [p for p in scan.nested_repos if p not in self.left_out]
        if new:  # files of it staged before it became a repository: out of the index too
            self._git("rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--", *[f":(literal){p}" for p in new])
            self.left_out += new
        return new

    def _commit_staged(self, message: str) -> bool:
        staged = hostgit.run(["diff", "--cached", "--quiet"], self.path, check=False,
                             extra=["-c", f"safe.directory={self.path}"]).returncode
        if staged == 0:
            return False
        self._git("commit", "--quiet", "--no-verify", "-m", message)
        return True

    def snapshot(self, message: str) -> bytes:
        """Commit the agent's changes on the run branch; return the diff from the starting state, as bytes: a
        file that is not UTF-8 must reach the user's tree byte for byte."""
        self._stage()
        self._commit_staged(message)
        return hostgit.run(["diff", "--binary", "--no-ext-diff", "--no-textconv", self.seed, "HEAD"], self.path,
                           extra=IDENTITY + ["-c", f"safe.directory={self.path}"]).stdout

    def checkpoint(self, label: str) -> list[str]:
        """Commit the files changed by one step, so /undo can take that step back. Returns the nested
        repositories first seen in this step (kept out of the result)."""
        new = self._stage()
        self._commit_staged(f"omni step: {label[:70]}")
        return new

    def undo_last(self) -> str:
        """Take back the last step that changed files (never past the starting state)."""
        self.checkpoint("uncommitted changes")
        head = self._git("rev-parse", "HEAD").strip()
        if head == self.seed:
            return "nothing to undo: no step has changed files yet"
        subject = self._git("log", "-1", "--format=%s").strip()
        files = self._git("diff", "--name-only", "--no-ext-diff", "HEAD~1", "HEAD").split()
        with self.hold():  # git writes the worktree: no folder may turn into a link under it
            self._git("reset", "--quiet", "--hard", "HEAD~1")
        return f"undid {subject!r} ({', '.join(files)})"

    def diff_so_far(self) -> str:
        self._stage()
        return self._git("diff", "--cached", "--stat", "--patch", "--no-ext-diff", "--no-textconv", self.seed)

    def changed_files(self) -> list[str]:
        return [f for f in self._git("diff", "--name-only", self.seed, "HEAD").splitlines() if f]

    def numstat(self) -> list[tuple[str, str, str]]:
        """(path, added, removed) of every file the run changed; a rename is its two paths, each named whole."""
        rows = []
        out = self._git("diff", "--numstat", "-z", "--no-renames", "--no-textconv", self.seed, "HEAD")
        for entry in filter(None, out.split("\0")):
            added, removed, name = entry.split("\t", 2)
            rows.append((name, added, removed))
        return rows

    def links(self) -> list[tuple[str, str]]:
        """(path, target) of every symbolic link the run added or changed."""
        out = hostgit.run(["diff", "--raw", "-z", "--no-renames", "--no-abbrev", self.seed, "HEAD"], self.path,
                          extra=["-c", f"safe.directory={self.path}"]).stdout.split(b"\0")
        found = []
        for meta, name in zip(out[0::2], out[1::2], strict=False):
            fields = meta.decode().lstrip(":").split()
            if len(fields) >= 4 and fields[1] == "120000":
                target = hostgit.run(["cat-file", "blob", fields[3]], self.path).stdout
                found.append((os.fsdecode(name), os.fsdecode(target)))
        return found

    def remove(self, drop_branch: bool = False) -> None:
        """Drop the worktree folder; the branch keeps the result (unless drop_branch: a run that changed
        nothing leaves no branch behind)."""
        if self.path.exists():
            self._git("worktree", "remove", "--force", str(self.path), cwd=self.user_root)
        if drop_branch:
            self._git("branch", "--quiet", "-D", self.branch, cwd=self.user_root)
            self.branch = ""


def _blob_hash(path: Path) -> str | None:
    if not os.path.lexists(path):
        return None
    if path.is_symlink():
        data = os.readlink(path).encode()
    else:
        data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def apply_to_user_tree(user_root: Path, expected: str, patch: bytes, files: list[str],
                       reverse: bool = False, patch_path: str = "diff.patch") -> ApplyOutcome:
    """Apply (or with reverse, take back) a run's diff in the user's working tree, only if every file
    it touches is exactly as at `expected` (the starting state; for reverse, the run's result)."""
    verb = "undo" if reverse else "apply"
    if not patch.strip():
        return ApplyOutcome(False, f"the run changed nothing; nothing to {verb}", [])
    inside = [name for name in files if name == OMNI_DIR or name.startswith(OMNI_DIR + "/")]
    if inside:  # a run's own diff never has these: the record was edited by hand or by something else
        return ApplyOutcome(False, f"the diff touches omni's own folder ({', '.join(inside)}); omni never "
                            f"applies that, so nothing was done", inside)
    conflicts = []
    for name in files:
        blob = hostgit.text(["rev-parse", "--verify", "--quiet", f"{expected}:{name}"], user_root,
                            check=False).strip() or None
        if _blob_hash(user_root / name) != blob:
            conflicts.append(name)
    if conflicts:
        when = "since the run was applied" if reverse else "since the run started"
        return ApplyOutcome(False, f"these files changed {when}, so nothing was done: " + ", ".join(conflicts)
                            + f". To {verb} by hand: git apply {'-R ' if reverse else ''}--3way {patch_path}",
                            conflicts)
    done = hostgit.run(["apply", "--binary", "--whitespace=nowarn", *(["-R"] if reverse else []), "-"],
                       user_root, input=patch, check=False)
    if done.returncode != 0:
        return ApplyOutcome(False, f"git apply refused the patch: {done.stderr.decode(errors='replace')}", [])
    return ApplyOutcome(True, f"{'undid' if reverse else 'applied'} changes to {len(files)} file(s)", [])
