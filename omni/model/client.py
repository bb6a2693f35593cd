"""The model client: Chat Completions through the openai package, for any OpenAI-compatible server: native tool
calling or a text fallback, plans and verdicts in a JSON schema where the server can, several samples of one
prompt. The requests themselves (streaming, retries, usage and cost) are omni/model/transport.py's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from omni.errors import ModelError
from omni.model import structured
from omni.model.endpoint import ModelConfig
from omni.model.infill import Infill
from omni.model.sampling import Sampler
from omni.model.slots import Slots
from omni.model.textmode import TextFormatError, parse_actions
from omni.model.transport import Reply, Transport

__all__ = ["ChatModel", "Reply"]


class ChatModel:
    """A chat model behind an OpenAI-compatible endpoint (omni/protocols.py: Model): one reply with one tool call,
    native or written as text; a reply without one (plans, reviews); several samples of one prompt."""

    def __init__(self, config: ModelConfig, on_event: Callable[..., None] | None = None):
        self.config = config
        self.name = config.model
        self.tool_mode = config.tool_mode
        self._emit = on_event or (lambda kind, **data: None)
        self.transport = Transport(config, self._emit)
        self.cost_kind = self.transport.pricing.kind
        self.sampler = Sampler(self.transport, self._emit)
        self._request = self.transport.request
        self._infill: list[Infill | None] = []  # the endpoint's infilling, once probed

    # ---- public -------------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 temperature: float | None = None) -> Reply:
        """One reply that should hold one tool call (native or text, per tool_mode). `temperature`
        overrides the configured one for this request."""
        if self.tool_mode == "native":
            reply = self._request(messages, tools=tools, temperature=temperature)
            if reply.finish_reason == "length":
                return self._cut_off(reply)
            if not reply.actions:
                reply.format_error = "the reply contained no tool call" + (
                    f"; it said: {reply.text.strip()[:300]}" if reply.text.strip() else ""
                )
            return reply
        fmt = structured.action_format(tools) if tools and self.structured() else None
        reply = self._request(messages, temperature=temperature, response_format=fmt)
        if reply.finish_reason == "length":
            return self._cut_off(reply)
        try:
            reply.actions = parse_actions(reply.text)
        except TextFormatError as exc:
            reply.format_error = str(exc)
        return reply

    def _cut_off(self, reply: Reply) -> Reply:
        """A reply that hit the token cap: whatever call it began is incomplete, so none is run."""
        reply.cut_call = "".join(a.args.get("__invalid_json__", json.dumps(a.args)) for a in reply.actions)
        reply.actions = []
        limit = f" of {self.config.max_tokens} tokens" if self.config.max_tokens else ""
        reply.format_error = (f"the reply was cut off at the length limit{limit} before its tool call was "
                              "complete. Make the call shorter: change one function at a time, "
                              "leave out its docstring (replace_symbol keeps it), "
                              "and leave out code that does not change")
        return reply

    def text(self, messages: list[dict[str, Any]], schema: type[BaseModel] | None = None,
             tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None) -> Reply:
        """A reply without a tool call (planning, review, a reproduction test). With a schema, and where the
        server constrains replies to a JSON schema, the reply is constrained to it; the caller parses
        leniently either way. tools: the steps' tool list, sent (tool_choice none) to keep the steps' prefix.
        max_tokens: a cap for this reply, below the configured one (never above it)."""
        keep = self._capped(tools, max_tokens)
        return self._in_schema(schema, lambda **fmt: self._request(messages, **keep, **fmt))

    def _capped(self, tools: list[dict[str, Any]] | None, max_tokens: int | None) -> dict[str, Any]:
        keep = self._keep_prefix(tools)
        caps = [cap for cap in (max_tokens, self.config.max_tokens) if cap]
        if caps:
            keep["max_tokens"] = min(caps)
        return keep

    def _in_schema(self, schema: type[BaseModel] | None, ask: Callable[..., Any]) -> Any:
        """ask() with the schema as its response format where the server constrains replies to one, and without
        it where the server refuses it."""
        if schema is None or not self.structured():
            return ask()
        fmt = {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}
        try:
            return ask(response_format=fmt)
        except ModelError as exc:
            if "HTTP 400" not in str(exc) and "HTTP 422" not in str(exc):
                raise
            self._emit("warning", message=f"the server refused the {schema.__name__} schema; asking without it")
            return ask()

    def _keep_prefix(self, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """In native mode the steps send their tools, which llama.cpp renders at the prompt's start: a request
        on the steps' conversation sends them too, with tool_choice none, so the server's cache still holds
        the whole prefix for it and for the next step."""
        return {"tools": tools, "tool_choice": "none"} if tools and self.tool_mode == "native" else {}

    def samples(self, messages: list[dict[str, Any]], k: int, temperature: float,
                tools: list[dict[str, Any]] | None = None, schema: type[BaseModel] | None = None,
                max_tokens: int | None = None) -> tuple[list[Reply], str]:
        """k replies to one prompt, and how they were asked (omni/model/sampling.py). tools, schema and
        max_tokens: as for text()."""
        keep = self._capped(tools, max_tokens)
        return self._in_schema(schema, lambda **fmt: self.sampler.samples(messages, k, temperature, {**keep, **fmt}))

    def slots(self) -> Slots | None:
        return self.sampler.slots()

    def infill(self) -> Infill | None:
        """Fill in the middle with this model (omni/model/infill.py), probed once; None where its family is not
        known to be trained on it or the endpoint does not answer it."""
        if not self._infill:
            self._infill.append(Infill.probed(self.transport))
            self._emit("infill", available=self._infill[0] is not None,
                       format=self._infill[0].format.prefix if self._infill[0] else "")
        return self._infill[0]

    def structured(self) -> bool:
        """Whether this endpoint constrains replies to a JSON schema (omni/model/structured.py)."""
        return structured.supported(self.transport, self._emit)

    def probe_tool_mode(self, prompt: str) -> str:
        """Ask once for a trivial tool call; native if the server returns a structured call."""
        ping = {
            "type": "function",
            "function": {
                "name": "ping",
                "description": "Answer the user's ping.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        try:
            reply = self._request([{"role": "user", "content": prompt}], tools=[ping], max_tokens=64)
        except ModelError as exc:
            if "400" in str(exc) or "tool" in str(exc).lower():
                self.tool_mode = "text"
                return self.tool_mode
            raise
        self.tool_mode = "native" if reply.actions else "text"
        return self.tool_mode
