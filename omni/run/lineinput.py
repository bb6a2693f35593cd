"""One line typed by the user, with line editing (arrow keys, Ctrl-R) and a history kept across runs in
the user's data folder: prompt_toolkit on a terminal, plain input() otherwise (a pipe, a test)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console

_sessions: dict[str, object] = {}


def history_path(name: str) -> Path:
    """<user data dir>/omni/history/<name> (XDG_DATA_HOME is honoured on Linux)."""
    from platformdirs import user_data_dir

    folder = Path(user_data_dir("omni", appauthor=False)) / "history"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def read_line(console: Console, markup: str, history: str) -> str:
    """Ask with a rich-markup prompt; the answer joins the history file `history` (pause, session, answer)."""
    if not (sys.stdin.isatty() and console.is_terminal):
        return console.input(markup)
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.history import FileHistory

    os.environ.setdefault("PROMPT_TOOLKIT_NO_CPR", "1")  # no cursor-position query: some terminals never answer
    with console.capture() as captured:
        console.print(markup, end="")
    if history not in _sessions:
        _sessions[history] = PromptSession(history=FileHistory(str(history_path(history))))
    return _sessions[history].prompt(ANSI(captured.get()))
