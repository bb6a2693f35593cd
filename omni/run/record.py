"""The run record: .omni/runs/<run-id>/ with events.jsonl (appended and flushed as the run goes),
summary.json and diff.patch at the end. A crash or kill loses nothing already written."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from collections.abc import Iterator
from typing import Any


def new_run_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + os.urandom(2).hex()


def read_events(folder: Path) -> Iterator[dict]:
    """A run record's events in order; a line cut by a crash is skipped, a missing file has none."""
    try:
        with open(folder / "events.jsonl", encoding="utf-8") as handle:
            for line in handle:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue
    except OSError:
        return


OWNER = "owner.json"  # which omni process writes this record; a later start finds records it left


class RunRecord:
    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._events = open(folder / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.write(OWNER, {"pid": os.getpid(), "host": socket.gethostname()})

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "model_delta":  # streamed fragments are for the screen; the reply is recorded whole
            return
        self._events.write(json.dumps({"kind": kind, **data}, default=str) + "\n")
        self._events.flush()

    def write(self, name: str, content: bytes | str | dict) -> Path:
        return self.write_file(self.folder / name, content)

    @staticmethod
    def write_file(path: Path, content: bytes | str | dict) -> Path:
        tmp = path.with_suffix(path.suffix + ".tmp")
        if isinstance(content, bytes):
            tmp.write_bytes(content)
        else:
            text = content if isinstance(content, str) else json.dumps(content, indent=2, default=str)
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return path

    def close(self) -> None:
        self._events.close()


class EventBus:
    """Sends each event to every sink (run record, UI, JSON stream), one event at a time: work beside the loop
    (the first plan's request, the baseline tests) emits from threads of its own."""

    def __init__(self, *sinks):
        self.sinks = list(sinks)
        self.seq = 0
        self._lock = threading.RLock()  # a sink may emit again while it handles one (a warning)
        self._loop_thread = threading.get_ident()

    def emit(self, kind: str, **data: Any) -> None:
        """Stamp the event once (seq, time, type), so every sink carries the same object. A streamed
        fragment (model_delta) is for the screen only: it takes no number, so seq has no gaps; only the loop's
        thread streams (a reply asked for beside it is shown whole, when it is taken)."""
        with self._lock:
            if kind == "model_delta":
                if threading.get_ident() == self._loop_thread:
                    for sink in self.sinks:
                        sink.emit(kind, **data)
                return
            self.seq += 1
            stamp = {"seq": self.seq, "time": datetime.now(UTC).isoformat(timespec="milliseconds"), "type": kind}
            for sink in self.sinks:
                sink.emit(kind, **stamp, **data)


class RunFacts:
    """An event sink that keeps what the summary reports about the run as a whole: the last test result,
    whoever ran the tests (the model's run_tests, the gate's validation), the baseline's, the seconds to
    the first action, and the share of prompt tokens after the first request served from the cache."""

    def __init__(self):
        self.last = ""
        self.at_start = ""
        self.started = time.monotonic()
        self.first_action_s: float | None = None
        self.requests = 0
        self.prompt_after_first = 0
        self.cached_after_first = 0
        self.check_source = ""  # what the run's check was settled as ("none": no check could be)
        self.check_asserts: list[str] = []  # what it asserts, when the model wrote it (a reproduction)
        self.verified: dict | None = None  # the last finish's verdict on the check

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "baseline":
            self.at_start = data.get("tests") or ""
        elif kind == "check":
            self.check_source = data.get("source") or ""
            self.check_asserts = list(data.get("asserts") or [])
        elif kind == "verification":
            self.verified = {k: data.get(k) for k in ("holds", "failing", "unrelated")}
        elif kind == "validation" and data.get("tests"):
            self.last = data["tests"]
        elif kind == "observation" and data.get("tool") == "run_tests":
            self.last = (data.get("details") or {}).get("headline") or self.last
        elif kind == "action" and self.first_action_s is None:
            self.first_action_s = round(time.monotonic() - self.started, 1)
        elif kind == "usage":
            call = data.get("call") or {}
            self.requests += 1
            if self.requests > 1:
                self.prompt_after_first += call.get("prompt_tokens", 0)
                self.cached_after_first += call.get("cached_tokens", 0)

    def check(self) -> dict:
        """What the summary says of the run's check: what it was, what it asserts (a reproduction's, as written),
        and whether it held at the last finish (None: no check could be settled, or the run ended before a finish
        checked it)."""
        said = {"source": self.check_source or "none", "holds": None, "failing": [], "unrelated": [],
                "asserts": self.check_asserts}
        if self.verified is not None and self.check_source not in ("", "none"):
            said.update(self.verified)
        return said

    def cached_share(self) -> float:
        return round(self.cached_after_first / self.prompt_after_first, 3) if self.prompt_after_first else 0.0
