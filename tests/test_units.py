"""Pure pieces: the text-mode parser, endpoint resolution, prompt templates, the plan, the conversation."""

from __future__ import annotations

import pytest

from omni.model.endpoint import OPENROUTER_URL, resolve_endpoint, resolve_models
from omni.loop.conversation import Conversation
from omni.errors import UsageError
from omni.box.toolbox import Toolbox
from omni.loop.failures import CLASSES
from omni.loop.guard import RepeatGuard
from omni.loop.plan import Plan
from omni.prompts import PromptError, Prompts
from omni.results import Action, ToolResult
from omni.settings import Settings
from omni.model.textmode import TextFormatError, parse_actions


# ---- text mode --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    '```tool_call\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
    'Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```\n',
    '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>',
    '{"tool": "read_file", "args": {"path": "a.py"}}',
    '```\n{"function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}}\n```',
])
def test_text_parser_accepts_common_wrappers(text):
    assert [(a.name, a.args) for a in parse_actions(text)] == [("read_file", {"path": "a.py"})]


def test_text_parser_keeps_every_call_in_order():
    text = '```tool_call\n{"name": "a", "arguments": {}}\n```\n```tool_call\n{"name": "b", "arguments": {}}\n```'
    assert [a.name for a in parse_actions(text)] == ["a", "b"]


@pytest.mark.parametrize("text,message", [
    ("I would change add().", "no ```tool_call block"),
    ('```tool_call\n{"name": "read_file", "arguments": {"path": \n```', "invalid JSON"),
    ('```tool_call\n{"arguments": {}}\n```', 'no "name"'),
    ('```tool_call\n{"name": "x", "arguments": [1]}\n```', "must be a JSON object"),
])
def test_text_parser_errors_say_what_is_wrong(text, message):
    with pytest.raises(TextFormatError, match=message):
        parse_actions(text)


# ---- endpoints ----------------------------------------------------------------------------------------
def _where(found):
    return found.url, found.key, found.headers


def test_endpoint_precedence_flags_over_env():
    env = {"OPENAI_BASE_URL": "http://env/v1", "OPENAI_API_KEY": "envkey"}
    assert _where(resolve_endpoint("http://flag/v1/", "flagkey", env)) == ("http://flag/v1", "flagkey", {})
    found = resolve_endpoint(None, None, env)
    assert _where(found) == ("http://env/v1", "envkey", {})
    assert (found.url_from, found.key_from) == ("OPENAI_BASE_URL", "OPENAI_API_KEY")
    assert resolve_endpoint(None, None, {"OPENAI_API_BASE": "http://old/v1"}).url == "http://old/v1"


def test_openrouter_selects_url_and_sends_attribution_headers():
    url, key, headers = _where(resolve_endpoint(None, None, {"OPENROUTER_API_KEY": "or-key"}))
    assert (url, key) == (OPENROUTER_URL, "or-key")
    assert headers["X-Title"] == "omni" and "HTTP-Referer" in headers


@pytest.mark.parametrize("host,url", [("127.0.0.1:11434", "http://127.0.0.1:11434/v1"),
                                      ("http://gpu-box", "http://gpu-box:11434/v1")])
def test_ollama_host(host, url):
    assert _where(resolve_endpoint(None, None, {"OLLAMA_HOST": host}))[:2] == (url, "sk-no-key-needed")


@pytest.mark.parametrize("specific,url", [("OPENROUTER_API_KEY", OPENROUTER_URL),
                                          ("OLLAMA_HOST", "http://127.0.0.1:11434/v1")])
def test_a_more_specific_provider_wins_over_openai_api_key_and_says_so(specific, url):
    env = {"OPENAI_API_KEY": "sk-openai", specific: "or-key" if "KEY" in specific else "127.0.0.1"}
    found = resolve_endpoint(None, None, env)
    assert found.url == url and found.key != "sk-openai"  # the OpenAI key never goes to another provider
    assert specific in found.note and "OPENAI_API_KEY" in found.note and "--base-url" in found.note
    action, _ = resolve_models(Settings(model="m"), env)
    assert action.note == found.note
    assert resolve_endpoint(None, None, {"OPENAI_API_KEY": "sk-openai"}).note == ""


def test_openai_alone_needs_a_key_and_a_model():
    with pytest.raises(UsageError, match="No model is configured"):
        resolve_endpoint(None, None, {})
    with pytest.raises(UsageError, match="--model NAME"):
        resolve_models(Settings(api_key="k"), {})
    action, planner = resolve_models(Settings(api_key="k", model="gpt-4o-mini", planner_model="gpt-4o"), {})
    assert action.base_url == "https://api.openai.com/v1" and planner.model == "gpt-4o"


@pytest.mark.parametrize("model,missing", [("gpt-4.1-mini", "set OPENAI_API_KEY"),
                                           ("anthropic/claude-sonnet-4", "set OPENROUTER_API_KEY"),
                                           ("qwen2.5-coder", "no API key and no server URL")])
def test_a_model_with_nowhere_to_go_names_the_missing_key(model, missing):
    with pytest.raises(UsageError) as caught:
        resolve_models(Settings(model=model), {})
    assert missing in str(caught.value) and "No model is configured" not in str(caught.value)
    assert "--base-url" in str(caught.value)  # the ways to say where it is follow


# ---- prompts --------------------------------------------------------------------------------------
def test_every_failure_class_has_a_correction_template():
    names = set(Prompts().names)
    assert {f"correction/{c}.md" for c in CLASSES} <= names


def test_missing_variable_is_an_error_at_render_time():
    with pytest.raises(PromptError, match="'in_view' is undefined"):
        Prompts().render("step", steps_left=3, cost_left=None, guidance="", note="")


def test_broken_template_fails_at_load(tmp_path):
    (tmp_path / "bad.md").write_text("{% if x %}never closed")
    with pytest.raises(PromptError, match="bad.md"):
        Prompts(tmp_path)


# ---- plan and history ------------------------------------------------------------------------------
def test_plan_parse_numbered_and_bulleted():
    plan = Plan.parse("Here is my plan:\n1. **Find** the bug\n2) Fix it\n- Run the tests\nThanks")
    assert [s.text for s in plan.steps] == ["Find the bug", "Fix it", "Run the tests"]
    assert [s.status for s in plan.steps] == ["in_progress", "pending", "pending"]
    assert Plan.parse("no list here").steps == []
    assert len(Plan.parse("\n".join(f"{n}. s{n}" for n in range(1, 12))).steps) == 6
    wordy = Plan.parse("1. Understand the Requirement: " + "the goal is to add a function " * 8).steps[0].text
    assert wordy.startswith("Understand the Requirement: the goal") and wordy.endswith("…") and len(wordy) <= 111


def test_history_shortens_old_observations_first_and_keeps_recent():
    conv = Conversation(Prompts(), "SYSTEM", "the goal", native=True)
    for n in range(6):
        conv.add("", Action(name="read_file", args={"path": f"f{n}"}, call_id=f"c{n}"), "x" * 5000, True)
    assert conv.fit(40_000) == 0  # under budget: nothing changes
    shortened = conv.fit(20_000)
    assert shortened == 3  # toward half the budget, not just under it: every older one (the last 3 are kept)
    assert all(len(t.observation) < 500 for t in conv.turns[:shortened])
    assert all(len(t.observation) == 5000 for t in conv.turns[-3:])
    msgs = conv.messages("STEP")
    assert msgs[0]["content"] == "SYSTEM" and "the goal" in msgs[1]["content"] and msgs[-1]["content"] == "STEP"


def test_a_shortened_history_stays_as_it_is_for_the_next_steps():
    """Each shortening changes an old turn, so the server reads the prompt again from there: the steps after
    one must not each shorten another (the prompt's start stays the same until the history is over again)."""
    conv = Conversation(Prompts(), "SYSTEM", "the goal", native=True)
    changed = []
    for n in range(20):
        conv.add("", Action(name="read_file", args={"path": f"f{n}"}, call_id=f"c{n}"), "x" * 4000, True)
        changed.append(conv.fit(30_000) > 0)
    assert 1 <= sum(changed) <= 5 and not any(a and b for a, b in zip(changed, changed[1:], strict=False))


def test_a_plan_in_a_shortened_prompt_is_no_longer_in_view():
    conv = Conversation(Prompts(), "SYSTEM", "the goal", native=True)
    plan = "Plan:\n1. [>] Read f0"
    for n in range(6):
        prompt = ("Goal: " + "a long goal " * 30 + "\n\n" + plan if n == 0 else "") + "\n" + "step prompt " * 40
        conv.add("", Action(name="read_file", args={"path": f"f{n}"}, call_id=f"c{n}"), "x" * 5000, True, prompt)
    assert conv.shows(plan) and "[>] Read f0" in conv.messages("STEP")[1]["content"]  # kept, merged after the goal
    assert conv.fit(20_000) == 3
    assert not conv.shows(plan)  # cut off with the old prompt's end: the next prompt sends the plan again
    assert "older prompt shortened" in conv.turns[0].prompt and conv.turns[-1].prompt.count("step prompt") == 40


def test_condense_folds_old_turns_and_keeps_the_goal():
    conv = Conversation(Prompts(), "SYSTEM", "the goal", native=False)
    for n in range(5):
        conv.add("thinking", Action(name="search", args={"pattern": f"p{n}"}), f"obs {n}", n % 2 == 0)
    before = conv.messages("STEP")
    assert conv.condense()
    after = conv.messages("STEP")
    assert len(after) < len(before)
    assert "the goal" in after[1]["content"] and "search(pattern=p0) -> ok" in after[1]["content"]
    roles = [m["role"] for m in after]
    assert all(a != b for a, b in zip(roles[1:], roles[2:], strict=False)), roles  # user/assistant alternate


def test_same_failure_twice_is_refused_before_running():
    guard = RepeatGuard(Toolbox(), unstick_temperature=0.8)
    action = Action(name="shell", args={"command": "make"})
    failed = ToolResult.fail("command_failed", "exit code 2")
    assert guard.before(action, 1, "") == action
    guard.observe(action, failed)
    assert guard.before(action, 2, "") == action
    guard.observe(action, failed)
    refused = guard.before(action, 3, "")
    assert refused.failure == "repeated" and "exit code 2" in refused.error
    guard.observe(action, refused)
    assert guard.request_options().temperature == 0.8 and guard.withheld_tool == "shell"
    other = Action(name="read_file", args={"path": "a.py"})
    assert guard.before(other, 4, "") == other


def test_the_event_bus_numbers_events_from_several_threads_once_and_streams_only_the_loops():
    """The first plan's request and the baseline emit from threads of their own: every event gets a number of its
    own, and a reply streamed beside the loop is not drawn among the loop's (it is shown whole when taken)."""
    import threading

    from omni.run.record import EventBus

    class Sink:
        def __init__(self):
            self.got: list[tuple[str, dict]] = []

        def emit(self, kind, **data):
            self.got.append((kind, data))

    sink = Sink()
    bus = EventBus(sink)
    workers = [threading.Thread(target=lambda: [bus.emit("warning", message="x") for _ in range(500)])
               for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(data["seq"] for _, data in sink.got) == list(range(1, 1501))
    beside = threading.Thread(target=bus.emit, args=("model_delta",), kwargs={"text": "from the plan"})
    beside.start()
    beside.join()
    bus.emit("model_delta", text="from the loop")
    assert [data["text"] for kind, data in sink.got if kind == "model_delta"] == ["from the loop"]
