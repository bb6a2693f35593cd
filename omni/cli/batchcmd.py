"""`omni batch TASKS`: many runs, each on a fresh clone in a sandbox of its own, on this machine (--workers) or on
a Ray cluster (--ray); nothing is ever applied to a source repository. Records in OUT/<task>/, a summary in
OUT/summary.jsonl and OUT/summary.md. Exit 0 when every task finished verified, 1 otherwise, 2 for a bad task file
or flag, 130 on Ctrl-C (finished records are kept; running the batch again skips them)."""

from __future__ import annotations

import os
from pathlib import Path

from omni.errors import EXIT_CODES, UsageError


def add_command(sub) -> None:
    batch = sub.add_parser("batch", help="run many goals, each on a fresh clone (--workers here, or --ray)")
    batch.add_argument("tasks", type=Path, help="YAML or JSONL: repo, ref, goal (or goal_file), id, settings")
    batch.add_argument("--out", type=Path, default=None, help="where the records go (default: TASKS' name + .out)")
    batch.add_argument("--workers", type=int, default=2, help="tasks at once on this machine (default 2)")
    batch.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="run on a Ray cluster (ADDRESS, else RAY_ADDRESS, else a local one); needs omni[ray]")
    batch.add_argument("--max-requests", type=int, default=None, metavar="N",
                       help="at most N model requests in flight across the whole batch")
    batch.add_argument("--retries", type=int, default=2, help="tries again a task whose worker died (default 2)")
    batch.add_argument("--redo", action="store_true", help="run tasks that have a record already")
    batch.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="an omni setting for every task (a task's own settings win)")
    batch.add_argument("--json", action="store_true", help="one JSON object per task transition on stdout")


def _settings(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--set {pair}: give KEY=VALUE, e.g. --set max_steps=20")
        found[key.strip().replace("-", "_")] = value
    return found


def _relay_upstream(settings: dict[str, str]) -> str:
    from omni.model.endpoint import resolve_endpoint

    base = settings.get("base_url") or os.environ.get("OMNI_BASE_URL")
    return resolve_endpoint(base, settings.get("api_key"), os.environ, settings.get("model")).url


def main(args) -> int:
    from omni.batch.pools import LocalPool, RayPool
    from omni.batch.relay import RequestRelay
    from omni.batch.runner import DONE, run_batch
    from omni.batch.tasks import check_settings, load_tasks
    from omni.batch.view import BatchView

    if args.workers < 1 or args.retries < 0 or (args.max_requests is not None and args.max_requests < 1):
        raise UsageError("--workers and --max-requests take 1 or more, --retries 0 or more")
    tasks = load_tasks(args.tasks)
    common = _settings(args.set)
    if problems := check_settings("--set", common):
        raise UsageError("\n".join(problems))
    for task in tasks:
        task.settings = {**common, **task.settings}
    pool = RayPool(args.ray or os.environ.get("RAY_ADDRESS", ""), args.retries) if args.ray is not None \
        else LocalPool(args.workers, args.retries)
    out = (args.out or Path(args.tasks.stem + ".out")).resolve()
    env = dict(os.environ)
    view = BatchView(args.json)
    relay = None
    if args.max_requests:
        host = "127.0.0.1"
        if args.ray is not None:
            import ray.util

            host = ray.util.get_node_ip_address()  # the cluster's nodes reach it on this machine's address
        relay = RequestRelay(_relay_upstream(common), args.max_requests, host).__enter__()
        env["OMNI_BASE_URL"] = relay.url
        for task in tasks:  # a task with an endpoint of its own goes there directly
            if task.settings.get("base_url") in (None, common.get("base_url")):
                task.settings["base_url"] = relay.url
    try:
        state = run_batch(tasks, out, pool, env, args.redo, view)
    except KeyboardInterrupt:
        view.close([], out)
        print(f"omni: batch interrupted; finished records are kept in {out} (running it again skips them)")
        return EXIT_CODES["interrupted"]
    finally:
        if relay is not None:
            relay.__exit__(None, None, None)
    rows = [state.results.get(t.id) or {"id": t.id, "status": "not run"} for t in tasks]
    view.close(rows, out)
    return 0 if all(r.get("status") == DONE for r in rows) else 1
