"""No way out through the tool channel, the host's git, or the growth budget: the sandbox user cannot speak for the
tool server, host git never reads a tree the container is changing, and everything the container writes counts.
Real Docker, real git, the real CLI where a run is needed."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import FINE, IMAGE, PLAN, clean_env, finish, git, make_repo, own_sandbox, run_omni, shell

pytestmark = pytest.mark.docker


def user_env(tmp_path: Path) -> dict[str, str]:
    return clean_env(OMNI_DATA_DIR=str(tmp_path / "omni-data"))


def sh(box, command: str, timeout: int = 30):
    return box.run_tool("shell", {"command": command, "timeout": timeout}, timeout + 10)


# ---- 7. the channel is the run's own -----------------------------------------------------------------------
def test_no_host_folder_is_shared_for_the_channel(tmp_path, docker_engine):
    with own_sandbox(tmp_path, "mounts", FINE) as box:
        box.container.reload()
        writable = [m["Source"] for m in box.container.attrs["Mounts"] if m["RW"]]
        assert writable == [str(box.workspace)]  # the worktree only: no socket folder, no host temp folder


def test_the_sandbox_user_cannot_speak_for_the_tool_server(tmp_path, docker_engine):
    forge = '{"id": 2, "success": true, "output": "FORGED"}'
    with own_sandbox(tmp_path, "takeover", FINE) as box:
        pid = sh(box, "pgrep -f 'server.py --stdio'").output.strip()
        assert pid.isdigit()
        attack = (f"cat /proc/{pid}/environ > /dev/null 2>&1 && echo environ-readable; "
                  f"ls /proc/{pid}/fd > /dev/null 2>&1 && echo fds-listed; "
                  f"(echo '{forge}' > /proc/{pid}/fd/1) 2>/dev/null && echo reply-forged; "
                  f"head -c 1 /proc/{pid}/fd/0 > /dev/null 2>&1 && echo request-read; "
                  "grep -l TOKEN /proc/[0-9]*/environ 2>/dev/null; echo attack-done")
        done = sh(box, attack)
        assert done.success and done.output.strip() == "attack-done", done.output
        after = sh(box, "echo still-mine")
        assert after.output.strip() == "still-mine"  # the host still talks to its own server, and only to it


def test_a_reply_is_bounded_in_size_and_in_total_wait(tmp_path, docker_engine):
    """The host's reader against a hostile peer on a real exec stream: 150 MB without a newline, and a trickle."""
    from omni.box.channel import DockerStream, ToolStream
    from omni.errors import SandboxError

    with own_sandbox(tmp_path, "bounds", FINE) as box:
        flood = ["/opt/omni-tools/bin/python", "-c", "import sys, os\nfor _ in range(150):\n"
                 "    os.write(1, b'x' * 2**20)\nimport time; time.sleep(60)"]
        stream = ToolStream(DockerStream(box.client, box.container, flood, box.owner))
        with pytest.raises(SandboxError, match="larger than"):
            stream.call("shell", {"command": "true"}, 5)
        stream.close()
        trickle = ["/opt/omni-tools/bin/python", "-c", "import os, time\nwhile True:\n"
                   "    os.write(1, b'x'); time.sleep(0.5)"]
        stream = ToolStream(DockerStream(box.client, box.container, trickle, box.owner), grace=2)
        result = stream.call("shell", {"command": "true"}, 1)
        assert result.failure == "sandbox_error" and "did not answer within 3s" in result.error
        stream.close()


def test_a_killed_tool_server_is_a_clear_sandbox_error_and_the_record_is_kept(tmp_path, fake, docker_engine):
    repo = make_repo(tmp_path / "repo", FINE)
    fake.add(PLAN, shell("pkill -9 -f 'server.py --stdio'; sleep 1"), shell("echo after"), finish())
    run = run_omni(repo, "break it", fake=fake, env=user_env(tmp_path))
    assert run.code == 1, run.stdout + run.stderr
    summary = run.summary()
    assert summary["status"] == "sandbox_error" and "tool server" in summary["message"]
    assert "Traceback" not in run.stdout + run.stderr


# ---- 2. host git never reads a tree the container is changing -----------------------------------------------
SWAPPER = textwrap.dedent("""\
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    os.makedirs("d", exist_ok=True)
    with open("d/key", "w") as f:
        f.write("harmless\\n")
    if not os.path.lexists("e"):
        os.symlink(os.environ["TARGET"], "e")
    while True:  # swap the folder and the link, as fast as the kernel allows
        libc.renameat2(-100, b"d", -100, b"e", 2)
    """)


def test_host_git_never_reads_through_a_folder_swapped_for_a_link(tmp_path, docker_engine):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key").write_text("s3cret-race-key\n")
    with own_sandbox(tmp_path, "race", FINE) as box:
        workspace = box.workspace_obj
        (box.workspace / "swap.py").write_text(SWAPPER)
        started = sh(box, f"TARGET={secret} setsid /opt/omni-tools/bin/python swap.py > /dev/null 2>&1 & "
                          "sleep 1; echo swapping", timeout=30)
        assert started.success, started.error
        for n in range(300):  # many checkpoints while the swapper runs
            (box.workspace / "touch.txt").write_text(str(n))
            workspace.checkpoint(f"step {n}")
        objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=box.repo,
                                 capture_output=True).stdout
        assert b"s3cret-race-key" not in objects


def test_a_pause_asked_again_of_a_held_container_holds_it_and_does_not_fail(docker_engine):
    """The hold's pause is tried again when the kernel could not freeze in time; a retry that finds the container
    paused already (the first answer failed, the freeze came after all) is a hold, not an error."""
    from omni.box.bound import paused
    box = docker_engine.containers.run(IMAGE, ["sleep", "600"], detach=True, network_disabled=True)
    try:
        paused(box)
        paused(box, tries=1)  # the engine refuses a second pause: the container is held, so it returns
        box.reload()
        assert box.status == "paused"
        box.unpause()
        box.reload()
        assert box.status == "running"
    finally:
        box.remove(force=True)


# ---- 8. the growth budget counts everything --------------------------------------------------------------------
@pytest.mark.parametrize("attack", [
    "mkdir -p .omni/x/.git && head -c 39000000 /dev/zero > .omni/x/.git/blob",  # where nothing counted
    "mkdir -p sub/.git && head -c 39000000 /dev/zero > sub/.git/blob",
    "mkdir many && cd many && seq 1 60000 | xargs touch",  # 60,000 empty files
    # after its command returned, a writer that left the command's process group fills .omni/ (nothing counted it)
    "setsid sh -c 'sleep 2; mkdir -p .omni/late; for i in 1 2 3 4 5 6 7 8; do head -c 4000000 /dev/zero > "
    ".omni/late/$i; done' > /dev/null 2>&1 & sleep 0.5; echo started",
])
def test_the_growth_budget_counts_everything(tmp_path, fake, docker_engine, attack):
    repo = make_repo(tmp_path / "repo", FINE)
    fake.add(PLAN, shell(attack), shell("sleep 5; echo waited"), shell("echo more"), finish(), finish())
    run = run_omni(repo, "--yes", "--max-workspace-mb", "5", "grow", fake=fake, env=user_env(tmp_path))
    assert run.code == 1, run.stdout[-3000:] + run.stderr[-2000:]
    summary = run.summary()
    assert summary["status"] == "sandbox_error" and "past its limit of 5 MiB" in summary["message"]
    assert summary["applied"] is False and summary["changed_files"] == []
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", ":!.omni") == ""
