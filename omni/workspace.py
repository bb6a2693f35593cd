"""The agent's isolated copy of the repo: a git worktree on branch omni/<run-id>, seeded with the
user's uncommitted and untracked files. The user's working tree, index and history are only read,
until the user agrees to apply the result."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import git

from omni.errors import UsageError

IDENTITY = ["-c", "user.name=omni", "-c", "user.email=omni@localhost", "-c", "commit.gpgsign=false"]


def find_repo(path: Path) -> git.Repo:
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(f"{path} is not inside a git repository; run omni in a repo, or pass --repo PATH") from None
    if repo.bare:
        raise UsageError(f"{path} is a bare repository; omni needs a working tree")
    return repo


def ensure_omni_dir(root: Path) -> Path:
    """<repo>/.omni, ignored by git through its own .gitignore (the user's files are not touched)."""
    folder = root / ".omni"
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# omni's run records and worktrees; not part of the project\n*\n")
    return folder


@dataclass
class ApplyOutcome:
    applied: bool
    message: str
    conflicts: list[str]


class Workspace:
    def __init__(self, repo: git.Repo, run_id: str):
        self.repo = repo
        self.user_root = Path(repo.working_tree_dir)
        self.run_id = run_id
        self.branch = f"omni/{run_id}"
        self.path = self.user_root / ".omni" / "worktrees" / run_id
        self.seed = ""

    def _git(self, *args: str, cwd: Path | None = None, input: bytes | None = None) -> str:
        # The worktree may belong to the sandbox's uid during a run; it is ours, so git may trust it.
        trust = ["-c", f"safe.directory={self.path}"]
        done = subprocess.run(["git", *IDENTITY, *trust, *args], cwd=cwd or self.path, input=input,
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode("utf-8", "replace")

    def create(self) -> Path:
        try:
            head = self.repo.head.commit.hexsha
        except ValueError:
            raise UsageError("the repository has no commits yet; make a first commit, then run omni") from None
        ensure_omni_dir(self.user_root)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._git("worktree", "add", "--quiet", "-b", self.branch, str(self.path), head, cwd=self.user_root)
        # Seed with the user's uncommitted work: tracked changes as a binary patch, untracked files copied.
        patch = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=self.user_root,
                               capture_output=True, check=True).stdout
        if patch.strip():
            self._git("apply", "--binary", "--whitespace=nowarn", "-", input=patch)
        untracked = self._git("ls-files", "--others", "--exclude-standard", "-z", cwd=self.user_root)
        for name in filter(None, untracked.split("\0")):
            if name.startswith(".omni/"):
                continue
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.user_root / name, target, follow_symlinks=False)
        self._git("add", "-A")
        self._git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "omni: starting state")
        self.seed = self._git("rev-parse", "HEAD").strip()
        return self.path

    def snapshot(self, message: str) -> str:
        """Commit the agent's changes on the run branch; return the diff from the starting state."""
        self._git("add", "-A")
        if self._git("status", "--porcelain").strip():
            self._git("commit", "--quiet", "--no-verify", "-m", message)
        return self._git("diff", "--binary", self.seed, "HEAD")

    def checkpoint(self, label: str) -> bool:
        """Commit the files changed by one step, so /undo can take that step back."""
        self._git("add", "-A")
        if not self._git("status", "--porcelain").strip():
            return False
        self._git("commit", "--quiet", "--no-verify", "-m", f"omni step: {label[:70]}")
        return True

    def undo_last(self) -> str:
        """Take back the last step that changed files (never past the starting state)."""
        self.checkpoint("uncommitted changes")
        head = self._git("rev-parse", "HEAD").strip()
        if head == self.seed:
            return "nothing to undo: no step has changed files yet"
        subject = self._git("log", "-1", "--format=%s").strip()
        files = self._git("diff", "--name-only", "HEAD~1", "HEAD").split()
        self._git("reset", "--quiet", "--hard", "HEAD~1")
        return f"undid {subject!r} ({', '.join(files)})"

    def diff_so_far(self) -> str:
        self._git("add", "-A")
        return self._git("diff", "--cached", "--stat", "--patch", self.seed)

    def changed_files(self) -> list[str]:
        return [f for f in self._git("diff", "--name-only", self.seed, "HEAD").splitlines() if f]

    def numstat(self) -> list[tuple[str, str, str]]:
        rows = []
        for line in self._git("diff", "--numstat", self.seed, "HEAD").splitlines():
            added, removed, name = line.split("\t", 2)
            rows.append((name, added, removed))
        return rows

    def remove(self) -> None:
        """Drop the worktree folder; the branch keeps the result."""
        if self.path.exists():
            self._git("worktree", "remove", "--force", str(self.path), cwd=self.user_root)


def _blob_hash(path: Path) -> str | None:
    if not os.path.lexists(path):
        return None
    if path.is_symlink():
        data = os.readlink(path).encode()
    else:
        data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def apply_to_user_tree(user_root: Path, expected: str, patch: str, files: list[str],
                       reverse: bool = False) -> ApplyOutcome:
    """Apply (or with reverse, take back) a run's diff in the user's working tree, only if every file
    it touches is exactly as at `expected` (the starting state; for reverse, the run's result)."""
    verb = "undo" if reverse else "apply"
    if not patch.strip():
        return ApplyOutcome(False, f"the run changed nothing; nothing to {verb}", [])
    conflicts = []
    for name in files:
        blob = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{expected}:{name}"], cwd=user_root,
                              capture_output=True, text=True, check=False).stdout.strip() or None
        if _blob_hash(user_root / name) != blob:
            conflicts.append(name)
    if conflicts:
        when = "since the run was applied" if reverse else "since the run started"
        return ApplyOutcome(False, f"these files changed {when}, so nothing was done: " + ", ".join(conflicts)
                            + f". To {verb} by hand: git apply {'-R ' if reverse else ''}--3way DIFF.patch",
                            conflicts)
    done = subprocess.run(["git", "apply", "--binary", "--whitespace=nowarn", *(["-R"] if reverse else []), "-"],
                          cwd=user_root, input=patch.encode(), capture_output=True, check=False)
    if done.returncode != 0:
        return ApplyOutcome(False, f"git apply refused the patch: {done.stderr.decode(errors='replace')}", [])
    return ApplyOutcome(True, f"{'undid' if reverse else 'applied'} changes to {len(files)} file(s)", [])
