"""The Docker sandbox against a real engine: hardening, containment, isolation of the user's repo."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import docker
import pytest
from conftest import CALC, clean_env, git, make_repo, run_omni

from omni.box.sandbox import LABEL, DockerSandbox, SandboxConfig, remove_stale
from omni.box.workspace import Workspace, find_repo

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module", params=["bind", "copy"])
def box(request, tmp_path_factory, docker_engine):
    """One sandbox for the module's tests, on each path: this machine's engine with the worktree bind-mounted, and
    a second engine over TCP with the worktree copied in and back."""
    client = docker_engine if request.param == "bind" else request.getfixturevalue("remote_engine").client
    os.environ["OPENAI_API_KEY"] = "sk-must-not-leak"  # present in omni's own environment
    repo = make_repo(tmp_path_factory.mktemp("sbx") / "repo", CALC)
    workspace = Workspace(find_repo(repo), "sandbox-test")
    workspace.create()
    sandbox = DockerSandbox("sandbox-test", workspace.path, repo / ".git", SandboxConfig(project_env=False),
                            client=client)
    assert sandbox.mount.kind == request.param
    sandbox.repo = repo
    yield sandbox
    sandbox.close()
    workspace.remove()
    os.environ.pop("OPENAI_API_KEY")


def sh(box, command: str, timeout: int = 30):
    return box.run_tool("shell", {"command": command, "timeout": timeout}, timeout + 10)


def processes(box) -> list[str]:
    return [" ".join(p) for p in box.container.top(ps_args="-eo pid,args")["Processes"]]


def test_inspect_shows_every_hardening_setting(box):
    box.container.reload()
    host = box.container.attrs["HostConfig"]
    config = box.container.attrs["Config"]
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == 512
    assert host["Memory"] == 2 * 1024**3 and host["MemorySwap"] == host["Memory"]
    assert host["NanoCpus"] == 2_000_000_000
    assert host["NetworkMode"] == "none"
    assert host["Privileged"] is False
    assert "/tmp" in host["Tmpfs"] and "size=" in host["Tmpfs"]["/tmp"]
    assert config["User"] and not config["User"].startswith("0")
    mounts = {m["Destination"]: m for m in box.container.attrs["Mounts"]}
    git_dir = box.repo / ".git"
    if box.mount.kind == "bind":
        assert mounts["/workspace/.git"]["RW"] is False and mounts["/omni/tools"]["RW"] is False
        assert str(git_dir) not in mounts  # only the parts git needs, never the whole folder
        assert mounts[str(git_dir / "objects")]["RW"] is False and mounts[str(git_dir / "config")]["RW"] is False
    else:  # copied: no host folder at all, only the container's own volumes (root's where it may not write)
        assert host["Binds"] in (None, []) and {m["Type"] for m in mounts.values()} == {"volume"}
        assert sorted(mounts) == sorted(["/workspace", "/omni/tools", str(git_dir)])
        for path in ("/omni/tools/server.py", f"{git_dir}/config", f"{git_dir}/objects", "/workspace/.git"):
            refused = sh(box, f"touch {path}/x 2>&1 || echo x >> {path}")
            assert not refused.success, path
    sources = {m["Source"] for m in mounts.values()}
    assert not any("docker.sock" in s for s in sources)
    assert str(Path.home()) not in sources
    env = "\n".join(config["Env"])
    assert "sk-must-not-leak" not in env and "API_KEY" not in env


def test_env_inside_shows_no_api_keys(box):
    out = sh(box, "env").output
    assert "sk-must-not-leak" not in out and "API_KEY" not in out
    assert "HOME=/tmp" in out


def test_not_root_and_files_belong_to_the_host_user_after_the_run(box):
    assert "uid=0(" not in sh(box, "id").output
    assert sh(box, "echo made > owned.txt").success


@pytest.mark.parametrize("command", ["echo x > /etc/evil", "touch /usr/bin/evil", "mkdir /evil",
                                     "echo x > /omni/tools/evil.py", "rm -rf .git", "git reset --hard",
                                     "git commit --allow-empty -m sneaky", "echo x >> .git"])
def test_writes_outside_the_workspace_are_refused(box, command):
    result = sh(box, command)
    assert not result.success, command
    assert result.exit_code not in (0, None)
    assert sh(box, "echo still alive").success


def test_symlink_out_of_the_workspace_cannot_be_written_through(box):
    result = sh(box, "ln -sf /etc/passwd link_out && echo pwned >> link_out")
    assert not result.success and ("Read-only file system" in result.output or "Permission denied" in result.output)
    refused = box.run_tool("read_file", {"path": "link_out"}, 10)
    assert refused.failure == "tool_error" and "points outside the repository" in refused.error
    edit = box.run_tool("create_file", {"path": "link_out", "content": "x", "overwrite": True}, 10)
    assert not edit.success and "points outside" in edit.error
    assert "pwned" not in Path("/etc/passwd").read_text()


@pytest.mark.parametrize("command", [
    "python3 -c \"import urllib.request; urllib.request.urlopen('https://pypi.org', timeout=5)\"",
    "pip download --no-deps -d /tmp/x six --timeout 5 --retries 0",
    "exec 3<>/dev/tcp/1.1.1.1/80",
    "curl -sS --max-time 5 https://pypi.org",
])
def test_network_is_off(box, command):
    result = sh(box, command, timeout=40)
    assert not result.success, result.output


def test_fork_bomb_is_contained(box):
    started = time.monotonic()
    result = sh(box, ":(){ :|:& };:", timeout=8)
    assert "fork" in result.output  # it hit the PID limit ("fork: retry: Resource temporarily unavailable")
    assert time.monotonic() - started < 15
    assert sh(box, "echo after the bomb").output.strip() == "after the bomb"
    assert len(processes(box)) < 10, processes(box)  # the group was killed and no zombies remain


def test_memory_hog_is_killed_and_reported(box):
    result = sh(box, "python3 -c \"b = b'x' * (3 * 1024**3)\"", timeout=60)
    assert not result.success
    assert "killed by SIGKILL" in result.error or "MemoryError" in result.output
    assert sh(box, "echo ok").success


def test_sleep_is_killed_at_the_timeout_and_the_next_command_works(box):
    started = time.monotonic()
    result = sh(box, "sleep 100000", timeout=2)
    assert result.failure == "timeout" and "killed" in result.error
    assert time.monotonic() - started < 8
    assert sh(box, "echo next").output.strip() == "next"
    assert not any("sleep 100000" in p for p in processes(box))


def test_background_process_holding_stdout_does_not_hang(box):
    started = time.monotonic()
    result = sh(box, "sleep 300 & echo started", timeout=30)
    assert result.success and "started" in result.output
    assert time.monotonic() - started < 5
    assert not any("sleep 300" in p for p in processes(box))


def test_stdin_is_closed(box):
    started = time.monotonic()
    result = sh(box, "read line; echo got:$line", timeout=20)
    assert result.output.strip() == "got:" and time.monotonic() - started < 5


def test_fifty_megabytes_of_output_are_capped(box):
    result = sh(box, "head -c 50000000 /dev/zero | tr '\\0' a", timeout=60)
    assert result.success and result.truncated
    assert result.elided_bytes > 49_000_000
    assert len(result.output) < 20_000


def test_non_utf8_output_is_decoded_with_replacement(box):
    result = sh(box, "printf 'ok \\xff\\xfe end'")
    assert result.success and "ok \ufffd\ufffd end" in result.output


def wait_for(box, text: str, present: bool, limit: float = 10) -> None:
    deadline = time.monotonic() + limit
    while any(text in p for p in processes(box)) != present:
        assert time.monotonic() < deadline, f"{text!r} {'never started' if present else 'is still running'}"
        time.sleep(0.1)


def test_a_cancel_on_the_stream_interrupts_the_command(box):
    send = box.channel.transport.send
    send(json.dumps({"id": 9001, "tool": "shell", "args": {"command": "sleep 4242", "timeout": 600}}).encode() + b"\n")
    wait_for(box, "sleep 4242", True)
    send(json.dumps({"cancel": 9001}).encode() + b"\n")  # what Ctrl-C sends
    wait_for(box, "sleep 4242", False, limit=5)
    assert sh(box, "echo next").output.strip() == "next"  # the cancelled call's reply was dropped, in order


def test_ctrl_c_in_the_client_leaves_no_stray_process(box):
    timer = threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT))  # a real Ctrl-C, mid-call
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        box.run_tool("shell", {"command": "sleep 4343", "timeout": 600}, 600)
    assert time.monotonic() - started < 5
    wait_for(box, "sleep 4343", False, limit=5)
    assert sh(box, "echo after").output.strip() == "after"


def test_closing_the_stream_stops_the_server_and_what_it_started(tmp_path, docker_engine):
    from conftest import own_sandbox

    with own_sandbox(tmp_path, "closing", CALC) as other:
        other.channel.transport.send(json.dumps({"id": 1, "tool": "shell", "args": {
            "command": "setsid sleep 4444 & sleep 4545", "timeout": 600}}).encode() + b"\n")
        wait_for(other, "sleep 4545", True)
        other.channel.close()  # omni went away (kill -9, a closed terminal): nothing it started goes on
        wait_for(other, "sleep 4", False, limit=5)
        assert not any("server.py --stdio" in p for p in processes(other))


def test_stale_sandboxes_are_removed(docker_engine):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = docker_engine.containers.run("omni-sandbox:0.1.0", ["sleep", "600"], detach=True,
                                         labels={LABEL: "stale", "org.omni.pid": str(dead.pid),
                                                 "org.omni.host": socket.gethostname()})
    live = docker_engine.containers.run("omni-sandbox:0.1.0", ["sleep", "600"], detach=True,
                                        labels={LABEL: "live", "org.omni.pid": str(os.getpid()),
                                                "org.omni.host": socket.gethostname()})
    # another machine's run on a shared engine: its pid means nothing here, so it is left to that machine
    other = docker_engine.containers.run("omni-sandbox:0.1.0", ["sleep", "600"], detach=True,
                                         labels={LABEL: "other", "org.omni.pid": str(dead.pid),
                                                 "org.omni.host": "another-machine"})
    try:
        removed = remove_stale(docker_engine)
        assert stale.name in removed and live.name not in removed and other.name not in removed
        assert {c.id for c in docker_engine.containers.list(all=True)} & {stale.id, other.id} == {other.id}
    finally:
        live.remove(force=True)
        other.remove(force=True)


def test_runs_at_once_remove_the_same_stale_sandboxes_without_failing(docker_engine):
    """omni batch starts many runs together: each clears what a killed run left, and a removal that another run
    has under way (409) or has done (404) is that run's, not an error that stops this one."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [docker_engine.containers.run("omni-sandbox:0.1.0", ["sleep", "600"], detach=True,
                                          labels={LABEL: f"stale-{n}", "org.omni.pid": str(dead.pid),
                                                  "org.omni.host": socket.gethostname()}) for n in range(6)]
    start, found, failed = threading.Barrier(4), [], []

    def clear() -> None:
        start.wait()
        try:
            found.extend(remove_stale(docker.from_env(timeout=120)))
        except Exception as exc:  # noqa: BLE001 - the failure this test is about
            failed.append(exc)

    workers = [threading.Thread(target=clear) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert failed == [] and {c.name for c in stale} <= set(found)
    assert not {c.id for c in docker_engine.containers.list(all=True)} & {c.id for c in stale}


# ---- the user's repository ----------------------------------------------------------------------
def tree(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".omni") or (rel.startswith(".git/") and not rel.startswith((".git/refs", ".git/HEAD"))):
            continue
        if rel.startswith(".git/refs/heads/omni/"):  # the run's own result branch, by design
            continue
        if path.is_file() and not path.is_symlink():
            out[rel] = path.read_bytes()
    return out


def dirty_repo(tmp_path) -> Path:
    repo = make_repo(tmp_path / "repo", {**CALC, "old.py": "print('old')\n", ".gitignore": "build/\n",
                                        "keep.txt": "keep\n"})
    (repo / "calc.py").write_text(CALC["calc.py"] + "# uncommitted edit\n")
    git(repo, "add", "calc.py")
    (repo / "keep.txt").write_text("keep, changed and not staged\n")
    (repo / "scratch.txt").write_text("untracked notes\n")
    (repo / "build").mkdir()
    (repo / "build" / "artifact.bin").write_bytes(b"\x00ignored\xff")
    return repo


def test_the_python_files_a_build_wrote_into_the_projects_packages_come_along_and_stay_out_of_the_diff(tmp_path):
    """setuptools-scm and hatch-vcs write src/<pkg>/_version.py, which git ignores and the package imports: without
    it in the worktree every test fails to import. Ignored Python files in a tracked package come along; ignored
    folders (a virtualenv, a build) and ignored files elsewhere do not, and nothing ignored enters the run's diff."""
    repo = make_repo(tmp_path / "repo", {"src/pkg/__init__.py": "from ._version import version\n",
                                         ".gitignore": "_version.py\n.venv/\nbuild/\nnotes.py\n", "notes.txt": "x\n"})
    generated = {"src/pkg/_version.py": "version = '1.0'\n", ".venv/lib/site.py": "x = 1\n",
                 "build/lib/pkg/_version.py": "version = '0'\n", "notes.py": "private = 1\n"}
    for name, text in generated.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    workspace = Workspace(find_repo(repo), "generated-test")
    workspace.create()
    try:
        copied = {name for name in generated if (workspace.path / name).exists()}
        assert copied == {"src/pkg/_version.py"}
        assert (workspace.path / "src/pkg/_version.py").read_text() == "version = '1.0'\n"
        assert git(workspace.path, "status", "--porcelain") == ""  # still ignored there
        assert git(workspace.path, "show", "--stat", "--format=", "HEAD") == ""  # not in the starting state
    finally:
        workspace.remove()
    assert git(repo, "status", "--porcelain") == ""  # the user's tree as it was


REWRITE = [
    {"text": "1. Rewrite\n2. Finish"},
    {"tool": "delete_file", "args": {"path": "old.py"}},
    {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}},
    {"tool": "create_file", "args": {"path": "pkg/new.py", "content": "VALUE = 42\n"}},
    {"tool": "shell", "args": {"command": "rm -f scratch.txt && echo gone"}},
    {"tool": "finish", "args": {"summary": "rewrote"}},
]


def test_dirty_tree_is_untouched_until_apply_and_apply_brings_exactly_the_diff(tmp_path, fake, docker_engine):
    repo = dirty_repo(tmp_path)
    before = tree(repo)
    index_before = git(repo, "diff", "--cached")
    fake.add(*REWRITE)
    run = run_omni(repo, "rewrite things", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    assert tree(repo) == before and git(repo, "diff", "--cached") == index_before
    assert "You changed" not in run.stdout and "omni apply" in run.stdout
    owner = {p.stat().st_uid for p in (repo / ".omni").rglob("*")}
    assert owner == {os.getuid()}

    applied = run_omni(repo, "apply", run.summary()["run_id"])
    assert applied.code == 0, applied.stdout
    after = tree(repo)
    expected = dict(before)
    del expected["old.py"], expected["scratch.txt"]
    expected["calc.py"] = before["calc.py"].replace(b"return a - b", b"return a + b")
    expected["pkg/new.py"] = b"VALUE = 42\n"
    assert after == expected
    assert (repo / "build" / "artifact.bin").read_bytes() == b"\x00ignored\xff"
    assert git(repo, "diff", "--cached") == index_before  # the index is the user's, untouched


def test_apply_refuses_when_the_user_changed_the_same_file(tmp_path, fake, docker_engine):
    repo = dirty_repo(tmp_path)
    fake.add(*REWRITE)
    run = run_omni(repo, "rewrite things", fake=fake)
    assert run.code == 0
    (repo / "calc.py").write_text("# the user kept working\n")
    applied = run_omni(repo, "apply", run.summary()["run_id"])
    assert applied.code == 1 and "calc.py" in applied.stdout and "so nothing was done" in applied.stdout
    assert (repo / "calc.py").read_text() == "# the user kept working\n"
    assert (repo / "old.py").exists()


def test_no_docker_engine_gives_a_clear_message_and_exit_2(calc_repo, fake):
    env = clean_env(DOCKER_HOST="unix:///nonexistent/docker.sock")
    run = run_omni(calc_repo, "fix", fake=fake, env=env)
    assert run.code == 2
    assert "No Docker engine answered" in run.stderr and "--sandbox local" in run.stderr
    assert not (calc_repo / ".omni").exists() and fake.requests == []


def test_first_run_builds_a_missing_image_with_one_progress_line_and_a_log(calc_repo, fake, docker_engine, tmp_path):
    # The default base (python:3.11-slim-bookworm) is not on this machine and no registry answers, so
    # omni makes its base from Debian packages (omni-base:bookworm is there from CI's setup: instant).
    tag = f"omni-sandbox:autobuild-{os.getpid()}"
    fake.add({"text": "1. Look"}, *[{"tool": "finish", "args": {"summary": "looked"}}] * 2)
    env = clean_env(OMNI_SANDBOX_IMAGE=tag, XDG_CACHE_HOME=str(tmp_path / "cache"))
    try:
        run = run_omni(calc_repo, "--yes", "look", fake=fake, env=env, timeout=900)
        assert run.code == 0, run.stdout + run.stderr
        assert "Building the sandbox image (once; the full log:" in run.stdout and f"built {tag} in" in run.stdout
        assert "Successfully built" not in run.stdout and "Step 2/" not in run.stdout  # condensed
        log = next((tmp_path / "cache" / "omni" / "logs").glob("build-*.log")).read_text()
        assert "Successfully built" in log or "naming to" in log
        if not docker_engine.images.list("python:3.11-slim-bookworm"):
            assert "cannot pull python:3.11-slim-bookworm" in log and "omni-base:bookworm" in log
        assert docker_engine.images.get(tag)
        assert "image_build" not in run.kinds()  # built before the run began: nothing of it is in the record
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


def test_no_registry_and_no_debootstrap_exits_2_before_anything_is_written(calc_repo, fake, docker_engine):
    tag = f"omni-sandbox:never-{os.getpid()}"
    path = ":".join(p for p in os.environ["PATH"].split(":") if "sbin" not in p)  # debootstrap is in /usr/sbin
    env = clean_env(OMNI_SANDBOX_IMAGE=tag, OMNI_BASE_IMAGE="omni-test-no-such-base:1", PATH=path)
    run = run_omni(calc_repo, "--yes", "look", fake=fake, env=env, timeout=300)
    assert run.code == 2, run.stdout + run.stderr
    assert "cannot be pulled" in run.stderr and "needs debootstrap" in run.stderr
    assert 'sudo apt-get install -y debootstrap && sudo "$(command -v omni)" sandbox build --offline-base' in run.stderr
    assert not (calc_repo / ".omni").exists() and fake.requests == []
    assert "omni/" not in git(calc_repo, "branch")
