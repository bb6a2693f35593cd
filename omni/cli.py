"""omni's command line: `omni "<goal>"` runs the agent; `omni` alone opens a session; subcommands
manage the sandbox, the configuration and past runs."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from omni import __version__
from omni.errors import EXIT_CODES, ForceQuit, OmniError, UsageError

SUBCOMMANDS = ("sandbox", "runs", "show", "diff", "apply", "undo", "config", "trust", "plan", "run")
EPILOG = """subcommands:
  omni sandbox build|clean    build the sandbox image (--offline-base: without a registry) / remove stale ones
  omni config                 the effective configuration and where each value comes from
  omni trust                  allow this repo's .omni/config.toml (its current content) to weaken isolation
  omni runs | show RUN | diff RUN | apply RUN | undo RUN     past runs
  omni plan GOAL --spec F     write a YAML task spec;  omni run F   execute one

exit codes: 0 finished, 1 failed or flagged, 2 usage or configuration error, 3 a limit was reached,
130 interrupted."""


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Options shared by a run, `omni plan` and `omni run`. Defaults are None: unset flags do not
    override the config files and OMNI_* variables (see omni/settings.py for the real defaults)."""
    p.add_argument("--repo", type=Path, default=None, help="the git repository (default: the current one)")
    m = p.add_argument_group("model")
    m.add_argument("--model", help="model id (env OMNI_MODEL)")
    m.add_argument("--planner-model", help="model for planning and review (default: --model)")
    m.add_argument("--base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL, OPENAI_API_BASE)")
    m.add_argument("--api-key", help="API key (env OPENAI_API_KEY, OPENROUTER_API_KEY)")
    m.add_argument("--tool-mode", choices=("auto", "native", "text"),
                   help="native tool calls, a text format, or probe the server once (auto, the default)")
    m.add_argument("--tools", choices=("full", "core"),
                   help="offer every tool (full, the default) or a core set of 8 that small models handle better")
    m.add_argument("--max-tokens", type=int, help="cap on tokens per reply (4096); small local models: ~1024")
    m.add_argument("--no-stream", dest="stream", action="store_false", default=None, help="do not stream replies")
    m.add_argument("--request-timeout", type=float, help="seconds without data before a request is cut (600)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--max-steps", type=int, help="tool calls before stopping (default 40)")
    lim.add_argument("--max-cost", type=float, help="USD before stopping")
    lim.add_argument("--timeout", type=float, help="wall-clock seconds before stopping")
    s = p.add_argument_group("sandbox")
    s.add_argument("--sandbox", choices=("docker", "local"),
                   help="docker (default) or local: no container, tools run on the host (no isolation)")
    s.add_argument("--network", action="store_true", default=None, help="allow network in the sandbox")
    s.add_argument("--image", help="sandbox image")
    s.add_argument("--base-image", help="base image if the sandbox image must be built")
    s.add_argument("--test-command", help="the repo's test command, if not pytest")
    s.add_argument("--max-workspace-mb", type=int, help="MiB the workspace may grow by before the run stops (1024)")
    g = p.add_argument_group("finishing")
    g.add_argument("--no-review", dest="review", action="store_false", default=None,
                   help="skip the reviewer call at finish (validation still runs)")
    g.add_argument("--max-refinements", type=int, help="times the gate sends work back before flagging (2)")
    u = p.add_argument_group("interaction")
    u.add_argument("--yes", "-y", action="store_true", default=None,
                   help="never prompt; apply the result, unless it changes instruction or config files")
    u.add_argument("--yes-all", action="store_true", default=None,
                   help="like --yes, and also apply a result that changes AGENTS.md, .omni/ and the like")
    u.add_argument("--json", action="store_true", help="JSONL events on stdout; human output on stderr")
    u.add_argument("--verbose", "-v", action="store_true", default=None, help="stream the model's text")


SETTING_FLAGS = ("model", "planner_model", "base_url", "api_key", "tool_mode", "tools", "max_tokens", "stream",
                 "request_timeout",
                 "max_steps", "max_cost", "timeout", "sandbox", "network", "image", "base_image", "test_command",
                 "review", "max_refinements", "max_workspace_mb", "yes", "yes_all", "verbose")


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="omni", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="A coding agent for the terminal. It plans, acts one tool call at a time in a Docker "
        "sandbox on an isolated copy of your repo, corrects itself, and shows you the diff.")
    p.add_argument("goal", nargs="?", help="what to do, in plain words ('-' reads it from stdin); "
                   "none opens an interactive session")
    p.add_argument("--version", action="version", version=f"omni {__version__}")
    p.add_argument("--goal-file", type=Path, help="read the goal from a file")
    add_run_options(p)
    return p


def check_limits(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for name in ("max_steps", "max_tokens", "max_workspace_mb"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("max_cost", "timeout", "request_timeout"):
        if getattr(args, name) is not None and getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")


def settings_for(args: argparse.Namespace):
    from omni import settings
    from omni.workspace import find_repo

    repo = find_repo((args.repo or Path.cwd()).resolve())
    flags = {k: getattr(args, k, None) for k in SETTING_FLAGS}
    return settings.load(flags, Path(repo.working_tree_dir))


def read_goal(args) -> str:
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


def _on_sigterm(signum, frame) -> None:
    raise ForceQuit()  # like a second Ctrl-C: the record is saved and the sandbox removed on the way out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            from omni import commands

            return commands.main(argv)
        parser = run_parser()
        args = parser.parse_args(argv)
        check_limits(parser, args)
        if args.goal is None and args.goal_file is None and sys.stdin.isatty() and sys.stdout.isatty():
            from omni.interactive import session

            settings, _ = settings_for(args)
            return session(settings, args)
        goal = read_goal(args)
        settings, _ = settings_for(args)
        from omni.session import RunRequest, run_goal

        code, _ = run_goal(RunRequest(goal, settings, args.repo, args.json))
        return code
    except OmniError as exc:
        print(f"omni: {exc}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, ForceQuit):
        print("omni: interrupted", file=sys.stderr)
        return EXIT_CODES["interrupted"]


if __name__ == "__main__":
    sys.exit(main())
