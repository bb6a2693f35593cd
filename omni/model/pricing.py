"""What a model's tokens cost, from genai-prices (the pydantic team's maintained price data, bundled with the
package, so no request leaves the machine for it) rather than a table written here.

Three answers, never a made-up zero: a price ("priced": from genai-prices, or the user's --price), free ("local":
a server on this machine or this network), or "unknown" (a model genai-prices does not know, at an endpoint that
is not local). OpenRouter's own per-call cost, when the server sends it, wins over all of them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlparse

from omni.errors import UsageError

PRICED, LOCAL, UNKNOWN = "priced", "local", "unknown"
LOCAL_NAMES = ("localhost", "host.docker.internal", "host.containers.internal")


def is_local(base_url: str) -> bool:
    """Whether the endpoint is on this machine or a private network (Ollama, llama.cpp, LM Studio, vLLM at home)."""
    host = (urlparse(base_url).hostname or "").lower()
    if host in LOCAL_NAMES or host.endswith((".local", ".localhost", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def parse_price(text: str) -> tuple[float, float, float]:
    """--price "IN,OUT[,CACHED]": USD per million input, output (and cached input) tokens."""
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (2, 3) or any(p < 0 for p in parts):
        raise UsageError(f"--price {text!r}: give USD per million tokens as INPUT,OUTPUT or INPUT,OUTPUT,CACHED "
                         "(for example --price 0.15,0.60)")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else parts[0]


@dataclass(frozen=True)
class Pricing:
    """How one model's usage is costed."""

    kind: str
    model: str = ""
    base_url: str = ""
    given: tuple[float, float, float] | None = None  # the user's own price

    @classmethod
    def of(cls, model: str, base_url: str, price: str | None = None) -> Pricing:
        if price:
            return cls(PRICED, model, base_url, parse_price(price))
        if is_local(base_url):
            return cls(LOCAL, model, base_url)
        known = cls(PRICED, model, base_url)
        return known if known.cost(0, 0, 0) is not None else cls(UNKNOWN, model, base_url)

    def cost(self, prompt: int, cached: int, completion: int) -> float | None:
        """USD for one request's tokens; None when the price is unknown."""
        if self.kind == LOCAL:
            return 0.0
        if self.kind == UNKNOWN:
            return None
        if self.given is not None:
            inp, out, cached_in = self.given
            return ((prompt - cached) * inp + cached * cached_in + completion * out) / 1_000_000
        return _library_cost(self.model, self.base_url, prompt, cached, completion)


def _library_cost(model: str, base_url: str, prompt: int, cached: int, completion: int) -> float | None:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=prompt, cache_read_tokens=cached, output_tokens=completion)
    try:  # the price of the provider at this endpoint: another provider's price for the model would be a guess
        return float(calc_price(usage, model_ref=model, provider_api_url=base_url).total_price)
    except LookupError:
        return None


def check_max_cost(models, max_cost: float | None) -> None:
    """--max-cost needs a price for every model of the run: a limit on an unknown cost would never stop anything.
    A UsageError (exit 2) before anything runs, saying how to give one."""
    if max_cost is None:
        return
    for config in models:
        if Pricing.of(config.model, config.base_url, config.price).kind == UNKNOWN:
            raise UsageError(f"--max-cost {max_cost:g} needs the price of {config.model}, and omni knows none for it "
                             f"at {config.base_url} (genai-prices has no entry). Give it in USD per million tokens, "
                             "for example --price 0.15,0.60 (input, output), or leave out --max-cost")
