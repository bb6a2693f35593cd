"""The model relay's host side: what a tool in the sandbox (Aider) asks of the model arrives over the tool channel
(omni/box/channel.py) and is answered here. Only a chat completion is forwarded, only to the run's own endpoint,
with the run's own model, and with the API key added here: the key never enters the container. Every request is
counted in the run's usage (tokens and cost, so the run's limits see it) and every refusal is an event."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from omni.model.endpoint import ModelConfig
from omni.model.pricing import Pricing
from omni.model.usage import UsageMeter
from omni.protocols import Events
from omni.results import Usage

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


class ChatRelay:
    def __init__(self, config: ModelConfig, meter: UsageMeter, events: Events, max_cost: float | None = None):
        self.config, self.meter, self.events, self.max_cost = config, meter, events, max_cost
        self.pricing = Pricing.of(config.model, config.base_url, config.price)

    def __call__(self, question: dict) -> dict:
        """{method, path, body} -> {status, content_type, body}."""
        path = urlsplit(str(question.get("path", ""))).path
        if question.get("method") != "POST" or path.rstrip("/") not in CHAT_PATHS:
            return self.refuse(path, f"{question.get('method')} {path} is not a chat completion; the relay forwards "
                               "nothing else", 403)
        if self.max_cost is not None and (self.meter.total.cost or 0.0) >= self.max_cost:
            return self.refuse(path, f"the run's cost limit (${self.max_cost:.2f}) is reached", 429)
        try:
            body = json.loads(question.get("body") or "")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self.refuse(path, "the request body is not a JSON object", 400)
        body["model"] = self.config.model  # the run's model, whatever the tool named
        if body.get("stream"):
            body["stream_options"] = {"include_usage": True}
        status, content_type, text = self.post(body)
        if status == 502 and content_type == "text/plain":  # no answer from the endpoint at all
            self.events.emit("relay", path=path, status=status, forwarded=True, reason=text[:300])
            return {"status": status, "content_type": content_type, "body": text}
        self.meter.count(self.usage(text, bool(body.get("stream"))), "aider")
        self.events.emit("relay", path=path, status=status, forwarded=True, reason="")
        return {"status": status, "content_type": content_type, "body": text}

    def post(self, body: dict) -> tuple[int, str, str]:
        """(status, content type, text) of the endpoint's answer; an HTTP error's own status and body pass through."""
        request = urllib.request.Request(
            self.config.base_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.config.api_key}",
                     **self.config.headers})
        try:
            with urllib.request.urlopen(request, timeout=self.config.idle_timeout) as response:
                return (response.status, response.headers.get("Content-Type", "application/json"),
                        response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type", "application/json"), exc.read().decode("utf-8", "replace")
        except (urllib.error.URLError, OSError) as exc:
            return 502, "text/plain", f"the model endpoint failed: {getattr(exc, 'reason', exc)}"

    def refuse(self, path: str, why: str, status: int) -> dict:
        self.events.emit("relay", path=path, status=status, forwarded=False, reason=why)
        return {"status": status, "content_type": "application/json",
                "body": json.dumps({"error": {"message": f"omni relay: {why}", "type": "omni_relay_refused"}})}

    def usage(self, text: str, streamed: bool) -> Usage:
        """The reply's token counts (a streamed reply's last chunk that has them), priced as the run's requests."""
        raw = None
        if streamed:
            for line in text.splitlines():
                if line.startswith("data:") and '"usage"' in line:
                    try:
                        raw = json.loads(line[5:].strip()).get("usage") or raw
                    except (ValueError, AttributeError):
                        continue
        else:
            try:
                raw = json.loads(text).get("usage")
            except (ValueError, AttributeError):
                raw = None
        if not isinstance(raw, dict):
            return Usage(cost=self.pricing.cost(0, 0, 0), cost_kind=self.pricing.kind)
        cached = (raw.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0
        prompt, completion = raw.get("prompt_tokens", 0) or 0, raw.get("completion_tokens", 0) or 0
        return Usage(prompt_tokens=prompt, cached_tokens=cached, completion_tokens=completion,
                     cost=self.pricing.cost(prompt, cached, completion), cost_kind=self.pricing.kind)
