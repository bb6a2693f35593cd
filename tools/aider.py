"""Aider, run in the sandbox on the worktree: one instruction in automatic mode (aider_edit), or the model relay
while the user works in an interactive Aider attached to the terminal (aider_session).

Aider has no network here. It reaches the model through a relay on 127.0.0.1 inside the container, which hands
each request to the host over the tool channel (Context.ask_host); the host forwards chat completions to the run's
endpoint with the key it holds, and refuses the rest (omni/model/relay.py). The key never enters the container.

What Aider changed is found by comparing the worktree before and after, so the result says it whatever Aider
printed; a Python file it left with a new syntax or fatal lint error rolls the whole edit back (the edit gate of
tools/edits.py). Aider's own state files (.aider*) are removed; its histories go to /tmp. The host half of
aider_edit (hints, the model, Aider's settings) is omni/delegate/aider.py.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import runner
from context import BUDGET, Context, result
from edits import new_fatal_errors
from files import find_definitions
from workspace import ToolError, resolve, write_atomic

AIDER = os.environ.get("OMNI_AIDER", "/opt/aider/bin/aider")  # its own venv in the image (--with-aider)
SKIPPED = {".git", "__pycache__", "node_modules", ".omni", ".venv", ".tox", ".mypy_cache", ".pytest_cache"}
KEPT_BYTES = 512 * 1024  # a file up to this size is kept before the edit, for its diff and a rollback
KEPT_TOTAL = 64 * 2**20
MAX_FILES = 6  # files picked for Aider when none are given
MAX_BODY = 16 * 2**20  # bytes of one request through the relay
RELAY_WAIT = 900.0  # seconds one request may wait for the host (a slow local model)
_NAMES = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PATHS = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,8}\b")


# ---- the relay -------------------------------------------------------------------------------------
class Relay:
    """An HTTP listener on 127.0.0.1 in the container; each request goes to the host as one question."""

    def __init__(self, ctx: Context, port: int = 0):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # here: the server starts without it

        if ctx.ask_host is None:
            raise ToolError("no host to relay model requests to (this tool server was not started by omni)",
                            "sandbox_error")
        ask, cancelled = ctx.ask_host, ctx.cancelled
        self.count = 0
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                if size > MAX_BODY:
                    self._answer({"status": 413, "content_type": "text/plain", "body": "request too large"})
                    return
                body = self.rfile.read(size).decode("utf-8", "replace") if size else ""
                relay.count += 1
                self._answer(ask({"method": self.command, "path": self.path, "body": body}, RELAY_WAIT, cancelled))

            def _answer(self, answer: dict) -> None:
                data = str(answer.get("body", "")).encode("utf-8")
                self.send_response(int(answer.get("status") or 502))
                self.send_header("Content-Type", str(answer.get("content_type") or "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

            def log_message(self, *args) -> None:  # nothing of it on stderr
                pass

        try:
            self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as exc:
            raise ToolError(f"the model relay cannot listen on port {port}: {exc}", "sandbox_error") from None
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def aider_env(ctx: Context, port: int, term: str = "dumb") -> dict[str, str]:
    """Aider's environment: the relay as its OpenAI endpoint, a placeholder key, no network lookups."""
    env = ctx.env()
    home = "/tmp/omni-aider-home"
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, ".gitconfig"), "w", encoding="utf-8") as handle:  # else Aider writes the repo's
        handle.write("[user]\n\tname = omni (Aider)\n\temail = aider@omni.invalid\n")
    env.update({"HOME": home, "OPENAI_API_BASE": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "omni-relay",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_ANALYTICS": "false", "AIDER_CHECK_UPDATE": "false",
                "TERM": term})
    env.pop("PYTHONPATH", None)  # Aider's own venv, not the project's tree
    return env


def aider_argv(model: str, edit_format: str, map_tokens: int) -> list[str]:
    """Aider as omni runs it: no commits, no shell commands, no lint or test runs of its own (omni's gate checks),
    no URL scraping, no update check or analytics, histories outside the worktree."""
    return [AIDER, "--model", f"openai/{model}", "--edit-format", edit_format, "--map-tokens", str(map_tokens),
            "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-suggest-shell-commands",
            "--no-detect-urls", "--no-auto-lint", "--no-auto-test", "--no-check-update", "--analytics-disable",
            "--no-show-model-warnings", "--no-show-release-notes", "--chat-history-file",
            "/tmp/omni-aider-home/chat.md", "--input-history-file", "/tmp/omni-aider-home/input",
            "--llm-history-file", "/tmp/omni-aider-home/llm.txt"]


# ---- which files Aider gets ---------------------------------------------------------------------------
def _is_file(root: Path, rel: str) -> bool:
    try:
        return resolve(root, rel).is_file()
    except ToolError:
        return False


def _defining(ctx: Context, names: set[str], limit: int) -> list[str]:
    """Python files that define one of the names (def or class), in the order find_definitions finds them."""
    if not names:
        return []
    found = find_definitions(ctx, names=sorted(names), kinds=["def", "class"])["details"]["found"]
    return list(dict.fromkeys(hit["path"] for hit in found))[:limit]


def pick_files(ctx: Context, instruction: str, files: list[str] | None, hints: list[str]) -> tuple[list[str], str]:
    """(the files Aider gets, how they were picked): those given; else the paths the instruction names; else the
    files that define a name it uses (def or class); else the host's hints (the files of recent steps, the
    briefing's, the session's)."""
    root = ctx.root
    if files:
        for rel in files:
            resolve(root, rel, must_exist=False)  # inside the worktree (a new file may be named)
        return list(dict.fromkeys(files)), "given"
    named = [p[2:] if p.startswith("./") else p for p in _PATHS.findall(instruction)]
    named = [p for p in dict.fromkeys(named) if _is_file(root, p)]
    if named:
        return named[:MAX_FILES], "named in the instruction"
    defining = _defining(ctx, set(_NAMES.findall(instruction)), MAX_FILES)
    if defining:
        return defining, "defining a name the instruction uses"
    hinted = [p for p in dict.fromkeys(hints) if _is_file(root, p)]
    if hinted:
        return hinted[:MAX_FILES], "from the run's briefing and recent steps"
    return [], "none (Aider chose from its repository map)"


# ---- before and after ---------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, tuple]:
    """{path: (size, mtime_ns, text or None)} of every file under root (links as their targets), no link followed."""
    seen, kept = {}, 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED]
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            try:
                info = os.lstat(path)
                if os.path.islink(path):
                    seen[rel] = (0, info.st_mtime_ns, "-> " + os.readlink(path))
                    continue
                text = None
                if info.st_size <= KEPT_BYTES and kept + info.st_size <= KEPT_TOTAL:
                    with open(path, "rb") as handle:
                        text = handle.read().decode("utf-8", "surrogateescape")
                    kept += info.st_size
                seen[rel] = (info.st_size, info.st_mtime_ns, text)
            except OSError:
                continue
    return seen


def _changed(before: dict, after: dict) -> list[str]:
    """Paths added, removed, or whose stat and (where kept) text differ."""
    def differs(rel: str) -> bool:
        old, new = before.get(rel), after.get(rel)
        if old is None or new is None:
            return True
        return old[:2] != new[:2] and (old[2] is None or old[2] != new[2])

    return sorted(rel for rel in set(before) | set(after) if differs(rel))


def _diff(rel: str, old: str | None, new: str | None) -> tuple[str, int, int]:
    lines = list(difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                      f"a/{rel}" if old is not None else "/dev/null",
                                      f"b/{rel}" if new is not None else "/dev/null"))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines), added, removed


def _own_state(root: Path, before: dict) -> None:
    """Aider's state in the worktree (its tags cache, any .aider* file it made) goes: it is not the user's."""
    for entry in os.listdir(root):
        if entry.startswith(".aider") and not any(rel.split(os.sep)[0] == entry for rel in before):
            path = root / entry
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() and not path.is_symlink() else path.unlink()


def _new_errors(ctx: Context, root: Path, changed: list[str], before: dict, after: dict) -> list[str]:
    """The edit gate: new syntax or fatal lint errors in the Python files Aider changed."""
    problems = []
    for rel in changed:
        new = after.get(rel, (0, 0, None))[2]
        if not rel.endswith(".py") or new is None or new.startswith("-> "):
            continue
        for item in new_fatal_errors(ctx, before.get(rel, (0, 0, ""))[2] or "", new, rel):
            problems.append(f"{rel}:{item['location']['row']}: {item.get('code') or 'syntax error'} {item['message']}")
    return problems


def _roll_back(root: Path, changed: list[str], before: dict) -> None:
    for rel in changed:
        old = before.get(rel)
        target = root / rel
        if old is None:
            if target.is_symlink() or target.is_file():
                target.unlink()
        elif old[2] is not None and not old[2].startswith("-> "):
            write_atomic(resolve(root, rel, must_exist=False), old[2])


# ---- the two modes ---------------------------------------------------------------------------------
NOT_INSTALLED = ("Aider is not in this sandbox image; build it with `omni sandbox build --with-aider` (or run with "
                 "--aider, which builds it once)")


def outcome(ctx: Context, before: dict, said: str, stopped: str, **base) -> dict:
    """What Aider did to the worktree since `before`, as the result: rolled back when it was stopped (`stopped`
    says why) or would add new errors; a failure when it changed nothing."""
    root = ctx.root
    _own_state(root, before)
    after = snapshot(root)
    changed = _changed(before, after)
    base["summary"] = said[-4000:]
    if stopped:
        _roll_back(root, changed, before)
        return result(False, failure="command_failed", error=f"Aider {stopped}; its changes were rolled back", **base)
    if not changed:
        return result(False, failure="edit_failed", error=f"Aider changed nothing. What it said:\n{said[-3000:]}",
                      unchanged=True, **base)
    problems = _new_errors(ctx, root, changed, before, after)
    if problems:
        _roll_back(root, changed, before)
        return result(False, failure="lint_failed", error="Aider's edit was rolled back: it would add new errors:\n"
                      + "\n".join(problems[:5]), new_errors=len(problems), **base)
    diffs = [(rel, *_diff(rel, before.get(rel, (0, 0, None))[2], after.get(rel, (0, 0, None))[2])) for rel in changed]
    lines = [f"{rel} +{added} -{removed}" for rel, _, added, removed in diffs]
    diff = "".join(text for _, text, _, _ in diffs)
    given = ", ".join(base.get("files") or []) or "none"
    return result(True, f"Aider changed {len(changed)} file(s) (files given to it: {given}; {base.get('picked_by')}):\n"
                  + "\n".join(lines) + f"\n\n{diff}" + (f"\nAider said:\n{said[-1500:]}" if said else ""),
                  changed=[{"path": rel, "added": a, "removed": r} for rel, _, a, r in diffs], diff=diff, **base)


def aider_edit(ctx: Context, instruction: str = "", files: list[str] | None = None, hints: list[str] | None = None,
               model: str = "omni", edit_format: str = "diff", map_tokens: int = 1024, timeout: int = 300,
               port: int | None = None) -> dict:
    """The sandbox half of aider_edit (tools/specs.py): Aider in automatic mode, one instruction on the picked
    files with the relay to the model; with a port, the relay for Aider on the terminal (aider_session). What
    changed, either way."""
    if port is not None:
        return aider_session(ctx, port, files, timeout)
    if not os.path.exists(AIDER):
        return result(False, failure="tool_error", error=NOT_INSTALLED)
    chosen, picked_by = pick_files(ctx, instruction, files, hints or [])
    before = snapshot(ctx.root)
    relay = Relay(ctx)
    try:
        argv = [*aider_argv(model, edit_format, map_tokens), "--no-stream", "--no-pretty", "--no-fancy-input",
                "--yes-always", "--message", instruction, *chosen]
        ran = runner.run(argv, str(ctx.root), timeout, env=aider_env(ctx, relay.port), cap=256 * 1024,
                         cancelled=ctx.cancelled, watch=BUDGET.over if BUDGET.limit else None)
    finally:
        relay.close()
    stopped = ""
    if ran.timed_out or ran.cancelled or ran.killed_by:
        stopped = {"timeout": f"did not finish within {timeout}s", "cancel": "was interrupted"}.get(
            ran.killed_by or "", ran.watch_note or "was stopped")
    return outcome(ctx, before, ran.output.strip(), stopped, files=chosen, picked_by=picked_by,
                   requests=relay.count)


def aider_session(ctx: Context, port: int, files: list[str] | None = None, timeout: int = 86400) -> dict:
    """The host side of an interactive Aider on the terminal (started apart, with `aider.py --interactive`): the
    relay on `port` until the host cancels this call when Aider exits; then what changed, as automatic mode says it."""
    if not os.path.exists(AIDER):
        return result(False, failure="tool_error", error=NOT_INSTALLED)
    before = snapshot(ctx.root)
    relay = Relay(ctx, port)
    deadline = time.monotonic() + timeout
    try:
        while not ctx.cancelled() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        relay.close()
    return outcome(ctx, before, "", "", files=files or [], picked_by="the user's session", requests=relay.count)


def main() -> None:
    """`aider.py --interactive PORT MODEL FORMAT MAP_TOKENS [FILE...]`: become Aider on the terminal, with the
    relay that aider_session serves as its endpoint."""
    if len(sys.argv) < 6 or sys.argv[1] != "--interactive":
        sys.exit("usage: aider.py --interactive PORT MODEL EDIT_FORMAT MAP_TOKENS [FILE...]")
    if not os.path.exists(AIDER):
        sys.exit(NOT_INSTALLED)
    port, model, edit_format, map_tokens, files = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:]
    env = aider_env(Context(root=Path.cwd()), int(port), os.environ.get("OMNI_TERM") or "xterm")
    os.execve(AIDER, [*aider_argv(model, edit_format, map_tokens), *files], env)


if __name__ == "__main__":
    main()
