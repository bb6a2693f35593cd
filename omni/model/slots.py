"""The slots of a llama.cpp server, and how several samples are asked there without losing the run's cache.

llama.cpp's server (several slots, one shared KV pool) saves its idle slots to a prompt cache in RAM when a
task starts, and restores the best match from there for a later prompt. A request for `n` samples takes
`n` slots, and the extra samples' slots are taken before that save: the slot that held the run's
conversation was overwritten unsaved, and the next step read the whole conversation again (measured on
the local server, `SLOTS=4`: 0 cached tokens in 4 tries of 5, 23 s for 2,100 tokens). A one-token request
with the samples' prompt first starts a task of its own, which saves the conversation; the `n` request
after it finds its prompt read already (measured: the next step had 2,094 of 2,110 tokens cached, 4 of 4).

Only llama.cpp's server says how many slots it has (`GET /props`, `total_slots`); it also refuses `n` above
that number. Any other server gets none of this.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

PROBE_TIMEOUT_S = 5.0
_ASKED: dict[str, Slots | None] = {}  # per base URL, once per process


@dataclass(frozen=True)
class Slots:
    total: int

    def at_once(self, k: int) -> int:
        """How many samples one request may ask for: llama.cpp refuses n above its slot count."""
        return max(1, min(k, self.total))


def props_url(base_url: str) -> str:
    """llama.cpp serves /props at the server's root, beside /v1."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/props"


def probe_slots(base_url: str, headers: dict[str, str] | None = None) -> Slots | None:
    """The server's slots, if it is a llama.cpp server with at least two; None for anything else."""
    request = urllib.request.Request(props_url(base_url), headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
            total = json.loads(response.read(1_000_000)).get("total_slots")
    except (OSError, ValueError, AttributeError):  # URLError and HTTPError are OSErrors
        return None
    return Slots(total) if isinstance(total, int) and not isinstance(total, bool) and total >= 2 else None


def slots_for(base_url: str, headers: dict[str, str] | None = None,
              on_found: Callable[[Slots], None] | None = None) -> Slots | None:
    """probe_slots, asked once per base URL; on_found hears of the slots the first time."""
    if base_url not in _ASKED:
        _ASKED[base_url] = found = probe_slots(base_url, headers)
        if found is not None and on_found is not None:
            on_found(found)
    return _ASKED[base_url]
