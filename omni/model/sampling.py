"""Several replies to one prompt (verified repair's candidates): one request with `n` samples where the server
honours it (the prompt is read once), then one request after another for the rest (the cached prefix makes each
cheap). On llama.cpp, a one-token request goes first, so the server keeps the run's conversation in its prompt
cache (omni/model/slots.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omni.errors import ModelError
from omni.model.slots import Slots, slots_for
from omni.model.transport import Reply, Transport


class Sampler:
    def __init__(self, transport: Transport, emit: Callable[..., None]):
        self.transport, self._emit = transport, emit
        self._n_ok: bool | None = None  # whether the server answers n > 1 with n choices (unknown until asked)

    def samples(self, messages: list[dict[str, Any]], k: int, temperature: float,
                keep: dict[str, Any]) -> tuple[list[Reply], str]:
        """k replies, and how they were asked. keep: what each request sends to keep the steps' prefix."""
        request = self.transport.request
        replies: list[Reply] = []
        slots = self.slots()
        at_once = slots.at_once(k) if slots else k
        parked = None
        if at_once > 1 and self._n_ok is not False:
            try:
                parked = request(messages, **{**keep, "max_tokens": 1}).usage if slots else None
                replies = request(messages, temperature=temperature, n=at_once, **keep)
                self._n_ok = len(replies) == at_once
            except ModelError as exc:
                if "HTTP 400" not in str(exc) and "HTTP 422" not in str(exc):
                    raise
                self._n_ok = False  # a one-slot llama.cpp server: "Value must be between 1 <= value <= 1"
        together = len(replies)
        while len(replies) < k:
            replies.append(request(messages, temperature=temperature, **keep))
        if parked is not None:
            replies[0].usage.add(parked)  # the one-token request read the prompt: its tokens count
        if together == k:
            return replies, "n"
        return replies, f"{together} at once, then one by one" if self._n_ok and together else "sequential"

    def slots(self) -> Slots | None:
        """A llama.cpp server's slots (None for any other server), asked once per base URL."""
        config = self.transport.config
        return slots_for(config.base_url, config.headers, lambda s: self._emit("slots", total=s.total))
