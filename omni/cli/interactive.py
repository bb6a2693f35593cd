"""`omni` with no goal: give goals one after another in the same repo, with /plan, /diff, /undo,
/runs and /quit. Each goal's outcome is carried into the next goal's context."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from omni.cli import commands
from omni.errors import OmniError
from omni.delegate.hints import session_hints
from omni.run.frame import Delegation
from omni.run.session import RunRequest, run_goal
from omni.settings import Settings
from omni.visible import safe

HELP = """Type a goal and press Enter. Commands:
  /plan GOAL   show a plan for GOAL without acting      /diff   the last run's diff
  /undo        undo the last applied run                 /runs   past runs
  /aider TEXT  Aider makes the change (in the sandbox)   /aider  Aider on this terminal (/exit returns)
  /quit        leave (Ctrl-D too)"""


# Words that are clearly meant for the session (or a shell), never a goal: a run is not started for them.
LEAVE = {"quit", "exit", "q", "bye"}
HELP_WORDS = {"help", "?", "h"}
CLEAR = {"clear", "cls"}
SHELL_WORDS = {"ls", "cd", "pwd", "dir", "cat", "vim", "vi", "git", "history", "whoami", "echo"}


@dataclass
class Memory:
    """What the session remembers of its runs: the history each goal gets, the goals' and plans' words and the
    files the runs changed (where /aider's files come from), and the last run (/diff, /undo)."""

    history: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    last_run: str = ""

    def run(self, line: str, settings: Settings, repo) -> int:
        """A goal, or /aider [TEXT] (the change is Aider's: automatic with TEXT, on the terminal without)."""
        delegation = None
        goal = line
        if line == "/aider" or line.startswith("/aider "):
            text = line[len("/aider"):].strip()
            delegation = Delegation(text, interactive=not text, hints=session_hints(self.said, self.touched))
            goal = text or "the changes the user makes in an interactive Aider session"
        code, summary = run_goal(RunRequest(goal, settings, repo, history=self.history, delegate=delegation))
        self.last_run = summary["run_id"]
        self.touched += [c["path"] for c in summary.get("changed_files") or []]
        self.said += [goal, "\n".join(str(step.get("text", "")) for step in summary.get("plan") or [])]
        self.history.append(f"- {line} -> {summary['status']}"
                            f"{': ' + summary['message'][:200] if summary['message'] else ''}")
        return code


def session(settings: Settings, args: argparse.Namespace) -> int:
    from rich.console import Console

    from omni.run.lineinput import read_line

    console = Console(highlight=False)
    console.print(f"[bold]omni[/] interactive session. {HELP}")
    memory = Memory()
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
                if not memory.last_run:
                    console.print("no run in this session yet")
                else:
                    commands.main([line[1:], memory.last_run, *repo_args])
            elif line.startswith("/plan"):
                goal = line[len("/plan"):].strip()
                if not goal:
                    console.print("usage: /plan GOAL")
                    continue
                run_goal(RunRequest(goal, settings, args.repo, plan_only=True, history=memory.history))
            elif line == "/aider" or line.startswith("/aider ") or not line.startswith("/"):
                code = memory.run(line, settings, args.repo)
            else:
                console.print(f"unknown command {safe(line)}; /help lists them")
        except OmniError as exc:
            console.print(f"[red]omni: {safe(exc)}[/]")
            code = exc.exit_code
