"""TTFT accuracy against llama-server's own clock (measurement.md §6, M1).

For each request: Δ = client TTFT (the engine's figure) − the server's `timings.prompt_ms`
(prompt processing, ending when the first token is sampled). With the prompt cache off and a
free slot, Δ is HTTP + templating + tokenising + flushing: a small positive constant. A
negative Δ would mean the client clock is wrong. Also Δ_dec = (last − first token) − the
server's `predicted_ms`.

Uses the embedded default (`compare-tui local up`), one request at a time (concurrency 1, so no
request waits for a slot), unique prompts with `cache_prompt: false`, sent through the client a
run uses (`endpoint.client.chat_client`).

    PYTHONPATH=. .venv/bin/python bench/bench_ttft_accuracy.py [--requests 40] [--model smollm2-135m]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_tui.catalogue import load_catalogue  # noqa: E402
from compare_tui.endpoint.client import TRANSPORT, chat_client  # noqa: E402
from compare_tui.engine.exchange import stream_chat  # noqa: E402
from compare_tui.local import down, up  # noqa: E402

WORDS = "ticket invoice refund shipping account password login billing order parcel".split()


def prompt(i: int) -> str:
    # Unique from the first token on, of varying length (about 20–400 tokens).
    body = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(10 + (i * 37) % 300))
    return f"Request {i}: summarise in one line. {body}"


async def measure(endpoint: str, model: str, n: int) -> tuple[list[tuple[float, float, int]], str]:
    out = []
    # The client a run sends through (`endpoint.client.chat_client`).
    async with chat_client(timeout_s=120, concurrency=1) as client:
        for i in range(n):
            body = {
                "model": model,
                "messages": [{"role": "user", "content": prompt(i)}],
                "stream": True,
                "stream_options": {"include_usage": True},
                "max_tokens": 16,
                "temperature": 0,
                "cache_prompt": False,
            }
            ex = await stream_chat(client, endpoint, body)
            acc = ex.acc
            if ex.error_class or acc is None or not acc.timings or acc.ttft_ms() is None:
                print(f"request {i}: {ex.error or 'no timings'}", file=sys.stderr)
                continue
            delta = acc.ttft_ms() - acc.timings["prompt_ms"]
            decode = (acc.last_token_ns - acc.first_token_ns) / 1e6 - acc.timings.get("predicted_ms", 0.0)
            out.append((delta, decode, int(acc.timings.get("prompt_n", 0))))
    return out, TRANSPORT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--out", default=str(ROOT / "bench/results/ttft_accuracy.md"))
    args = parser.parse_args()
    cluster = up([args.model], parallel=1, ctx=4096)
    try:
        entry = load_catalogue(cluster.catalogue_path).get(args.model)
        rows, used = asyncio.run(measure(entry.endpoint, entry.model, args.requests))
    finally:
        if not cluster.reused:
            down([args.model])
    deltas = np.array([r[0] for r in rows])
    decode = np.array([r[1] for r in rows])
    sizes = np.array([r[2] for r in rows])
    slope = float(np.polyfit(sizes, deltas, 1)[0]) if len(set(sizes.tolist())) > 1 else float("nan")
    lines = [
        "# TTFT accuracy: client TTFT − llama-server `timings.prompt_ms`",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_ttft_accuracy.py --requests {args.requests} --model {args.model}`",
        f"{len(rows)} requests, concurrency 1, `cache_prompt: false`, prompts of {sizes.min()}–{sizes.max()} tokens, "
        f"max_tokens 16, one slot, through the {used} client.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| Δ median (ms) | {np.median(deltas):.2f} |",
        f"| Δ p95 (ms) | {np.percentile(deltas, 95):.2f} |",
        f"| Δ min (ms) | {deltas.min():.2f} |",
        f"| negative Δ (must be 0) | {int((deltas < 0).sum())} |",
        f"| slope of Δ against prompt tokens (ms/token) | {slope:.4f} |",
        f"| decode Δ median (ms) | {np.median(decode):.2f} |",
        f"| decode Δ p95 of abs (ms) | {np.percentile(np.abs(decode), 95):.2f} |",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
