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


def discard_typed_ahead() -> None:
    """Drop what was typed while omni worked: a goal typed ahead must not become the answer to a question."""
    if sys.stdin.isatty():
        import termios

        try:
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
        except (termios.error, OSError):
            pass


def ask_choice(console: Console, markup: str, answers: dict[str, str], default: str) -> str:
    """A question with a few answers (answers: each word the user may type -> what it means). Input typed ahead is
    discarded first; an empty line (or the end of input) is the default; anything else asks again."""
    discard_typed_ahead()
    words = "/".join(dict.fromkeys(k for k in answers if len(k) == 1))
    while True:
        try:
            said = console.input(markup).strip().lower()
        except EOFError:
            return default
        if not said:
            return default
        if said in answers:
            return answers[said]
        console.print(f"Please answer {words}.")


def show_paged(console: Console, text: str) -> None:
    """Long text through the user's pager on a terminal ($PAGER, else less), plainly otherwise; control and escape
    characters written out, no markup read."""
    from omni.visible import visible

    if console.is_terminal:
        with console.pager(styles=False):
            console.print(visible(text), markup=False, highlight=False)
    else:
        console.print(visible(text), markup=False, highlight=False)
