"""Subcommands: omni sandbox build|clean, omni runs, omni diff RUN, omni apply RUN."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omni.errors import UsageError
from omni.workspace import apply_to_user_tree, find_repo


def _runs_dir(repo_arg: Path | None) -> tuple[Path, Path]:
    repo = find_repo((repo_arg or Path.cwd()).resolve())
    root = Path(repo.working_tree_dir)
    return root, root / ".omni" / "runs"


def _run_folder(repo_arg: Path | None, run: str) -> tuple[Path, Path]:
    root, runs = _runs_dir(repo_arg)
    matches = sorted(p for p in runs.glob(f"{run}*") if p.is_dir()) if runs.is_dir() else []
    if len(matches) != 1:
        raise UsageError(f"no run matches {run!r}" if not matches else f"{run!r} matches several runs; "
                         "give more of the id")
    return root, matches[0]


def _summary(folder: Path) -> dict:
    try:
        return json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return {"status": "incomplete", "goal": "?", "steps": "?"}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="omni")
    sub = parser.add_subparsers(dest="command", required=True)
    sb = sub.add_parser("sandbox", help="build or clean the sandbox image and containers")
    sb.add_argument("action", choices=("build", "clean"))
    sb.add_argument("--base-image", default=None, help="base image (default python:3.11-slim-bookworm)")
    sb.add_argument("--offline-base", action="store_true",
                    help="make the base image from Debian packages with debootstrap (no registry needed; root)")
    sb.add_argument("--ca-bundle", default=None, help="CA bundle for builds behind a TLS proxy (else PIP_CERT)")
    sb.add_argument("--tag", default=None, help="image tag")
    for name in ("runs", "diff", "apply"):
        p = sub.add_parser(name)
        if name != "runs":
            p.add_argument("run", help="run id (or a unique prefix)")
        p.add_argument("--repo", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.command == "sandbox":
        from omni import images, sandbox

        client = sandbox.docker_client()
        if args.action == "clean":
            removed = sandbox.remove_stale(client)
            print(f"removed {len(removed)} stale sandbox container(s)")
            return 0
        def say(kind, line="", **_):
            return print(line, flush=True)
        base = args.base_image or sandbox.SandboxConfig().base_image
        if args.offline_base:
            base = images.build_offline_base(say, tag=args.base_image or images.OFFLINE_BASE)
        tag = images.build_sandbox_image(client, base, args.tag or images.SANDBOX_TAG, args.ca_bundle, say)
        print(f"built {tag}")
        return 0
    if args.command == "runs":
        _, runs = _runs_dir(args.repo)
        folders = sorted(runs.iterdir()) if runs.is_dir() else []
        if not folders:
            print("no runs yet")
        for folder in folders:
            s = _summary(folder)
            print(f"{folder.name}  {s['status']:<12} {s['steps']!s:>3} steps  {s['goal'][:70]}")
        return 0
    root, folder = _run_folder(args.repo, args.run)
    patch = (folder / "diff.patch").read_text() if (folder / "diff.patch").exists() else ""
    if args.command == "diff":
        sys.stdout.write(patch or "(no changes)\n")
        return 0
    s = _summary(folder)
    result = apply_to_user_tree(root, s.get("seed", ""), patch, [f["path"] for f in s.get("changed_files", [])])
    print(result.message)
    return 0 if result.applied else 1
