"""Where Aider's files come from in a session (`/aider TEXT`): the paths the session's goals and plans name (the
user's and the planner's words, never a tool's output), then the files its runs changed, newest first."""

from __future__ import annotations

import re

PATH = re.compile(r"(?<![\w/.-])([\w-]+(?:/[\w.-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
KEPT = 12


def paths_in(text: str) -> list[str]:
    """Relative file paths a text names (a.py, src/pkg/mod.py, docs/index.md), in order, once each."""
    return list(dict.fromkeys(m.group(1) for m in PATH.finditer(text) if not m.group(1).startswith(("http", "www."))))


def session_hints(texts: list[str], touched: list[str]) -> list[str]:
    """Newest first: the paths of the session's latest texts, then the files its latest runs changed."""
    named = [p for text in reversed(texts) for p in paths_in(text)]
    return list(dict.fromkeys([*named, *reversed(touched)]))[:KEPT]
