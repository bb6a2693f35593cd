"""Shared fixtures: real git repos in temp dirs, the scripted OpenAI-compatible server over real HTTP,
the omni CLI as a subprocess, and a real Docker engine (skipped only where none runs, and never in CI)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeOpenAI

GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
# A shell that starts the suite in the background (`bash .ci/run &`, nohup) starts it with Ctrl-C ignored, and every
# omni the tests start inherits that: the tests that press Ctrl-C themselves would see nothing happen.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SECRET_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENROUTER_API_KEY", "OLLAMA_HOST",
              "OMNI_MODEL", "OMNI_PLANNER_MODEL")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path, files: dict[str, str], commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-qm", "initial")
    return path


def changed_line(before: str, after: str) -> int:
    """The line of before that a one-line change changes, or drops (numbered from 1)."""
    return next(n for n, (a, b) in enumerate(zip(before.splitlines(), [*after.splitlines(), ""], strict=False), 1)
                if a != b)


CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
                    "def test_mul():\n    assert mul(2, 3) == 6\n",
}


# The same module with its tests passing: for runs whose subject is not the code (security, display, the channel).
FINE = {**CALC, "calc.py": CALC["calc.py"].replace("a - b", "a + b")}


PLAN = {"text": "1. Do it\n2. Finish"}  # a scripted plan reply, for runs whose plan does not matter


def shell(command: str, timeout: int = 60) -> dict:
    """A scripted turn: the model's shell call."""
    return {"tool": "shell", "args": {"command": command, "timeout": timeout}}


def finish(summary: str = "done") -> dict:
    """A scripted turn: the model's finish call."""
    return {"tool": "finish", "args": {"summary": summary}}


@contextlib.contextmanager
def own_sandbox(tmp_path, name: str, files: dict[str, str], config: dict | None = None, prepare=None, **options):
    """A Docker sandbox over a worktree of a repo of its own (box.workspace; box.repo is the repo);
    prepare(repo), if given, runs before the worktree and the sandbox are made."""
    from omni.box.sandbox import DockerSandbox, SandboxConfig
    from omni.box.workspace import Workspace, find_repo

    repo = make_repo(tmp_path / name, files)
    if prepare:
        prepare(repo)
    workspace = Workspace(find_repo(repo), f"{name}-test")
    workspace.create()
    box = DockerSandbox(f"{name}-test", workspace.path, repo / ".git",
                        SandboxConfig(project_env=False, **(config or {})), **options)
    box.repo, box.workspace_obj = repo, workspace
    workspace.hold = box.hold
    try:
        yield box
    finally:
        box.close()
        workspace.remove()


@pytest.fixture
def calc_repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo", CALC)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def docker_ready() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        client.images.get(IMAGE)
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def docker_engine():
    if not docker_ready():
        if os.environ.get("OMNI_REQUIRE_DOCKER") == "1":
            pytest.fail("OMNI_REQUIRE_DOCKER=1 but no Docker engine with the sandbox image answers")
        pytest.skip("no Docker engine with the omni sandbox image (run `omni sandbox build`)")
    import docker

    return docker.from_env()


IMAGE = os.environ.get("OMNI_SANDBOX_IMAGE", "omni-sandbox:0.1.0")


class Engine:
    """A Docker engine a test runs against, and how its sandboxes get the worktree: "bind" (this machine's own
    engine) or "copy" (a second engine reached over TCP, which shares no files with this machine)."""

    def __init__(self, kind: str, client, env: dict[str, str]):
        self.kind, self.client, self.env = kind, client, env

    def cli_env(self, **extra: str) -> dict[str, str]:
        return clean_env(**self.env, **extra)

    def __repr__(self) -> str:
        return self.kind


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _engine_with_image(url: str, proc, log: Path | None, what: str, source):
    """A client of the engine at url once it answers (proc, when this session started it, must not have ended),
    with the sandbox image loaded into it from the source engine."""
    import time

    import docker

    deadline = time.monotonic() + 60
    while True:
        try:
            client = docker.DockerClient(base_url=url, timeout=120)
            client.ping()
            break
        except Exception:
            if time.monotonic() > deadline or (proc and proc.poll() is not None):
                said = log.read_text()[-2000:] if log and log.exists() else ""
                pytest.fail(f"{what} did not start: {said}")
            time.sleep(0.3)
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        client.images.load(source.images.get(IMAGE).save(named=True))
    return client


@pytest.fixture(scope="session")
def remote_engine(docker_engine):
    """A second Docker engine on TCP 127.0.0.1 with its own data root, exec root and pidfile (started here, as root;
    or the one OMNI_TEST_DOCKER_TCP names), with the sandbox image loaded from the first. Nothing of this machine's
    files is shared with it, exactly as with a remote engine."""
    import shutil
    import tempfile


    url, proc, root = os.environ.get("OMNI_TEST_DOCKER_TCP", ""), None, None
    if not url:
        if os.geteuid() != 0 or not shutil.which("dockerd"):
            if os.environ.get("OMNI_REQUIRE_DOCKER") == "1":
                pytest.fail("OMNI_REQUIRE_DOCKER=1 but a second engine cannot be started (needs root and dockerd)")
            pytest.skip("a second Docker engine needs root and dockerd (or OMNI_TEST_DOCKER_TCP)")
        root = Path(tempfile.mkdtemp(prefix="od2-", dir="/tmp"))  # short: the engine's sockets live under it
        port = _free_port()
        url = f"tcp://127.0.0.1:{port}"
        # A bridge of its own: with --bridge none an engine deletes docker0, the first engine's.
        bridge = f"omni-d2-{port}"
        for command in (["link", "add", bridge, "type", "bridge"],
                        ["addr", "add", f"10.213.{port % 250}.1/24", "dev", bridge], ["link", "set", bridge, "up"]):
            subprocess.run(["ip", *command], check=True, capture_output=True)
        with open(root / "dockerd.log", "wb") as log:
            proc = subprocess.Popen(["dockerd", "--host", url, "--data-root", str(root / "data"), "--exec-root",
                                     str(root / "exec"), "--pidfile", str(root / "dockerd.pid"), "--bridge", bridge,
                                     "--iptables=false", "--ip-masq=false"], stdout=log, stderr=log)
    client = _engine_with_image(url, proc, root / "dockerd.log" if root else None, "the second engine",
                                docker_engine)
    yield Engine("copy", client, {"DOCKER_HOST": url})
    client.close()
    if proc:
        proc.terminate()
        proc.wait(timeout=60)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def podman_engine(docker_engine):
    """Podman's Docker-compatible service on a socket of its own (`podman system service`), rootful, with the
    sandbox image loaded from Docker."""
    import shutil
    import tempfile


    if os.geteuid() != 0 or not shutil.which("podman"):
        if os.environ.get("OMNI_REQUIRE_DOCKER") == "1":
            pytest.fail("OMNI_REQUIRE_DOCKER=1 but podman is missing (apt-get install podman) or not root")
        pytest.skip("podman is not installed (or not root)")
    folder = Path(tempfile.mkdtemp(prefix="omni-podman-"))
    url = f"unix://{folder}/podman.sock"
    with open(folder / "service.log", "wb") as log:
        proc = subprocess.Popen(["podman", "system", "service", "--time=0", url], stdout=log, stderr=log)
    client = _engine_with_image(url, proc, folder / "service.log", "podman's service", docker_engine)
    yield Engine("podman", client, {"DOCKER_HOST": url})
    client.close()
    proc.terminate()
    proc.wait(timeout=60)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["bind", "copy"])
def engine(request, docker_engine):
    """Each test that takes it runs twice: on this machine's engine (the worktree bind-mounted) and on a second
    engine over TCP (the worktree copied in and back)."""
    if request.param == "bind":
        return Engine("bind", docker_engine, {})
    return request.getfixturevalue("remote_engine")


def clean_env(**extra: str) -> dict[str, str]:
    """omni's environment in tests: no provider variables, and --local's search pointed at a port where nothing
    listens, so a model server the developer runs (llama.cpp on 8080, say) is never found by accident."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env["OMNI_LOCAL_PORTS"] = "1"
    env.update(extra)
    return env


class OmniRun:
    def __init__(self, proc: subprocess.CompletedProcess, cwd: Path):
        self.proc, self.cwd = proc, cwd
        self.code, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr

    @property
    def run_dir(self) -> Path:
        runs = sorted((self.cwd / ".omni" / "runs").iterdir())
        assert len(runs) == 1, runs
        return runs[0]

    def events(self) -> list[dict]:
        return [json.loads(line) for line in (self.run_dir / "events.jsonl").read_text().splitlines()]

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events()]

    def summary(self) -> dict:
        return json.loads((self.run_dir / "summary.json").read_text())


def run_omni(cwd: Path, *args: str, fake: FakeOpenAI | None = None, sandbox: str = "docker",
             tool_mode: str = "native", timeout: float = 180, input: str | None = None, env=None,
             review: bool = False, reproduce: bool = False, finish_on_check: bool = False,
             opening_repair: bool = False, mechanical: bool = False) -> OmniRun:
    """The CLI as a subprocess. With a fake server, the reviewer call and the reproduction test are off
    unless a test is about them (each would take a scripted turn), and so are verified repair (unless the
    test gives --samples), its opening round, its mechanical candidates (a script's rounds of samples would
    not be asked for after one of them fixed a one-token bug), and finishing when an edit makes the check pass
    (scripts say when they finish);
    validation against the baseline and the check event run either way."""
    argv = [sys.executable, "-m", "omni.cli"]
    if fake is not None:
        argv += ["--base-url", fake.base_url, "--model", "fake-model", "--tool-mode", tool_mode,
                 "--sandbox", sandbox, *([] if review else ["--no-review"]), *([] if reproduce else ["--no-reproduce"]),
                 *([] if finish_on_check else ["--no-finish-on-check"]), *([] if "--samples" in args else
                                                                            ["--samples", "1"]),
                 *([] if opening_repair else ["--no-opening-repair"]), *([] if mechanical else ["--no-mechanical"])]
    proc = subprocess.run(argv + list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          input=input, env=env or clean_env())
    return OmniRun(proc, cwd)
