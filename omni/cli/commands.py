"""Subcommands: sandbox build|clean, config, runs, show, diff, apply, undo (and plan/run for task specs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omni import trust
from omni.box import hostgit
from omni.errors import UsageError
from omni.box.workspace import apply_to_user_tree, find_repo


def _runs_dir(repo_arg: Path | None) -> tuple[Path, Path]:
    repo = find_repo((repo_arg or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    return root, root / ".omni" / "runs"


def _run_folder(repo_arg: Path | None, run: str) -> tuple[Path, Path]:
    root, runs = _runs_dir(repo_arg)
    matches = sorted(p for p in runs.glob(f"{run}*") if p.is_dir()) if runs.is_dir() else []
    if len(matches) != 1:
        raise UsageError(f"no run matches {run!r}; `omni runs` lists them" if not matches else
                         f"{run!r} matches several runs; give more of the id")
    return root, matches[0]


def _summary(folder: Path) -> dict:
    try:
        return json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return {"status": "incomplete", "goal": "?", "steps": "?"}


def _sandbox(args) -> int:
    from omni.box import images
    from omni.box import sandbox

    client = sandbox.docker_client()
    if args.action == "clean":
        removed = sandbox.remove_stale(client)
        print(f"removed {len(removed)} stale sandbox container(s)")
        return 0

    def say(kind, line="", **_):
        print(line, flush=True)

    base = args.base_image or sandbox.SandboxConfig().base_image
    if args.offline_base:
        base = images.build_offline_base(say, tag=args.base_image or images.OFFLINE_BASE)
    tag = images.build_sandbox_image(client, base, args.tag or images.SANDBOX_TAG, args.ca_bundle, say)
    print(f"built {tag}")
    return 0


def _config(args) -> int:
    from omni import settings
    from omni.cli.options import SETTING_FLAGS

    repo = find_repo((args.repo or Path.cwd()).resolve())
    effective, sources = settings.load(dict.fromkeys(SETTING_FLAGS), Path(repo.working_tree_dir),
                                       check_trust=False)
    print(f"# user config file: {settings.user_config_path()}")
    for key, value in effective.model_dump().items():
        shown = "***" if key == "api_key" and value else value
        print(f"{key:<16} = {json.dumps(shown):<36} # {sources[key]}")
    return 0


def _trust(args) -> int:
    from omni import settings, trust

    root = Path(find_repo((args.repo or Path.cwd()).resolve()).working_tree_dir)
    path = root / ".omni" / "config.toml"
    if not path.is_file():
        raise UsageError(f"{path} does not exist; there is nothing to trust")
    found = trust.weakening(settings._file_layer(path))
    value = trust.trust(path)
    allowed = ", ".join(f"{k} = {json.dumps(v)}" for k, v in found.items()) or "nothing that weakens isolation"
    print(f"trusted {path} as it is now (sha256 {value[:12]}); it may set {allowed}. "
          "A change to the file needs `omni trust` again.")
    return 0


def _show(folder: Path) -> int:
    from omni.run.ui import ConsoleUI

    ui = ConsoleUI()
    for line in (folder / "events.jsonl").read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        kind = event.pop("kind")
        ui.emit(kind, **event)
    if not (folder / "summary.json").exists():
        ui.print("(the run ended without a summary: it was killed or crashed)", "yellow")
    return 0


def main(argv: list[str]) -> int:
    if argv[0] in ("plan", "run"):
        from omni.cli import specrun

        return specrun.main(argv)
    parser = argparse.ArgumentParser(prog="omni")
    sub = parser.add_subparsers(dest="command", required=True)
    sb = sub.add_parser("sandbox", help="build or clean the sandbox image and containers")
    sb.add_argument("action", choices=("build", "clean"))
    sb.add_argument("--base-image", default=None, help="base image (default python:3.11-slim-bookworm)")
    sb.add_argument("--offline-base", action="store_true",
                    help="make the base image from Debian packages with debootstrap (no registry needed; root)")
    sb.add_argument("--ca-bundle", default=None, help="CA bundle for builds behind a TLS proxy (else PIP_CERT)")
    sb.add_argument("--tag", default=None, help="image tag")
    for name in ("config", "trust", "runs", "show", "diff", "apply", "undo"):
        p = sub.add_parser(name)
        if name not in ("runs", "config", "trust"):
            p.add_argument("run", help="run id (or a unique prefix)")
        p.add_argument("--repo", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.command == "sandbox":
        return _sandbox(args)
    if args.command == "config":
        return _config(args)
    if args.command == "trust":
        return _trust(args)
    if args.command == "runs":
        _, runs = _runs_dir(args.repo)
        folders = sorted(runs.iterdir()) if runs.is_dir() else []
        if not folders:
            print("no runs yet")
        for folder in folders:
            s = _summary(folder)
            print(f"{folder.name}  {s['status']:<12} {str(s['steps']):>3} steps  {s['goal'][:70]}")
        return 0
    root, folder = _run_folder(args.repo, args.run)
    if args.command == "show":
        return _show(folder)
    patch = (folder / "diff.patch").read_text() if (folder / "diff.patch").exists() else ""
    if args.command == "diff":
        sys.stdout.write(patch or "(no changes)\n")
        return 0
    s = _summary(folder)
    files = [f["path"] for f in s.get("changed_files", [])]
    if args.command == "apply":
        steering = trust.steering_files(files)
        if steering:
            print(f"note: this diff changes {', '.join(steering)}, which later runs or your tools read as "
                  "instructions or config", file=sys.stderr)
        result = apply_to_user_tree(root, s.get("seed", ""), patch, files, patch_path=str(folder / "diff.patch"))
    else:  # undo: the files must still be exactly as the run left them
        tip = hostgit.text(["rev-parse", "--verify", "--quiet", s.get("branch", "")], root, check=False).strip()
        if not tip:
            raise UsageError(f"the run's branch {s.get('branch')} is gone; undo by hand: "
                             f"git apply -R {folder / 'diff.patch'}")
        result = apply_to_user_tree(root, tip, patch, files, reverse=True, patch_path=str(folder / "diff.patch"))
    print(result.message)
    return 0 if result.applied else 1
