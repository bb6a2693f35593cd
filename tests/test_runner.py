"""The process runner under load: a command that succeeded is reported as it ended, never as killed."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import sys
import time
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_runner(path: Path = TOOLS / "runner.py"):
    name = f"omni_tool_runner_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _burn(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


@pytest.fixture
def cpu_load():
    """Every core busy (twice over), as when a local model generates beside the sandbox."""
    stop_at = time.monotonic() + 120
    burners = [multiprocessing.Process(target=_burn, args=(stop_at,), daemon=True)
               for _ in range(2 * (os.cpu_count() or 2))]
    for proc in burners:
        proc.start()
    yield
    for proc in burners:
        proc.terminate()
        proc.join()


@pytest.mark.parametrize("argv", [["ls"], ["bash", "-c", "ls"], ["cat", "/etc/hostname"]])
def test_short_commands_under_cpu_load_all_exit_zero(tmp_path, cpu_load, argv):
    runner = load_runner()
    (tmp_path / "a.txt").write_text("x\n")
    codes = [runner.run(argv, str(tmp_path), timeout=30).exit_code for _ in range(100)]
    assert codes.count(0) == len(codes), f"not 0: {[c for c in codes if c != 0][:10]}"


def test_a_kill_by_the_timeout_is_said_to_be_omnis(tmp_path):
    done = load_runner().run(["sleep", "30"], str(tmp_path), timeout=0.5)
    assert done.timed_out and done.killed_by == "timeout" and done.exit_code is None


def test_a_process_that_outlives_its_output_is_waited_for(tmp_path):
    """Closing stdout is not exiting: the exit code is the process's own, after it exits."""
    code = "import os, time; os.close(1); os.close(2); time.sleep(0.5); raise SystemExit(3)"
    done = load_runner().run([sys.executable, "-c", code], str(tmp_path), timeout=10)
    assert done.exit_code == 3 and done.killed_by is None and done.duration_s >= 0.5


def test_a_background_child_holding_the_pipe_is_killed_after_the_leader_exits(tmp_path):
    done = load_runner().run(["bash", "-c", "sleep 60 & echo started"], str(tmp_path), timeout=20)
    assert done.exit_code == 0 and "started" in done.output and done.duration_s < 5


def test_a_watch_that_objects_stops_the_command(tmp_path):
    done = load_runner().run(["sleep", "30"], str(tmp_path), timeout=20, watch=lambda: "too big")
    assert done.killed_by == "watch" and done.watch_note == "too big" and done.duration_s < 5
