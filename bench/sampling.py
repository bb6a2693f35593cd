"""How to get k samples of one prompt from a local server fastest: one request with n=k, k requests one
after another, or k requests at once (parallel slots). The prompt is a candidate request as verified
repair sends it (a ~700-token prefix, cached after the first request); each sample asks for one rewritten
function. Start the server with SLOTS=k for n=k and the parallel case (a one-slot server refuses n > 1).

Run: python bench/sampling.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b -k 4
"""

from __future__ import annotations

import argparse
import concurrent.futures
import statistics
import time

import openai

SOURCE = '''def check_hyphen_ok(label):
    """Check that a label does not start or end with a hyphen, and has no hyphens in positions 3-4."""
    if label[2:4] == "--":
        raise IDNAError("Label has disallowed hyphens in 3rd and 4th position")
    if label[0] == "-" or label[-1] == "--":
        raise IDNAError("Label must not start or end with a hyphen")
    return True
'''
CONTEXT = "\n".join(f"# context line {n}: the repository's briefing, as a run would send it" for n in range(60))
PROMPT = (f"{CONTEXT}\n\nWrite a corrected version of `check_hyphen_ok` in idna/core.py, so that labels ending "
          f"with a hyphen are refused.\nIts code now:\n```python\n{SOURCE}```\nReply with only the complete new "
          "definition in one ```python block.")


def one(client, model: str, temperature: float, max_tokens: int) -> str:
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}],
                                           temperature=temperature, max_tokens=max_tokens)
    return reply.choices[0].message.content or ""


def with_n(client, model: str, k: int, temperature: float, max_tokens: int) -> list[str]:
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}],
                                           temperature=temperature, max_tokens=max_tokens, n=k)
    return [c.message.content or "" for c in reply.choices]


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=200)
    opts = parser.parse_args()
    client = openai.OpenAI(base_url=opts.base_url, api_key="sk-local", timeout=900, max_retries=0)
    one(client, opts.model, 0.0, 8)  # the prefix into the cache
    ways = {
        "one request, n=k": lambda: with_n(client, opts.model, opts.k, 0.8, opts.max_tokens),
        "k requests in a row": lambda: [one(client, opts.model, 0.8, opts.max_tokens) for _ in range(opts.k)],
        "k requests at once": lambda: list(concurrent.futures.ThreadPoolExecutor(opts.k).map(
            lambda _: one(client, opts.model, 0.8, opts.max_tokens), range(opts.k))),
    }
    results: dict[str, list[float]] = {}
    for _ in range(opts.repeat):  # A B C A B C: a slow spell of the machine hits every way alike
        for name, way in ways.items():
            try:
                seconds, texts = timed(way)
                distinct = len(set(texts))
                results.setdefault(name, []).append(seconds)
                print(f"{name:<22} {seconds:6.1f} s  {len(texts)} samples, {distinct} distinct", flush=True)
            except openai.APIStatusError as exc:
                print(f"{name:<22} refused: HTTP {exc.status_code} {exc.message[:80]}", flush=True)
    base = statistics.median(results["k requests in a row"]) if "k requests in a row" in results else None
    print(f"\n{opts.k} samples of one cached prompt, {opts.max_tokens} tokens each at most (median of {opts.repeat}):")
    for name, times in results.items():
        ratio = f"  ratio to k requests in a row: {statistics.median(times) / base:.2f}" if base else ""
        print(f"  {name:<22} {statistics.median(times):6.1f} s{ratio}")


if __name__ == "__main__":
    main()
