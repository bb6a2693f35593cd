"""Delegating to Aider: real aider-chat from PyPI in the real sandbox container (the image's Aider layer), its model
requests through omni's relay to the scripted OpenAI-compatible server; the key stays on the host; the tool, /aider
in the session (pexpect), and a spec's aider step."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid

import pexpect
import pytest

from conftest import CALC, clean_env, git, own_sandbox, run_omni
from fake_server import FakeOpenAI
from omni.model.endpoint import ModelConfig
from omni.model.relay import ChatRelay
from omni.model.usage import UsageMeter

pytestmark = pytest.mark.docker

FIX = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
BREAK = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return (a +\n>>>>>>> REPLACE\n```\n"
PLAN = {"text": "1. Have Aider fix add\n2. Finish"}
FINISH = {"tool": "finish", "args": {"summary": "add fixed by Aider"}}
SCRIPTED = ["--no-review", "--no-finish-on-check", "--samples", "1", "--no-reproduce", "--no-opening-repair"]


@pytest.fixture(scope="session")
def aider_image(docker_engine):
    """The sandbox image with Aider's layer, built if missing (once: a few minutes)."""
    from omni.box import images

    tag = images.aider_tag(images.SANDBOX_TAG)
    if not images.exists(docker_engine, tag):
        images.build_aider_image(docker_engine, images.SANDBOX_TAG)
    return tag


class Events:
    def __init__(self):
        self.seen: list[tuple[str, dict]] = []

    def emit(self, kind: str, **fields) -> None:
        self.seen.append((kind, fields))

    def of(self, kind: str) -> list[dict]:
        return [f for k, f in self.seen if k == kind]


def relayed(box, fake, key="sk-test-key", max_cost=None):
    events = Events()
    meter = UsageMeter(events)
    box.set_relay(ChatRelay(ModelConfig(model="fake-model", base_url=fake.base_url, api_key=key), meter, events,
                            max_cost))
    return events, meter


def test_a_search_replace_reply_edits_the_file_through_the_relay(tmp_path, aider_image):
    with FakeOpenAI([{"text": FIX, "usage": {"prompt_tokens": 900, "completion_tokens": 40}}]) as fake, \
            own_sandbox(tmp_path, "aider", CALC, config={"aider": True}) as box:
        events, meter = relayed(box, fake)
        result = box.run_tool("aider_edit", {"instruction": "make add in calc.py add", "model": "fake-model",
                                            "timeout": 240}, 300)
        assert result.success, result.error
        assert result.details["changed"] == [{"path": "calc.py", "added": 1, "removed": 1}]
        assert "-    return a - b\n+    return a + b\n" in result.details["diff"]
        assert result.details["files"] == ["calc.py"] and result.details["picked_by"] == "named in the instruction"
        assert "return a + b" in (box.workspace / "calc.py").read_text()
        assert not list(box.workspace.glob(".aider*"))  # Aider's own state is not left in the worktree
        # one request, forwarded with the host's key and the run's model; its tokens are the run's
        assert len(fake.requests) == 1 and fake.headers[0]["authorization"] == "Bearer sk-test-key"
        assert fake.requests[0]["model"] == "fake-model"
        assert "<<<<<<< SEARCH" in json.dumps(fake.requests[0]["messages"])  # Aider's own edit format prompt
        assert (meter.total.prompt_tokens, meter.total.completion_tokens) == (900, 40)
        assert [e["forwarded"] for e in events.of("relay")] == [True]


def test_an_edit_that_breaks_the_syntax_is_rolled_back_and_nothing_is_a_failure(tmp_path, aider_image):
    with FakeOpenAI([{"text": BREAK}, {"text": BREAK}, {"text": BREAK}, {"text": BREAK},
                     {"text": "I would rather not change anything."}]) as fake, \
            own_sandbox(tmp_path, "aider-gate", CALC, config={"aider": True}) as box:
        relayed(box, fake)
        broken = box.run_tool("aider_edit", {"instruction": "change add", "files": ["calc.py"], "model": "m",
                                            "timeout": 240}, 300)
        assert not broken.success and broken.failure == "lint_failed", broken.error
        assert "rolled back" in broken.error and "calc.py" in broken.error
        assert (box.workspace / "calc.py").read_text() == CALC["calc.py"]
        fake.script[:] = [{"text": "I would rather not change anything."}]
        nothing = box.run_tool("aider_edit", {"instruction": "change add", "files": ["calc.py"], "model": "m",
                                             "timeout": 240}, 300)
        assert not nothing.success and nothing.failure == "edit_failed" and nothing.details["unchanged"]


def test_files_are_picked_from_the_names_the_instruction_uses_then_from_the_hints(tmp_path, aider_image):
    files = {**CALC, "util/strings.py": "def shout(text):\n    return text\n"}
    with FakeOpenAI([{"text": "Nothing to do."}, {"text": "Nothing to do."}]) as fake, \
            own_sandbox(tmp_path, "aider-pick", files, config={"aider": True}) as box:
        relayed(box, fake)
        hinted = box.run_tool("aider_edit", {"instruction": "tidy this up", "hints": ["gone.py", "test_calc.py"],
                                            "model": "m", "timeout": 240}, 300)
        assert hinted.details["files"] == ["test_calc.py"]
        assert hinted.details["picked_by"] == "from the run's briefing and recent steps"
        named = box.run_tool("aider_edit", {"instruction": "make shout upper-case its text", "model": "m",
                                           "timeout": 240}, 300)
        assert named.details["files"] == ["util/strings.py"]
        assert named.details["picked_by"] == "defining a name the instruction uses"


def _in_container(box, script: str) -> str:
    """A shell script run as the sandbox user (Aider's own) in the sandbox (docker exec), its output."""
    return box.container.exec_run(["sh", "-c", script], user=f"{box.owner[0]}:{box.owner[1]}").output.decode(
        "utf-8", "replace")


def test_the_key_is_nowhere_in_the_container_while_aider_runs(tmp_path, aider_image):
    key = f"sk-omni-{uuid.uuid4().hex}"
    with FakeOpenAI([{"stall": 12}]) as fake, own_sandbox(tmp_path, "aider-key", CALC, config={"aider": True}) as box:
        relayed(box, fake, key=key)
        done = []
        worker = threading.Thread(target=lambda: done.append(box.run_tool(
            "aider_edit", {"instruction": "fix add in calc.py", "model": "m", "timeout": 40}, 100)))
        worker.start()
        deadline = time.monotonic() + 60
        while not fake.requests and time.monotonic() < deadline:  # Aider's request is at the server: it runs
            time.sleep(0.2)
        assert fake.requests, "Aider never reached the model"
        processes = _in_container(box, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; "
                                  "tr '\\0' '\\n' < $p/environ 2>/dev/null; done")
        assert "/opt/aider/bin/aider" in processes and "OPENAI_API_KEY=omni-relay" in processes  # its placeholder
        assert key not in processes
        half = key[: len(key) // 2 + 4]  # grep's own arguments hold only a part of it
        files = _in_container(box, f"grep -rlF -D skip -- '{half}' /workspace /tmp /etc /opt /home /root /var /usr "
                              "/srv /run /omni /mnt 2>/dev/null; echo searched")  # every folder but /proc, /sys, /dev
        assert files.strip() == "searched"
        worker.join(120)
    assert fake.headers[0]["authorization"] == f"Bearer {key}"  # the key did reach the model, from the host


def test_the_relay_forwards_chat_completions_and_refuses_the_rest(tmp_path, aider_image):
    with FakeOpenAI([{"text": "hello from the model"}]) as fake, \
            own_sandbox(tmp_path, "aider-relay", CALC, config={"aider": True}) as box:
        events, _ = relayed(box, fake)
        port = 23456
        ended = []
        worker = threading.Thread(target=lambda: ended.append(box.run_tool(
            "aider_edit", {"port": port, "timeout": 120}, 150)))
        worker.start()
        ask = ("import json, sys, urllib.request, urllib.error\n"
               "def go(method, path, body=None):\n"
               f"    r = urllib.request.Request('http://127.0.0.1:{port}' + path, method=method,\n"
               "        data=json.dumps(body).encode() if body is not None else None)\n"
               "    try:\n"
               "        with urllib.request.urlopen(r, timeout=30) as a: return a.status, a.read().decode()\n"
               "    except urllib.error.HTTPError as e: return e.code, e.read().decode()\n"
               "print(json.dumps([go('GET', '/v1/models'), go('POST', '/v1/embeddings', {'input': 'x'}),\n"
               "    go('POST', '/v1/files', {}), go('POST', '/v1/chat/completions', {'model': 'x', 'messages':\n"
               "    [{'role': 'user', 'content': 'hi'}]})]))\n")
        answers = None
        for _ in range(50):  # the relay listens once the call is running
            out = box.container.exec_run(["/opt/omni-tools/bin/python", "-c", ask], user=f"{box.owner[0]}")
            if out.exit_code == 0:
                answers = json.loads(out.output.decode())
                break
            time.sleep(0.2)
        box.cancel_running()
        worker.join(60)
    assert answers is not None
    assert [a[0] for a in answers] == [403, 403, 403, 200]
    assert "not a chat completion" in answers[0][1] and "hello from the model" in answers[3][1]
    assert len(fake.requests) == 1  # nothing refused reached the model
    refused = [e for e in events.of("relay") if not e["forwarded"]]
    assert [e["path"] for e in refused] == ["/v1/models", "/v1/embeddings", "/v1/files"]
    assert ended and not ended[0].success and ended[0].details["unchanged"]  # the session itself changed nothing


def test_the_relay_stops_at_the_runs_cost_limit(tmp_path):
    with FakeOpenAI([{"text": "one", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0}}]) as fake:
        events = Events()
        meter = UsageMeter(events)
        relay = ChatRelay(ModelConfig(model="m", base_url=fake.base_url, api_key="k", price="1,1"), meter, events,
                          max_cost=0.5)
        body = json.dumps({"model": "other", "messages": [{"role": "user", "content": "hi"}]})
        first = relay({"method": "POST", "path": "/v1/chat/completions", "body": body})
        second = relay({"method": "POST", "path": "/v1/chat/completions", "body": body})
    assert first["status"] == 200 and meter.total.cost == pytest.approx(1.0)
    assert second["status"] == 429 and "cost limit" in second["body"] and len(fake.requests) == 1
    assert fake.requests[0]["model"] == "m"  # the run's model, whatever the tool asked for


def test_the_model_hands_an_edit_to_aider_and_the_run_finishes(calc_repo, aider_image):
    with FakeOpenAI([PLAN, {"tool": "aider_edit", "args": {"instruction": "make add return the sum"}},
                     {"text": FIX}, FINISH]) as fake:
        run = run_omni(calc_repo, "--aider", "--yes", "fix add", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    assert "return a + b" in (calc_repo / "calc.py").read_text()  # applied to the user's tree
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "aider_edit")
    assert observation["success"] and observation["details"]["changed"][0]["path"] == "calc.py"
    delegated = next(e for e in run.events() if e["kind"] == "delegate")
    assert delegated["files"] == ["calc.py"]  # picked: the file that defines `add`, a name the instruction uses
    aider_usage = [e for e in run.events() if e["kind"] == "usage" and e["purpose"] == "aider"]
    assert len(aider_usage) == 1 and run.summary()["usage"]["prompt_tokens"] >= aider_usage[0]["call"]["prompt_tokens"]
    assert "aider_edit" in json.dumps(fake.requests[1]["tools"])  # offered with --aider


def test_a_spec_step_of_type_aider_runs_end_to_end(calc_repo, aider_image):
    spec = {"task_id": "fix-calc", "natural_language_goal": "add adds", "plan": [{
        "step_id": "fix-add", "description": "make add add", "agent_spec": {
            "type": "aider", "instructions": "Make add return the sum of its arguments.",
            "input_artifacts": ["*.py"], "validation_criteria": ["run: grep -q 'return a + b' calc.py"]}}]}
    (calc_repo / "task.json").write_text(json.dumps(spec))
    git(calc_repo, "add", "task.json")
    git(calc_repo, "commit", "-qm", "spec")
    with FakeOpenAI([{"text": FIX}]) as fake:
        run = subprocess.run([sys.executable, "-m", "omni.cli", "run", "task.json", "--yes", "--base-url",
                              fake.base_url, "--model", "fake-model", "--tool-mode", "native", *SCRIPTED],
                             cwd=calc_repo, capture_output=True, text=True, timeout=300, env=clean_env())
    assert run.returncode == 0, run.stdout + run.stderr
    assert "return a + b" in (calc_repo / "calc.py").read_text()
    assert "1/1 steps passed" in run.stdout
    sent = json.dumps(fake.requests[0]["messages"])
    assert "Make add return the sum" in sent and "test_calc.py" in sent  # its input artifacts were Aider's files


def test_slash_aider_opens_aider_on_the_terminal_and_undo_takes_it_back(calc_repo, aider_image):
    before = (calc_repo / "calc.py").read_text()
    with FakeOpenAI([{"text": FIX}]) as fake:
        argv = ["-m", "omni.cli", *SCRIPTED, "--base-url", fake.base_url, "--model", "fake-model", "--tool-mode",
                "native"]
        child = pexpect.spawn(sys.executable, argv, cwd=str(calc_repo), env=clean_env(COLUMNS="160", TERM="xterm"),
                              encoding="utf-8", timeout=180, dimensions=(50, 160))
        child.expect("omni>")
        child.sendline("/aider")
        child.expect("calc.py", timeout=240)  # Aider's banner: the repository, then its prompt
        child.expect(r">\s", timeout=120)
        child.sendline("/add calc.py")
        child.expect(r">\s", timeout=60)
        child.sendline("make add return the sum")
        child.expect("Applied edit to calc.py", timeout=120)
        child.expect(r">\s", timeout=60)
        child.sendline("/exit")
        child.expect(r"Apply .*\?", timeout=240)  # back in omni: the gate passed, and the apply is asked
        child.sendline("y")
        child.expect("omni>", timeout=120)
        assert "return a + b" in (calc_repo / "calc.py").read_text()
        child.sendline("/undo")
        child.expect("omni>", timeout=60)
        child.sendline("/quit")
        child.expect(pexpect.EOF, timeout=60)
        child.close()
    assert (calc_repo / "calc.py").read_text() == before
    assert len(fake.requests) == 1 and "Bearer" in fake.headers[0]["authorization"]
    summary = json.loads(next((calc_repo / ".omni" / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["status"] == "finished" and summary["changed_files"][0]["path"] == "calc.py"


def test_without_aider_in_the_image_the_tool_says_how_to_add_it(tmp_path, docker_engine):
    with FakeOpenAI() as fake, own_sandbox(tmp_path, "no-aider", CALC) as box:
        relayed(box, fake)
        result = box.run_tool("aider_edit", {"instruction": "x", "model": "m"}, 60)
    assert not result.success and "omni sandbox build --with-aider" in result.error


def test_aider_edit_is_offered_only_with_aider():
    from omni.box.toolbox import Toolbox

    assert "aider_edit" not in Toolbox().names and "aider_edit" not in Toolbox("core").names
    assert "aider_edit" in Toolbox(aider=True).names and "aider_edit" in Toolbox("core", aider=True).names


def test_slash_aider_at_the_pause_makes_a_step_the_model_is_told_of(calc_repo, aider_image):
    with FakeOpenAI([PLAN, {"tool": "shell", "args": {"command": "sleep 60", "timeout": 120}}, {"text": FIX},
                     FINISH]) as fake:
        argv = ["-m", "omni.cli", *SCRIPTED, "--aider", "--base-url", fake.base_url, "--model", "fake-model",
                "--tool-mode", "native", "fix add"]
        child = pexpect.spawn(sys.executable, argv, cwd=str(calc_repo), env=clean_env(COLUMNS="160", TERM="xterm"),
                              encoding="utf-8", timeout=120, dimensions=(50, 160))
        child.expect("shell")
        time.sleep(1.5)  # the sleep runs in the sandbox
        child.sendintr()
        child.expect("omni paused>")
        child.sendline("/aider make add in calc.py return the sum")
        child.expect("Aider changed 1 file", timeout=180)
        child.expect("omni paused>")
        child.sendline("")
        child.expect(r"\[y/N/d\]", timeout=180)
        child.sendline("y")
        child.expect(pexpect.EOF, timeout=120)
        child.close()
    assert child.exitstatus == 0
    assert "return a + b" in (calc_repo / "calc.py").read_text()
    told = fake.requests[-1]["messages"][-1]["content"]
    assert "The user had Aider work on the code" in told and "calc.py" in told
    branch = next(b for b in git(calc_repo, "branch", "--format=%(refname:short)").split() if b.startswith("omni/"))
    # the pause's change is a step of its own, which /undo would take back
    assert "omni step: aider_edit" in git(calc_repo, "log", "--format=%s", "-3", branch)


def test_aider_outside_the_docker_sandbox_is_refused_before_anything_is_written(calc_repo):
    with FakeOpenAI() as fake:
        run = run_omni(calc_repo, "--aider", "fix add", fake=fake, sandbox="local")
    assert run.code == 2 and "Aider runs only inside the Docker sandbox" in run.stderr + run.stdout
    assert not (calc_repo / ".omni" / "runs").exists() and fake.requests == []


def test_files_outside_the_worktree_are_a_model_facing_error(tmp_path, aider_image):
    with FakeOpenAI() as fake, own_sandbox(tmp_path, "aider-out", CALC, config={"aider": True}) as box:
        relayed(box, fake)
        result = box.run_tool("aider_edit", {"instruction": "x", "files": ["../../etc/passwd"], "model": "m"}, 60)
        assert not result.success and "outside the repository" in result.error
        assert (box.workspace / "calc.py").read_text() == CALC["calc.py"] and fake.requests == []
