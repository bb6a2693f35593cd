"""A sampled round's rewrites with the reply ended at its closing fence (a stop sequence, CODE_END) against the
same round without, side by side: the seconds a round of samples takes, the characters the server wrote, and
the rewrites that came out of them.

A chat model may follow its code block with prose (what it changed, why) or a second block that uses the function;
on a CPU server every token of it is time a run waits for. The request is verified repair's own (prompts/propose.md,
as bench/spec_reach.py builds it) for the bug's definition of each task, k samples in one request with n, as omni's
sampled rounds ask on a llama.cpp server, the two ways in turn, A B A B. Then once each at temperature 0: the code
the two replies hold should be the same, the stop changing only where the reply ends. It reads bug patches, so it
is for the tune half and the dev tasks only. Measured 2026-12-06 (bench/README.md): the 1.5B model writes nothing
after the block when asked as omni asks, so the stop saved nothing, and omni does not send it.

    python bench/fence_stop.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b [--tasks a,b]
        [-k 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reach import readable, sites  # noqa: E402
from run_tasks import ensure_test_requires  # noqa: E402
from spec_reach import TEMPERATURE, asks, failure_of  # noqa: E402

from openai import OpenAI  # noqa: E402

from omni.model.textmode import code_of  # noqa: E402
from omni.prompts import Prompts  # noqa: E402

CODE_END = "\n```\n"  # a closing fence with a line after it
WAYS = {"whole reply": None, "to the fence": [CODE_END]}


def ended(text: str, finish: str | None) -> str:
    """A reply the server ended at the stop sequence (finish reason "stop"), its open block closed again."""
    return text + "\n```" if finish == "stop" and text.count("```") % 2 else text


def round_of(model: tuple[OpenAI, str], messages: list[dict], k: int, stop: list[str] | None,
             temperature: float) -> dict:
    client, name = model
    began = time.monotonic()
    reply = client.chat.completions.create(model=name, messages=messages, temperature=temperature, n=k,
                                           max_tokens=1024, **({"stop": stop} if stop else {}))
    texts = [(c.message.content or "", c.finish_reason) for c in reply.choices]
    codes = [code_of(ended(text, finish)) for text, finish in texts]
    return {"seconds": time.monotonic() - began, "chars": sum(len(text) for text, _ in texts),
            "codes": sum(1 for c in codes if c), "first": codes[0] if codes else ""}


def measure(model: tuple[OpenAI, str], messages: list[dict], k: int, rounds: int) -> dict:
    """Each way's rounds, A B A B, and whether the greedy replies hold the same code."""
    seen: dict[str, list[dict]] = {way: [] for way in WAYS}
    for _ in range(rounds):
        for way, stop in WAYS.items():
            seen[way].append(round_of(model, messages, k, stop, TEMPERATURE))
    greedy = [round_of(model, messages, 1, stop, 0.0)["first"] for stop in WAYS.values()]
    return {**seen, "same": greedy[0] == greedy[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (tune half or dev)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("-k", "--samples", type=int, default=4, help="samples per round, as omni's --samples")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each way per definition")
    opts = parser.parse_args()
    model = (OpenAI(base_url=opts.base_url, api_key="sk-local", timeout=600), opts.model)
    prompts, rows = Prompts(), []
    for task in readable(opts.tasks, "fence_stop.py"):
        ensure_test_requires(task)
        with tempfile.TemporaryDirectory(prefix="omni-fence-") as tmp:
            found = [s for s in sites(task, Path(tmp)) if not isinstance(s, str)]
            tests, failure = failure_of(Path(tmp) / "bug" / "repo", task)
            for site in found:
                row = measure(model, asks(prompts, task, site, tests, failure)["code"], opts.samples, opts.rounds)
                rows.append(row)
                said = "  ".join(f"{way}: {statistics.median(r['seconds'] for r in row[way]):5.1f} s, "
                                 f"{sum(r['chars'] for r in row[way]):5d} chars, "
                                 f"{sum(r['codes'] for r in row[way])}/{opts.samples * opts.rounds} code"
                                 for way in WAYS)
                print(f"{task['id']:32} {site.definition.split(':')[1][:26]:26} {said}  greedy code "
                      f"{'same' if row['same'] else 'DIFFERS'}", flush=True)
    if not rows:
        return
    total = {way: sum(r["seconds"] for row in rows for r in row[way]) for way in WAYS}
    chars = {way: sum(r["chars"] for row in rows for r in row[way]) for way in WAYS}
    codes = {way: sum(r["codes"] for row in rows for r in row[way]) for way in WAYS}
    a, b = WAYS
    print(f"\n{len(rows)} definitions, {opts.rounds} rounds of {opts.samples} samples each way: "
          f"{a} {total[a]:.0f} s, {chars[a]} chars, {codes[a]} rewrites with code; "
          f"{b} {total[b]:.0f} s, {chars[b]} chars, {codes[b]} with code; "
          f"seconds {b}/{a} = {total[b] / total[a]:.2f}, chars {chars[b] / max(1, chars[a]):.2f}; "
          f"greedy code the same on {sum(r['same'] for r in rows)} of {len(rows)}")


if __name__ == "__main__":
    main()
