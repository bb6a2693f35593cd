"""omni's command line: `omni "<goal>"` runs the agent; subcommands manage the sandbox and past runs."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from omni import __version__
from omni.errors import EXIT_CODES, OmniError, UsageError

SUBCOMMANDS = ("sandbox", "runs", "diff", "apply")


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="omni", description="A coding agent for the terminal. It plans, acts one tool call at a time in a "
        "Docker sandbox on an isolated copy of your repo, corrects itself, and shows you the diff.",
        epilog="Subcommands: omni sandbox build | omni runs | omni diff RUN | omni apply RUN. "
        "Exit codes: 0 finished, 1 failed, 2 usage or configuration error, 3 a limit was reached, 130 interrupted.")
    p.add_argument("goal", nargs="?", help="what to do, in plain words ('-' reads it from stdin)")
    p.add_argument("--version", action="version", version=f"omni {__version__}")
    p.add_argument("--goal-file", type=Path, help="read the goal from a file")
    p.add_argument("--repo", type=Path, default=None, help="the git repository (default: the current one)")
    m = p.add_argument_group("model")
    m.add_argument("--model", help="model id (env OMNI_MODEL)")
    m.add_argument("--planner-model", help="model for planning (default: --model; env OMNI_PLANNER_MODEL)")
    m.add_argument("--base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL, OPENAI_API_BASE)")
    m.add_argument("--api-key", help="API key (env OPENAI_API_KEY, OPENROUTER_API_KEY)")
    m.add_argument("--tool-mode", choices=("auto", "native", "text"), default="auto",
                   help="native tool calls, a text format, or probe the server once (default)")
    m.add_argument("--no-stream", action="store_true", help="do not stream replies")
    m.add_argument("--request-timeout", type=float, default=600.0,
                   help="seconds without data from the model before a request is cut (default 600)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--max-steps", type=int, default=40, help="tool calls before stopping (default 40)")
    lim.add_argument("--max-cost", type=float, default=None, help="USD before stopping")
    lim.add_argument("--timeout", type=float, default=None, help="wall-clock seconds before stopping")
    s = p.add_argument_group("sandbox")
    s.add_argument("--sandbox", choices=("docker", "local"), default="docker",
                   help="docker (default) or local: no container, tools run on the host (no isolation)")
    s.add_argument("--network", action="store_true", help="allow network inside the sandbox during the run")
    s.add_argument("--image", default=None, help="sandbox image (env OMNI_SANDBOX_IMAGE)")
    s.add_argument("--base-image", default=None, help="base image if the sandbox image must be built "
                   "(env OMNI_BASE_IMAGE)")
    s.add_argument("--test-command", default=os.environ.get("OMNI_TEST_COMMAND", ""),
                   help="the repo's test command, if not pytest")
    u = p.add_argument_group("interaction")
    u.add_argument("--yes", "-y", action="store_true", help="never prompt; apply the result when finished")
    u.add_argument("--json", action="store_true", help="JSONL events on stdout; human output on stderr")
    u.add_argument("--verbose", "-v", action="store_true", help="stream the model's text as it arrives")
    return p


def read_goal(args, parser) -> str:
    if args.goal_file:
        try:
            goal = args.goal_file.read_text()
        except OSError as exc:
            raise UsageError(f"cannot read the goal file {args.goal_file}: {exc.strerror}") from None
    elif args.goal == "-":
        goal = sys.stdin.read()
    else:
        goal = args.goal or ""
    goal = goal.strip()
    if not goal:
        raise UsageError("the goal is empty: say what to do, e.g. omni \"make the tests in tests/ pass\"")
    return goal


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in SUBCOMMANDS:
            from omni import commands

            return commands.main(argv)
        parser = run_parser()
        args = parser.parse_args(argv)
        for name in ("max_steps",):
            if getattr(args, name) < 1:
                parser.error(f"--{name.replace('_', '-')} must be at least 1")
        for name in ("max_cost", "timeout"):
            if getattr(args, name) is not None and getattr(args, name) <= 0:
                parser.error(f"--{name.replace('_', '-')} must be positive")
        goal = read_goal(args, parser)
        from omni.session import run_goal

        return run_goal(args, goal)
    except OmniError as exc:
        print(f"omni: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("omni: interrupted", file=sys.stderr)
        return EXIT_CODES["interrupted"]


if __name__ == "__main__":
    sys.exit(main())
