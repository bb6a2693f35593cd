"""The model client through the real openai package, against the scripted server over HTTP."""

from __future__ import annotations

import time

import pytest

from omni.errors import ContextLengthExceeded, ModelError
from omni.model.endpoint import ModelConfig
from omni.model.client import ChatModel
from omni.box.toolbox import Toolbox

MESSAGES = [{"role": "user", "content": "fix it"}]


def model(fake, **kw) -> ChatModel:
    events = []
    cfg = ModelConfig(model="fake-model", base_url=fake.base_url, api_key="k", **kw)
    m = ChatModel(cfg, on_event=lambda kind, **data: events.append((kind, data)))
    m.events = events
    return m


@pytest.mark.parametrize("stream", [True, False])
def test_native_tool_call_roundtrip(fake, stream):
    fake.add({"tool": "read_file", "args": {"path": "src/app.py", "start_line": 3}})
    m = model(fake, tool_mode="native", stream=stream)
    reply = m.complete(MESSAGES, Toolbox().schemas())
    assert reply.format_error is None
    assert [(a.name, a.args) for a in reply.actions] == [("read_file", {"path": "src/app.py", "start_line": 3})]
    sent = fake.requests[0]
    assert sent.get("stream", False) is stream
    assert {t["function"]["name"] for t in sent["tools"]} >= {"read_file", "finish", "update_plan"}
    assert reply.usage.prompt_tokens == 100 and reply.usage.completion_tokens == 20


def test_stream_split_deltas_and_missing_ids_are_synthesized(fake):
    args = {"path": "a/very/long/path/to/split/into/many/pieces.py", "old_text": "x" * 50, "new_text": "y"}
    fake.add({"calls": [{"tool": "replace_in_file", "args": args}, {"tool": "run_tests", "args": {}}],
              "omit_ids": True})
    reply = model(fake, tool_mode="native").complete(MESSAGES, Toolbox().schemas())
    assert [a.name for a in reply.actions] == ["replace_in_file", "run_tests"]
    assert reply.actions[0].args == args
    ids = [a.call_id for a in reply.actions]
    assert all(ids) and len(set(ids)) == 2


def test_text_mode_parses_fenced_call(fake):
    fake.add({"text": 'I will read it.\n```tool_call\n{"name": "read_file", "arguments": {"path": "x.py"}}\n```'})
    reply = model(fake, tool_mode="text").complete(MESSAGES, [])
    assert "tools" not in fake.requests[0]
    assert [(a.name, a.args) for a in reply.actions] == [("read_file", {"path": "x.py"})]


def test_text_mode_without_call_is_a_format_error(fake):
    fake.add({"text": "I think the bug is in add()."})
    reply = model(fake, tool_mode="text").complete(MESSAGES, [])
    assert reply.actions == [] and "no ```tool_call block" in reply.format_error


def test_native_reply_without_call_is_a_format_error(fake):
    fake.add({"text": "Done, I guess."})
    reply = model(fake, tool_mode="native").complete(MESSAGES, Toolbox().schemas())
    assert reply.format_error.startswith("the reply contained no tool call") and "Done, I guess." in reply.format_error


@pytest.mark.parametrize("mode", ["native", "text"])
def test_a_reply_cut_off_at_max_tokens_runs_nothing_and_says_how_to_fit(fake, mode):
    cut = '```tool_call\n{"name": "replace_symbol", "arguments": {"path": "a.py", "new_source": "def f'
    fake.add({"tool": "replace_symbol", "args": '{"path": "a.py", "new_source": "def f', "finish_reason": "length"}
             if mode == "native" else {"text": cut, "finish_reason": "length"})
    reply = model(fake, tool_mode=mode, max_tokens=300).complete(MESSAGES, Toolbox().schemas())
    assert fake.requests[0]["max_tokens"] == 300
    assert reply.actions == [] and reply.finish_reason == "length"
    assert "cut off at the length limit of 300 tokens" in reply.format_error
    assert "change one function at a time" in reply.format_error


def test_a_text_replys_own_cap_is_never_above_the_runs(fake):
    fake.add({"text": "a"}, {"text": "b"}, {"text": "c"})
    model(fake, max_tokens=1024).text(MESSAGES, max_tokens=512)
    model(fake, max_tokens=256).text(MESSAGES, max_tokens=512)  # the user's lower cap holds
    model(fake, max_tokens=None).text(MESSAGES, max_tokens=512)
    assert [r["max_tokens"] for r in fake.requests] == [512, 256, 512]


def test_malformed_argument_json_is_kept_for_a_model_facing_error(fake):
    fake.add({"tool": "read_file", "args": '{"path": "x.py"'})
    reply = model(fake, tool_mode="native").complete(MESSAGES, Toolbox().schemas())
    result = Toolbox().validate(reply.actions[0])
    assert result.failure == "format_error" and "not valid JSON" in result.error and "path" in result.error


def test_429_then_success_honours_retry_after(fake):
    fake.add({"status": 429, "headers": {"Retry-After": "1"}, "error": "slow down"},
             {"tool": "finish", "args": {"summary": "ok"}})
    m = model(fake, tool_mode="native")
    started = time.monotonic()
    reply = m.complete(MESSAGES, Toolbox().schemas())
    assert reply.actions[0].name == "finish"
    assert time.monotonic() - started >= 0.9
    assert len(fake.requests) == 2
    assert m.events[0][0] == "retry" and m.events[0][1]["delay"] == 1.0


def test_5xx_retries_are_bounded(fake):
    fake.add(*[{"status": 500, "error": "boom"}] * 5)
    m = model(fake, tool_mode="native", max_attempts=3, retry_budget=10)
    with pytest.raises(ModelError, match=r"HTTP 500.*gave up after 3 attempt"):
        m.complete(MESSAGES, [])
    assert len(fake.requests) == 3


def test_retry_budget_stops_long_waits(fake):
    fake.add({"status": 429, "headers": {"Retry-After": "3600"}}, {"text": "never reached"})
    with pytest.raises(ModelError, match="gave up after 1 attempt"):
        model(fake, tool_mode="native", retry_budget=60).complete(MESSAGES, [])
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status,pattern", [(401, "rejected the API key"), (404, "not found"),
                                            (400, "HTTP 400")])
def test_client_errors_fail_fast(fake, status, pattern):
    fake.add({"status": status, "error": "nope"}, {"text": "should not be used"})
    with pytest.raises(ModelError, match=pattern):
        model(fake, tool_mode="native").complete(MESSAGES, [])
    assert len(fake.requests) == 1


def test_context_length_error_is_distinct(fake):
    fake.add({"status": 400, "error": "This model's maximum context length is 8192 tokens.",
              "code": "context_length_exceeded"})
    with pytest.raises(ContextLengthExceeded):
        model(fake, tool_mode="native").complete(MESSAGES, [])


def test_stalled_stream_is_cut_by_the_idle_timeout(fake):
    fake.add({"stall": 5}, {"stall": 5})
    m = model(fake, tool_mode="native", idle_timeout=0.5, max_attempts=2, retry_budget=2)
    started = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        m.complete(MESSAGES, [])
    assert time.monotonic() - started < 4.5


def test_unreachable_server_gives_a_clear_error():
    cfg = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", max_attempts=2, retry_budget=2)
    with pytest.raises(ModelError, match="cannot connect to http://127.0.0.1:9/v1"):
        ChatModel(cfg).complete(MESSAGES, [])


@pytest.mark.parametrize("turn,mode", [({"tool": "ping", "args": {}}, "native"), ({"text": "pong"}, "text"),
                                       ({"status": 400, "error": "tools are not supported"}, "text")])
def test_probe_chooses_tool_mode(fake, turn, mode):
    fake.add(turn)
    m = model(fake, tool_mode="auto")
    assert m.probe_tool_mode("Call the ping tool now.") == mode == m.tool_mode
    assert fake.requests[0]["tools"][0]["function"]["name"] == "ping"


def test_usage_and_cost_for_priced_given_local_and_unknown_models(fake):
    from genai_prices import Usage as Tokens
    from genai_prices import calc_price

    from omni.model.pricing import Pricing

    openai = Pricing.of("gpt-4o-mini", "https://api.openai.com/v1")
    library = calc_price(Tokens(input_tokens=1000, cache_read_tokens=400, output_tokens=100), model_ref="gpt-4o-mini",
                         provider_api_url="https://api.openai.com/v1").total_price
    assert openai.kind == "priced" and openai.cost(1000, 400, 100) == pytest.approx(float(library))
    assert Pricing.of("gpt-4o-mini", "https://my-proxy.example.com/v1").kind == "unknown"  # not the provider's
    assert Pricing.of("my-model", "http://192.168.1.5:8000/v1").kind == "local"
    fake.add(*[{"text": "a", "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                                       "prompt_tokens_details": {"cached_tokens": 400}}}] * 2)
    given = ChatModel(ModelConfig(model="m", base_url=fake.base_url, api_key="k", price="0.15,0.60,0.075"))
    usage = given.text(MESSAGES).usage
    assert usage.cost_kind == "priced" and usage.cost == pytest.approx((600 * 0.15 + 400 * 0.075 + 100 * 0.60) / 1e6)
    local = model(fake).text(MESSAGES).usage
    assert local.cost == 0 and local.cost_kind == "local"


def test_one_unknown_price_makes_the_total_unknown_and_it_never_shows_as_zero():
    from omni.results import Usage, cost_text

    total = Usage()
    total.add(Usage(prompt_tokens=10, cost=0.5, cost_kind="priced"))
    total.add(Usage(prompt_tokens=10, cost=0.0, cost_kind="local"))
    assert total.cost_kind == "priced" and cost_text(total.model_dump()) == "$0.5000"
    total.add(Usage(prompt_tokens=10, cost=None, cost_kind="unknown"))
    assert total.cost is None and cost_text(total.model_dump()) == "cost unknown"
    assert cost_text(Usage(cost=0.0, cost_kind="local").model_dump()) == "local"


def test_slots_are_read_from_a_llama_cpp_servers_props_and_no_other_server_has_any():
    from fake_server import FakeOpenAI
    from omni.model.slots import Slots, probe_slots, props_url

    assert props_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/props"
    assert props_url("http://host/api") == "http://host/api/props"
    with FakeOpenAI(slots=4) as llama, FakeOpenAI() as other, FakeOpenAI(slots=1) as one:
        assert probe_slots(llama.base_url) == Slots(4) and Slots(4).at_once(6) == 4 and Slots(4).at_once(2) == 2
        assert probe_slots(other.base_url) is None  # 404
        assert probe_slots(one.base_url) is None  # one slot: n > 1 is refused anyway
    assert probe_slots("http://127.0.0.1:9/v1") is None  # nothing listens
