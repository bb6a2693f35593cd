"""Subcommands: sandbox build|clean, config, runs, show, diff, apply, undo (plan/run for task specs, batch)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from omni.box.workspace import find_repo
from omni.cli import batchcmd, history, specrun
from omni.cli.parsing import SHELLS, Parser, completion
from omni.errors import UsageError


def _sandbox(args) -> int:
    from rich.console import Console

    from omni.box import engine, images, sandbox
    from omni.run.buildview import building

    root = Path(find_repo(Path.cwd().resolve()).working_tree_dir) if args.action == "project" else None
    client = engine.docker_client()
    if args.action == "clean":
        removed = sandbox.remove_stale(client)
        print(f"removed {len(removed)} stale sandbox container(s)")
        return 0
    if root is not None:  # the layer a run here installs, built before the run (the sandbox image too if missing)
        with building(Console(highlight=False)) as view:
            image = sandbox.ensure_image(client, sandbox.SandboxConfig(), view)
            tag, reqs = images.project_image(client, root, image, view)
        print(f"{tag} is ready ({len(reqs)} project dependencies)" if reqs else f"no project dependencies: {image}")
        return 0
    base = args.base_image or sandbox.SandboxConfig().base_image
    with building(Console(highlight=False)) as view:
        if args.offline_base:
            images.check_offline_base_possible(args.base_image or images.OFFLINE_BASE, asked=True)
            base = images.build_offline_base(view, tag=args.base_image or images.OFFLINE_BASE)
        tag = images.build_sandbox_image(client, base, args.tag or images.SANDBOX_TAG, args.ca_bundle, view)
        if args.with_aider:
            print(f"built {tag}")
            tag = images.build_aider_image(client, tag, view)
    print(f"built {tag}")
    return 0


def _config(args) -> int:
    """Every value a run would use and where it comes from, the model's endpoint and the sandbox's engine
    included. Outside a repository it shows the user-level layers (there is no repo config)."""
    from omni import settings
    from omni.cli.options import SETTING_FLAGS
    from omni.model.endpoint import ORDER, resolve_endpoint

    try:
        root: Path | None = Path(find_repo((args.repo or Path.cwd()).resolve()).working_tree_dir)
    except UsageError:
        if args.repo:
            raise
        root = None
    effective, sources = settings.load(dict.fromkeys(SETTING_FLAGS), root, check_trust=False)
    print(f"# user config file: {settings.user_config_path()}")
    print(f"# repo config file: {root / '.omni' / 'config.toml'}" if root else
          "# not in a git repository: no repo config (run omni inside one)")
    for key, value in effective.model_dump().items():
        shown = "***" if key == "api_key" and value else value
        print(f"{key:<16} = {json.dumps(shown):<36} # {sources[key]}")
    print(f"# the model's endpoint, by this order: {ORDER}")
    try:
        found = resolve_endpoint(effective.base_url, effective.api_key, os.environ, effective.model)
    except UsageError as exc:
        print(f"{'endpoint':<16} = {'null':<36} # {str(exc).splitlines()[0]}")
        found = None
    if found is not None:
        _endpoint(found, sources)
    if effective.sandbox == "docker":
        _engine(effective.mount)
    return 0


def _endpoint(found, sources) -> None:
    key = found.key if found.key_from.startswith("none needed") else "***"  # a real key is never printed
    print(f"{'endpoint':<16} = {json.dumps(found.url):<36} # {_from(found.url_from, sources['base_url'])}")
    print(f"{'endpoint key':<16} = {json.dumps(key):<36} # {_from(found.key_from, sources['api_key'])}")
    if found.note:
        print(f"# note: {found.note}")


def _engine(asked: str) -> None:
    """The engine a run would use, and how the worktree would reach its containers, and why."""
    from omni.box.engine import choose_mount, docker_client, endpoint

    host, _ = endpoint()
    where = "environment variable DOCKER_HOST" if os.environ.get("DOCKER_HOST") else \
        "the current Docker context" if host else "the default socket"
    print("# the sandbox's engine, and how the worktree reaches it")
    try:
        client = docker_client(timeout=10)
    except UsageError as exc:
        print(f"{'engine':<16} = {json.dumps(host or 'unix:///var/run/docker.sock'):<36} # {where}; "
              f"{str(exc).splitlines()[0]}")
        return
    choice = choose_mount(client, asked)
    print(f"{'engine':<16} = {json.dumps(client.omni_endpoint):<36} # {where}")
    print(f"{'worktree':<16} = {json.dumps(choice.kind):<36} # {choice.reason}")


def _from(name: str, setting_source: str) -> str:
    """Where an endpoint value came from: a provider variable, or the base_url/api_key setting's source."""
    return setting_source if name.startswith("--") else f"environment variable {name}" if name.isupper() else name


def _trust(args) -> int:
    from omni import settings, trust

    root = Path(find_repo((args.repo or Path.cwd()).resolve()).working_tree_dir)
    path = root / trust.CONFIG
    raw, data = settings.repo_layer(root)
    found = trust.weakening(data)
    value = trust.trust(root, raw)  # the bytes shown are the bytes trusted
    allowed = ", ".join(f"{k} = {json.dumps(v)}" for k, v in found.items()) or "nothing that weakens isolation"
    print(f"trusted {path} as it is now (sha256 {value[:12]}); it may set {allowed}. "
          "A change to the file needs `omni trust` again.")
    return 0


def parser() -> Parser:
    p = Parser(prog="omni")
    sub = p.add_subparsers(dest="command", required=True)
    sb = sub.add_parser("sandbox", help="build or clean the sandbox image and containers, or build a project's layer")
    sb.add_argument("action", choices=("build", "clean", "project"),
                    help="project: build this repository's layer of declared dependencies now, as a run would")
    sb.add_argument("--base-image", default=None, help="base image (default python:3.11-slim-bookworm)")
    sb.add_argument("--offline-base", action="store_true",
                    help="make the base image from Debian packages with debootstrap (no registry needed; root)")
    sb.add_argument("--ca-bundle", default=None, help="CA bundle for builds behind a TLS proxy (else PIP_CERT)")
    sb.add_argument("--tag", default=None, help="image tag")
    sb.add_argument("--with-aider", action="store_true",
                    help="also add Aider (aider-chat, in its own venv) for --aider and /aider")
    for name, said in (("config", "the effective configuration and where each value comes from"),
                       ("trust", "allow this repo's .omni/config.toml to weaken isolation")):
        sub.add_parser(name, help=said).add_argument("--repo", type=Path, default=None)
    runs = sub.add_parser("runs", help="past runs, newest first")
    runs.add_argument("--prune", action="store_true", help="remove the branches and worktrees of runs never applied")
    runs.add_argument("--yes", "-y", action="store_true", help="with --prune: do not ask")
    runs.add_argument("--repo", type=Path, default=None)
    for name, said in (("show", "replay a run's log"), ("diff", "a run's diff"),
                       ("apply", "apply a run's diff to your working tree"), ("undo", "take an applied run back")):
        one = sub.add_parser(name, help=said)
        one.add_argument("run", nargs="?", default=None, help="run id, a unique prefix of it, or `last` (the default)")
        one.add_argument("--repo", type=Path, default=None)
        if name == "diff":
            one.add_argument("--raw", action="store_true", help="the exact bytes, control characters included "
                             "(for a pipe into git apply); by default they are written out visibly")
        if name == "apply":
            one.add_argument("--yes", "-y", action="store_true", help="apply a run that did not finish verified "
                             "(interrupted, flagged, unverified) without asking")
    sub.add_parser("completion", help="print a shell completion script").add_argument("shell", choices=SHELLS)
    specrun.add_commands(sub)
    batchcmd.add_command(sub)
    return p


def completion_parser() -> Parser:
    """Every subcommand, and the run's own flags at the top level (a goal is free text)."""
    from omni import __version__
    from omni.cli.options import add_goal_options, add_run_options

    whole = parser()
    add_goal_options(whole, f"omni {__version__}")
    add_run_options(whole)
    return whole


def main(argv: list[str]) -> int:
    parse = parser()
    args = parse.parse_args(argv)
    if args.command in ("plan", "run"):
        return specrun.main(parse, args)
    if args.command == "batch":
        return batchcmd.main(args)
    if args.command == "completion":
        sys.stdout.write(completion(completion_parser(), args.shell))
        return 0
    if args.command == "sandbox":
        return _sandbox(args)
    if args.command == "config":
        return _config(args)
    if args.command == "trust":
        return _trust(args)
    if args.command == "runs":
        root, folder = history.runs_dir(args.repo)
        return history.prune(root, folder, args.yes) if args.prune else history.list_runs(folder)
    root, folder = history.run_folder(args.repo, args.run)
    if args.command == "show":
        return history.show(folder)
    if args.command == "diff":
        return history.show_diff(folder, args.raw)
    return history.apply_or_undo(args.command, root, folder, getattr(args, "yes", False))
