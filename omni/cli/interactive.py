"""`omni` with no goal: give goals one after another in the same repo, with /plan, /diff, /undo,
/runs and /quit. Each goal's outcome is carried into the next goal's context."""

from __future__ import annotations

import argparse

from omni.cli import commands
from omni.errors import OmniError
from omni.run.session import RunRequest, run_goal
from omni.settings import Settings
from omni.visible import safe

HELP = """Type a goal and press Enter. Commands:
  /plan GOAL   show a plan for GOAL without acting      /diff   the last run's diff
  /undo        undo the last applied run                 /runs   past runs
  /quit        leave (Ctrl-D too)"""


# Words that are clearly meant for the session (or a shell), never a goal: a run is not started for them.
LEAVE = {"quit", "exit", "q", "bye"}
HELP_WORDS = {"help", "?", "h"}
CLEAR = {"clear", "cls"}
SHELL_WORDS = {"ls", "cd", "pwd", "dir", "cat", "vim", "vi", "git", "history", "whoami", "echo"}


def session(settings: Settings, args: argparse.Namespace) -> int:
    from rich.console import Console

    from omni.run.lineinput import read_line

    console = Console(highlight=False)
    console.print(f"[bold]omni[/] interactive session. {HELP}")
    history: list[str] = []
    last_run = ""
    code = 0
    while True:
        try:
            console.print()
            line = read_line(console, "[bold cyan]omni>[/] ", "session").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return code
        if not line:
            continue
        word = line.lower().lstrip("/")
        if line in ("/quit", "/exit") or word in LEAVE:
            return code
        if line == "/help" or word in HELP_WORDS:
            console.print(HELP)
            continue
        if word in CLEAR:
            console.clear()
            continue
        if word.split()[0] in SHELL_WORDS and len(word.split()) <= 2:
            console.print(f"{safe(line)} looks like a shell command, not a goal: omni runs goals in its sandbox. "
                          "Say what to do in words, or /help.")
            continue
        repo_args = ["--repo", str(args.repo)] if args.repo else []
        try:
            if line == "/runs":
                commands.main(["runs", *repo_args])
            elif line in ("/diff", "/undo"):
                if not last_run:
                    console.print("no run in this session yet")
                else:
                    commands.main([line[1:], last_run, *repo_args])
            elif line.startswith("/plan"):
                goal = line[len("/plan"):].strip()
                if not goal:
                    console.print("usage: /plan GOAL")
                    continue
                run_goal(RunRequest(goal, settings, args.repo, plan_only=True, history=history))
            elif line.startswith("/"):
                console.print(f"unknown command {safe(line)}; /help lists them")
            else:
                code, summary = run_goal(RunRequest(line, settings, args.repo, history=history))
                last_run = summary["run_id"]
                history.append(f"- {line} -> {summary['status']}"
                               f"{': ' + summary['message'][:200] if summary['message'] else ''}")
        except OmniError as exc:
            console.print(f"[red]omni: {safe(exc)}[/]")
            code = exc.exit_code
