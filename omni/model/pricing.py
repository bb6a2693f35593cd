"""Known prices in USD per million tokens (input, cached input, output). Unknown models cost 0
and are reported as such; OpenRouter's own per-call cost is used when the server sends it."""

from __future__ import annotations

PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-4o": (2.50, 1.25, 10.00),
    "gpt-4o-mini": (0.15, 0.075, 0.60),
    "gpt-4.1": (2.00, 0.50, 8.00),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
    "gpt-4.1-nano": (0.10, 0.025, 0.40),
    "o4-mini": (1.10, 0.275, 4.40),
    "gpt-5": (1.25, 0.125, 10.00),
    "gpt-5-mini": (0.25, 0.025, 2.00),
    "gpt-5-nano": (0.05, 0.005, 0.40),
}


def price_of(model: str) -> tuple[float, float, float] | None:
    name = model.split("/")[-1].lower()
    if name in PRICES:
        return PRICES[name]
    # Dated snapshots: gpt-4o-2024-08-06 -> gpt-4o
    for known in sorted(PRICES, key=len, reverse=True):
        if name.startswith(known + "-2"):
            return PRICES[known]
    return None


def cost_of(model: str, prompt: int, cached: int, completion: int) -> float | None:
    price = price_of(model)
    if price is None:
        return None
    inp, cached_inp, out = price
    return ((prompt - cached) * inp + cached * cached_inp + completion * out) / 1_000_000
