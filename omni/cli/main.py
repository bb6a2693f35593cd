"""omni's command line: `omni "<goal>"` runs the agent; `omni` alone opens a session; subcommands
manage the sandbox, the configuration and past runs."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from omni import __version__
from omni.cli.options import add_goal_options, add_run_options, check_limits, settings_for
from omni.cli.parsing import Parser
from omni.errors import EXIT_CODES, ForceQuit, OmniError, UsageError
from omni.visible import visible

SUBCOMMANDS = ("sandbox", "runs", "show", "diff", "apply", "undo", "config", "trust", "plan", "run", "batch",
               "completion")
EPILOG = """subcommands:
  omni sandbox build|clean    build the sandbox image (--offline-base: without a registry) / remove stale ones
  omni sandbox project        build this repository's layer of dependencies now (a run builds it otherwise)
  omni config                 the effective configuration and where each value comes from
  omni trust                  allow this repo's .omni/config.toml (its current content) to weaken isolation
  omni runs [--prune]         past runs, newest first (--prune: drop branches of runs never applied)
  omni show|diff|apply|undo [RUN]   one run: its id, a prefix, or `last` (the default)
  omni plan GOAL --spec F     write a YAML task spec;  omni run F   execute one
  omni batch TASKS            many goals, each on a fresh clone (--workers N here, --ray on a cluster)
  omni completion bash|zsh|fish     a shell completion script

exit codes: 0 finished, 1 failed or flagged, 2 usage or configuration error, 3 a limit was reached,
130 interrupted."""


def run_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="omni", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="A coding agent for the terminal. It plans, acts one tool call at a time in a Docker "
        "sandbox on an isolated copy of your repo, corrects itself, and shows you the diff.")
    p.add_argument("goal", nargs="?", help="what to do, in plain words ('-' reads it from stdin); "
                   "none opens an interactive session")
    add_goal_options(p, f"omni {__version__}")
    add_run_options(p)
    return p


def read_goal(args, earlier_goal: str = "") -> str:
    """The goal from the argument, stdin (-) or --goal-file; with --last or --resume and none given, the earlier
    run's own goal."""
    if args.goal_file:
        try:
            goal = args.goal_file.read_text()
        except OSError as exc:
            raise UsageError(f"cannot read the goal file {args.goal_file}: {exc.strerror}") from None
    elif args.goal == "-":
        goal = sys.stdin.read()
    else:
        goal = args.goal or ""
    goal = goal.strip() or earlier_goal
    if not goal:
        raise UsageError("the goal is empty: say what to do, e.g. omni \"make the tests in tests/ pass\"")
    return goal


def _subcommand_typo(goal: str) -> str | None:
    """The subcommand a one-word goal was meant to be (`omni shwo`), if it is that close to one."""
    import difflib

    if " " in goal or not goal.isalpha():
        return None
    close = difflib.get_close_matches(goal.lower(), SUBCOMMANDS, n=1, cutoff=0.75)
    return close[0] if close else None


def _reads_as_a_goal(argv: list[str]) -> bool:
    """Whether words that start with `run` or `plan` are a goal, not the subcommand: plain words only (no flag),
    and for `run` the first is no spec file that exists (`omni run task.yaml` runs a spec)."""
    if len(argv) < 2 or argv[0] not in ("run", "plan") or any(a.startswith("-") for a in argv):
        return False
    return argv[0] == "plan" or not (Path(argv[1]).exists() or argv[1].endswith((".yaml", ".yml", ".json")))


def _on_sigterm(signum, frame) -> None:
    raise ForceQuit()  # like a second Ctrl-C: the record is saved and the sandbox removed on the way out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if _reads_as_a_goal(argv):
            argv = [" ".join(argv)]  # `omni run the tests` with no spec file `the`: the words are the goal
        if argv and argv[0] in SUBCOMMANDS:
            from omni.cli import commands

            return commands.main(argv)
        parser = run_parser()
        args = parser.parse_args(argv)
        check_limits(parser, args)
        if args.goal is None and args.goal_file is None and not (args.last or args.resume) and sys.stdin.isatty() \
                and sys.stdout.isatty():
            from omni.cli.interactive import session

            settings, _ = settings_for(args)
            return session(settings, args)
        continued = None
        if args.last or args.resume:
            from omni.cli.history import run_folder
            from omni.run.resume import earlier

            continued = earlier(run_folder(args.repo, args.resume or "last")[1])
        goal = read_goal(args, continued.goal if continued else "")
        if close := _subcommand_typo(goal):
            raise UsageError(f"{goal!r} is not a subcommand: did you mean `omni {close}`? (To run it as a goal, "
                             "say more, e.g. omni \"" + goal + " the tests\")")
        settings, _ = settings_for(args)
        from omni.run.session import RunRequest, run_goal

        code, _ = run_goal(RunRequest(goal, settings, args.repo, args.json, continued=continued))
        return code
    except OmniError as exc:
        print(f"omni: {visible(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, ForceQuit):
        print("omni: interrupted", file=sys.stderr)
        return EXIT_CODES["interrupted"]


if __name__ == "__main__":
    sys.exit(main())
