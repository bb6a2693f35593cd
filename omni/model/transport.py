"""Requests to an OpenAI-compatible endpoint through the openai package: streaming with an idle timeout, bounded
retries that honour Retry-After, a distinct error for a refused connection and for an exceeded context window,
and usage and cost per reply."""

from __future__ import annotations

import email.utils
import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from omni.errors import ContextLengthExceeded, EndpointUnreachable, ModelError
from omni.model import pricing
from omni.model.endpoint import ModelConfig
from omni.results import Action, Usage


def _transport_errors() -> tuple[type[Exception], ...]:
    """Errors the HTTP library raises mid-stream. openai 3 wraps them; openai 1 and 2 let httpx's through."""
    found = []
    for module in ("httpx", "httpx2"):
        try:
            found.append(importlib.import_module(module).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(found)


_TRANSPORT = _transport_errors()
_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "too many tokens",
    "exceeds the available context",
    "prompt is too long",
)


@dataclass
class Reply:
    text: str = ""
    actions: list[Action] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    format_error: str | None = None
    finish_reason: str | None = None
    cut_call: str = ""  # the unfinished call's arguments of a reply cut off at the token cap, for the record


def _never_connected(exc: Exception) -> bool:
    """A connection that was never made (refused, unknown host), as against one that broke or timed out."""
    cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) else exc
    return type(cause).__name__ == "ConnectError"  # httpx's; a timeout is ConnectTimeout or ReadTimeout


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _is_context_error(exc: openai.APIStatusError) -> bool:
    text = str(exc).lower()
    return any(marker in text for marker in _CONTEXT_MARKERS)


class Transport:
    """One endpoint's requests: the openai client with retries of omni's own (bounded and visible)."""

    def __init__(self, config: ModelConfig, emit: Callable[..., None]):
        self.config, self._emit = config, emit
        self._answered = False  # whether the server has answered once (then a refused connection is retried)
        self.pricing = pricing.Pricing.of(config.model, config.base_url, config.price)
        self.client = openai.OpenAI(api_key=config.api_key, base_url=config.base_url, timeout=config.idle_timeout,
                                    max_retries=0, default_headers=config.headers or None)

    def request(self, messages, tools=None, max_tokens=None, temperature=None, response_format=None, n=None,
                 tool_choice=None):
        """One reply (with n: the list of n choices, not streamed)."""
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if n:
            kwargs["n"] = n
        if response_format:
            kwargs["response_format"] = response_format
        if tools:
            kwargs["tools"] = tools
        if tool_choice:
            kwargs["tool_choice"] = tool_choice
        temperature = self.config.temperature if temperature is None else temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if max_tokens or self.config.max_tokens:
            kwargs["max_tokens"] = max_tokens or self.config.max_tokens
        send = self._choices if n else self._stream if self.config.stream else self._plain
        return self._retried(lambda: send(kwargs))

    def fill(self, prompt: str, n: int, temperature: float, max_tokens: int, stop: list[str]) -> list[Reply]:
        """n completions of a raw prompt (the completions endpoint, not chat: omni/model/infill.py), the usage
        counted on the first, as for n chat choices."""
        def send() -> list[Reply]:
            response = self.client.completions.create(model=self.config.model, prompt=prompt, n=n, stop=stop,
                                                      temperature=temperature, max_tokens=max_tokens)
            return self._shared(response, [(c.text or "", c.finish_reason) for c in response.choices])
        return self._retried(send)

    def _retried(self, send: Callable[[], Any]) -> Any:
        """send(), again after a rate limit, a server error or a broken connection, within the attempts and the
        wait budget; a refused first connection, a context overflow and other statuses are errors at once."""
        waited = 0.0
        for attempt in range(1, self.config.max_attempts + 1):
            try:
                reply = send()
                self._answered = True
                return reply
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError, *_TRANSPORT) as exc:
                problem = self._describe(exc)
                if not self._answered and _never_connected(exc):
                    raise EndpointUnreachable(f"{problem}. Is the server running, and is the URL right? "
                                              "(`omni config` shows where it comes from)") from exc
                retry_after = _retry_after(exc) if isinstance(exc, openai.APIStatusError) else None
                delay = retry_after if retry_after is not None else min(30.0, 2.0 ** (attempt - 1))
                if attempt == self.config.max_attempts or waited + delay > self.config.retry_budget:
                    raise ModelError(
                        f"{problem}; gave up after {attempt} attempt(s) and {waited:.0f}s of waiting "
                        f"(base URL {self.config.base_url})"
                    ) from exc
                self._emit("retry", attempt=attempt, delay=round(delay, 2), reason=problem)
                time.sleep(delay)
                waited += delay
            except openai.APIStatusError as exc:
                self._answered = True
                if exc.status_code in (400, 413, 422) and _is_context_error(exc):
                    raise ContextLengthExceeded(str(exc)) from exc
                raise ModelError(self._describe(exc)) from exc
        raise AssertionError("unreachable")

    def _describe(self, exc: Exception) -> str:
        where = f"{self.config.base_url} (model {self.config.model})"
        if isinstance(exc, openai.AuthenticationError):
            return f"the server at {where} rejected the API key (401); check --api-key or OPENAI_API_KEY"
        if isinstance(exc, openai.PermissionDeniedError):
            return f"the server at {where} refused access (403): {exc.message}"
        if isinstance(exc, openai.NotFoundError):
            return f"not found (404) at {where}: check --model and --base-url: {exc.message}"
        if isinstance(exc, openai.APITimeoutError):
            return f"no data from {where} for {self.config.idle_timeout:.0f}s (timed out)"
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot connect to {where}: {exc.__cause__ or exc}"
        if isinstance(exc, _TRANSPORT):
            if "Timeout" in type(exc).__name__:
                return f"no data from {where} for {self.config.idle_timeout:.0f}s (timed out)"
            return f"the connection to {where} failed: {type(exc).__name__}: {exc}"
        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code} from {where}: {exc.message}"
        return f"{type(exc).__name__} from {where}: {exc}"

    def _usage(self, raw: Any) -> Usage:
        price = self.pricing
        if raw is None:  # no token counts: a priced request's cost cannot be known either
            kind = pricing.UNKNOWN if price.kind == pricing.PRICED else price.kind
            return Usage(cost=price.cost(0, 0, 0) if kind != pricing.UNKNOWN else None, cost_kind=kind)
        details = getattr(raw, "prompt_tokens_details", None)
        cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
        usage = Usage(prompt_tokens=raw.prompt_tokens or 0, cached_tokens=cached,
                      completion_tokens=raw.completion_tokens or 0, cost_kind=price.kind)
        server_cost = getattr(raw, "cost", None)  # OpenRouter reports the charged cost
        if isinstance(server_cost, (int, float)):
            usage.cost, usage.cost_kind = float(server_cost), pricing.PRICED
        else:
            usage.cost = price.cost(usage.prompt_tokens, cached, usage.completion_tokens)
        return usage

    def _choices(self, kwargs: dict[str, Any]) -> list[Reply]:
        """Every choice of one request. Servers count completion tokens differently for n > 1 (llama.cpp
        reports one choice's), so each reply carries its own share, at least ~4 characters a token."""
        response = self.client.chat.completions.create(**kwargs)
        return self._shared(response, [(c.message.content or "", c.finish_reason) for c in response.choices])

    def _shared(self, response: Any, choices: list[tuple[str, str | None]]) -> list[Reply]:
        """A reply per (text, finish reason) of one response, each with its share of the usage."""
        usage = self._usage(getattr(response, "usage", None))
        replies = []
        each = usage.completion_tokens // max(1, len(choices))
        for text, finish_reason in choices:
            first = not replies  # the prompt and the cost are counted once, on the first choice
            share = Usage(prompt_tokens=usage.prompt_tokens if first else 0,
                          cached_tokens=usage.cached_tokens if first else 0,
                          completion_tokens=max(len(text) // 4, each), cost_kind=usage.cost_kind,
                          cost=usage.cost if first or usage.cost is None else 0.0)
            replies.append(Reply(text=text, finish_reason=finish_reason, usage=share))
        return replies

    def _plain(self, kwargs: dict[str, Any]) -> Reply:
        response = self.client.chat.completions.create(**kwargs)
        if not response.choices:
            raise ModelError(f"the server at {self.config.base_url} returned no choices")
        choice = response.choices[0]
        reply = Reply(text=choice.message.content or "", finish_reason=choice.finish_reason)
        for n, call in enumerate(choice.message.tool_calls or []):
            reply.actions.append(self._action(call.function.name, call.function.arguments, call.id, n))
        reply.usage = self._usage(response.usage)
        return reply

    def _stream(self, kwargs: dict[str, Any]) -> Reply:
        stream = self.client.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        reply = Reply()
        usage_raw = None
        with stream:
            for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage_raw = chunk.usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        self._emit("model_delta", text=delta.content)
                    for position, call in enumerate((delta.tool_calls if delta else None) or []):
                        index = call.index if call.index is not None else position
                        slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = call.id or slot["id"]
                        if call.function is not None:
                            slot["name"] += call.function.name or ""
                            slot["arguments"] += call.function.arguments or ""
                    if choice.finish_reason:
                        reply.finish_reason = choice.finish_reason
        reply.text = "".join(text)
        for n, index in enumerate(sorted(calls)):
            slot = calls[index]
            reply.actions.append(self._action(slot["name"], slot["arguments"], slot["id"], n))
        reply.usage = self._usage(usage_raw)
        return reply

    @staticmethod
    def _action(name: str, arguments: str | None, call_id: str | None, n: int) -> Action:
        call_id = call_id or f"call_omni_{n}_{int(time.time() * 1000) % 10_000_000}"
        try:
            args = json.loads(arguments) if arguments and arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return Action(name=name, args={"__invalid_json__": arguments or "", "__error__": str(exc)},
                          call_id=call_id)
        if not isinstance(args, dict):
            return Action(name=name, args={"__invalid_json__": arguments or "",
                                           "__error__": "arguments must be a JSON object"}, call_id=call_id)
        return Action(name=name, args=args, call_id=call_id)
