"""How fast the model server generates on this machine, asked the same way before every benchmark run: machines
here have differed by a factor of two (run DC's resolved tasks took 2.04x the wall time of the same tasks in run CU),
so a run's wall times are read with this figure beside them.

  python bench/server_speed.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import time

import openai

ASK = ("Write a Python function `median(values)` that returns the median of a list of numbers, "
       "with a docstring and two doctests. Reply with the code only.")
TOKENS = 96  # enough to time the decoding, a few seconds on a CPU server


def server_speed(base_url: str, model: str, tokens: int = TOKENS) -> float | None:
    """Completion tokens per second of one fixed request at temperature 0 (its prompt's reading included, as every
    request of a run has one); None when the server does not answer or reports no usage."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-local", timeout=300, max_retries=0)
    start = time.perf_counter()
    try:
        reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": ASK}],
                                               max_tokens=tokens, temperature=0)
    except openai.OpenAIError:
        return None
    seconds = time.perf_counter() - start
    made = reply.usage.completion_tokens if reply.usage else 0
    return round(made / seconds, 1) if made and seconds > 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    opts = parser.parse_args()
    speed = server_speed(opts.base_url, opts.model)
    if speed is None:
        raise SystemExit(f"no answer with usage from {opts.base_url}")
    print(f"{speed} tokens/s")


if __name__ == "__main__":
    main()
