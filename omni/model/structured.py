"""Structured output: whether an endpoint constrains replies to a JSON schema (response_format json_schema), probed
once per endpoint and model and process; llama.cpp's server, vLLM, OpenAI and OpenRouter do. Where it does, a plan,
a verdict or a text-mode action cannot come back unreadable."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from omni.errors import ModelError
from omni.model.transport import Transport

_STRUCTURED: dict[tuple[str, str], bool] = {}
_ASKING = threading.Lock()
PROBE = {"name": "omni_probe", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                          "required": ["ok"]}}


def action_format(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The text-mode action as a JSON schema: one of the offered tools by name, with its own arguments."""
    choices = [{"type": "object", "properties": {"name": {"const": t["function"]["name"]},
                                                 "arguments": t["function"]["parameters"]},
                "required": ["name", "arguments"]} for t in tools]
    return {"type": "json_schema", "json_schema": {"name": "action", "schema": {"anyOf": choices}}}


def supported(transport: Transport, emit: Callable[..., None]) -> bool:
    """Whether this endpoint constrains replies to a JSON schema: asked once per endpoint and model."""
    key = (transport.config.base_url, transport.config.model)
    with _ASKING:  # the first plan's request asks from a thread of its own, maybe beside another request
        if key not in _STRUCTURED:
            _STRUCTURED[key] = _probe(transport)
            emit("structured_output", supported=_STRUCTURED[key], base_url=transport.config.base_url)
    return _STRUCTURED[key]


def _probe(transport: Transport) -> bool:
    try:
        reply = transport.request([{"role": "user", "content": 'Answer with the JSON object {"ok": true}.'}],
                                  max_tokens=16, response_format={"type": "json_schema", "json_schema": PROBE})
        return json.loads(reply.text).get("ok") is True
    except (ModelError, ValueError, AttributeError):
        return False
