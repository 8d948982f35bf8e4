"""The chat client on the three figures that decided its transport (bench/RESULTS.md, "Chat
transport"). At commit 308d425 this compared the engine's own HTTP/1.1 client (`wire`),
aiohttp and httpx side by side (`COMPARE_TUI_HTTP_TRANSPORT` picked each in turn; check that
commit out to rerun the comparison); `wire` and the switch are gone, and it measures the one
chat client (`endpoint.client.chat_client`: aiohttp).

1. Loopback: whole engine runs (request, SSE, score, store) against the zero-delay fake server
   in its own process, at concurrency 64: requests/s and p99 latency.
2. A real llama-server (`local up`, the demo's baseline smollm2-135m, 4 slots, `--threads 1`):
   whole engine runs of the demo set at the demo's concurrency (4): wall time, error classes
   (must be none), HTTP requests per attempt (must be 1: llama-server closes the connection
   after a streamed answer, and a transport that writes into it gets a reset), and TTFT
   against the server's own `timings.prompt_ms` for every attempt.
3. The same real server at concurrency 1 with `cache_prompt: false`: client TTFT −
   `timings.prompt_ms` (what `bench_ttft_accuracy.py` measures).

    PYTHONPATH=. .venv/bin/python bench/bench_transport.py [--rounds 3] [--tasks 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine_overhead import ServerProcess  # noqa: E402

from compare_tui.catalogue import ModelEntry, load_catalogue  # noqa: E402
from compare_tui.endpoint.client import TRANSPORT, chat_client  # noqa: E402
from compare_tui.engine import RunExecutor, RunOverrides, prepare_run  # noqa: E402
from compare_tui.engine.exchange import stream_chat  # noqa: E402
from compare_tui.goldset import GoldenSet, load_golden_set  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from tests.support.builders import hosted_entry, load, write_set  # noqa: E402

DEMO_SET = ROOT / "sample_sets" / "ticket-labels"
MODEL = "smollm2-135m"


TRANSPORTS = (TRANSPORT,)


def use(transport: str) -> None:
    """Kept from the comparison (which set `COMPARE_TUI_HTTP_TRANSPORT` here): one transport now."""
    assert transport == TRANSPORT


async def engine_run(store: Store, goldset: GoldenSet, entry: ModelEntry, concurrency: int) -> dict:
    """One whole run; its wall time and what the store says about it."""
    prepared = prepare_run(store, goldset, entry, RunOverrides(concurrency=concurrency), environ={})
    start = time.perf_counter()
    await RunExecutor(store, prepared).execute()
    wall = time.perf_counter() - start
    attempts = store.attempts_for_run(prepared.run.id)
    audit = store.audit_for_run(prepared.run.id)
    deltas = [
        a.ttft_ms - a.server_timings["prompt_ms"]
        for a in attempts
        if a.ttft_ms is not None and a.server_timings and "prompt_ms" in a.server_timings
    ]
    return {
        "wall": wall,
        "n": len(attempts),
        "e2e": [a.e2e_ms for a in attempts if a.e2e_ms is not None],
        "errors": Counter(a.error_class for a in attempts if a.error_class),
        "requests": len(audit),
        "deltas": deltas,
    }


async def ttft_one(transport: str, endpoint: str, model: str, i: int) -> float | None:
    use(transport)
    body = {
        "model": model,
        "messages": [
            {"role": "user", "content": f"Request {i}: summarise in one line. " + "ticket refund " * (i % 20)}
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 8,
        "temperature": 0,
        "cache_prompt": False,
    }
    async with chat_client(timeout_s=120, concurrency=1) as client:
        ex = await stream_chat(client, endpoint, body)
    acc = ex.acc
    if ex.error_class or acc is None or not acc.timings or acc.ttft_ms() is None:
        print(f"{transport} request {i}: {ex.error or 'no timings'}", file=sys.stderr)
        return None
    return float(acc.ttft_ms() - acc.timings["prompt_ms"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=2000, help="tasks per loopback run")
    parser.add_argument("--concurrency", type=int, default=64, help="loopback concurrency")
    parser.add_argument("--ttft-requests", type=int, default=20, help="per transport, at concurrency 1")
    parser.add_argument("--transports", nargs="+", default=list(TRANSPORTS), choices=TRANSPORTS)
    parser.add_argument("--out", default=str(ROOT / "bench/results/transport.md"))
    parser.add_argument("--skip-loopback", action="store_true")
    args = parser.parse_args()
    names = args.transports
    lines = [
        f"# Chat transport ({', '.join(names)})",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_transport.py --rounds {args.rounds} "
        f"--tasks {args.tasks} --ttft-requests {args.ttft_requests}`; {os.cpu_count()} cores. "
        "Medians over alternating rounds.",
        "",
    ]

    loop: dict[str, dict[str, list]] = {t: {"rate": [], "e2e": []} for t in names}
    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        goldset = load(write_set(Path(tmp) / "set", {f"t{i:06d}": "The quick brown fox." for i in range(args.tasks)}))
        with Store.open(Path(tmp) / "loop.sqlite") as store:
            for _ in range(0 if args.skip_loopback else args.rounds):
                for t in names:
                    use(t)
                    got = asyncio.run(engine_run(store, goldset, hosted_entry(server.url), args.concurrency))
                    assert got["n"] == args.tasks and not got["errors"], (t, got["errors"])
                    loop[t]["rate"].append(got["n"] / got["wall"])
                    loop[t]["e2e"] += got["e2e"]
                    print(t, f"loopback {got['n'] / got['wall']:,.0f} req/s", flush=True)
    lines += [
        f"## Loopback zero-delay server, engine runs of {args.tasks} tasks at concurrency {args.concurrency}",
        "",
        "| transport | req/s | ÷ aiohttp | p99 ms |",
        "|---|---:|---:|---:|",
    ]
    base = float(np.median(loop["aiohttp"]["rate"])) if "aiohttp" in loop else float("nan")
    for t in names if not args.skip_loopback else ():
        rate = float(np.median(loop[t]["rate"]))
        lines.append(f"| {t} | {rate:,.0f} | {rate / base:.2f} | {np.percentile(loop[t]['e2e'], 99):.2f} |")

    from compare_tui.local import down, up

    state = tempfile.mkdtemp(prefix="bench-transport-")
    os.environ["COMPARE_TUI_STATE_DIR"] = state
    real: dict[str, dict[str, list]] = {t: {"wall": [], "deltas": [], "requests": [], "errors": []} for t in names}
    ttft: dict[str, list[float]] = {t: [] for t in names}
    cluster = up([MODEL], parallel=4, ctx=4096, threads=1, catalogue_path=Path(state) / "models.toml")
    try:
        entry = load_catalogue(cluster.catalogue_path).get(MODEL)
        demo = load_golden_set(DEMO_SET)
        with Store.open(Path(state) / "runs.sqlite") as store:
            asyncio.run(engine_run(store, demo, entry, 4))  # warm-up: weights paged in, caches filled
            for r in range(args.rounds):
                for t in names[r % len(names) :] + names[: r % len(names)]:  # each goes first in turn
                    use(t)
                    got = asyncio.run(engine_run(store, demo, entry, 4))
                    real[t]["wall"].append(got["wall"])
                    real[t]["deltas"] += got["deltas"]
                    real[t]["requests"].append(got["requests"] / max(1, got["n"]))
                    real[t]["errors"].append(sum(got["errors"].values()))
                    print(
                        t,
                        f"real {got['wall']:.1f} s, errors {dict(got['errors'])}, TTFT-prompt_ms median {np.median(got['deltas']):.1f} p95 {np.percentile(got['deltas'], 95):.1f}",
                        flush=True,
                    )
        for i in range(args.ttft_requests):
            for t in names:
                delta = asyncio.run(ttft_one(t, entry.endpoint, entry.model, i))
                if delta is not None:
                    ttft[t].append(delta)
    finally:
        down()
    lines += [
        "",
        f"## Real llama-server ({MODEL}, 4 slots, --threads 1): the demo set ({len(demo.tasks)} tasks) at concurrency 4",
        "",
        "| transport | run wall s (median) | min–max | errors | HTTP requests per attempt | "
        "TTFT − server prompt_ms, median ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in names:
        r = real[t]
        lines.append(
            f"| {t} | {np.median(r['wall']):.2f} | {min(r['wall']):.2f}–{max(r['wall']):.2f} | {sum(r['errors'])} "
            f"| {max(r['requests']):.2f} | {np.median(r['deltas']):.2f} | {np.percentile(r['deltas'], 95):.2f} |"
        )
    lines += [
        "",
        f"## Real llama-server, concurrency 1, `cache_prompt: false`, {args.ttft_requests} requests per transport "
        "alternating",
        "",
        "| transport | TTFT − server prompt_ms, median ms | p95 ms | min ms | negative |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in names:
        d = np.array(ttft[t])
        lines.append(
            f"| {t} | {np.median(d):.2f} | {np.percentile(d, 95):.2f} | {d.min():.2f} | {int((d < 0).sum())} |"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
