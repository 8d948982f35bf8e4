"""Harness overhead: the engine beside two minimal raw streaming clients, in one run: httpx, and
aiohttp (the floor of a Python HTTP library client, with kept connections; the engine sends
through aiohttp too: `endpoint.client.chat_client`).

All three talk to the zero-delay loopback SSE server (tests/support/fake_openai.py) at the same
concurrency; blocks alternate (httpx, aiohttp, engine, httpx, …) so machine drift hits all.
The engine does everything a real run does: build the request, frame SSE, score, write the
attempt and the audit row to a WAL SQLite store. Reported: requests/s ratios (target: engine ≥
0.9× raw aiohttp at concurrency 64) and added p99 latency per request (target ≤ 2 ms).

    PYTHONPATH=. .venv/bin/python bench/bench_engine_overhead.py [--tasks 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from tests.support.builders import hosted_entry, load, write_set  # noqa: E402


class ServerProcess:
    """The zero-delay server in its own process, so it never competes for this one's GIL."""

    def __enter__(self) -> ServerProcess:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_openai", "--port", "0", "--mode", "zero-delay"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.proc.stdout.readline().strip()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def raw_client(url: str, n: int, concurrency: int) -> tuple[float, list[float]]:
    """The least a client can do: POST, read the stream to [DONE], time it."""
    latencies: list[float] = []
    body = {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16,
        "temperature": 0,
    }
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    counter = iter(range(n))
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def worker() -> None:
            for _ in counter:
                t0 = time.perf_counter_ns()
                async with client.stream("POST", url + "/chat/completions", json=body) as response:
                    async for chunk in response.aiter_raw():
                        if b"[DONE]" in chunk:
                            break
                latencies.append((time.perf_counter_ns() - t0) / 1e6)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - start), latencies


async def raw_aiohttp(url: str, n: int, concurrency: int) -> tuple[float, list[float]]:
    """The same least client on aiohttp: POST, read the stream to [DONE], time it."""
    import aiohttp

    latencies: list[float] = []
    body = {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16,
        "temperature": 0,
    }
    counter = iter(range(n))
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(
        connector=connector, trust_env=False, timeout=aiohttp.ClientTimeout(total=60)
    ) as session:

        async def worker() -> None:
            for _ in counter:
                t0 = time.perf_counter_ns()
                async with session.post(url + "/chat/completions", json=body) as response:
                    async for chunk in response.content.iter_any():
                        if b"[DONE]" in chunk:
                            break
                latencies.append((time.perf_counter_ns() - t0) / 1e6)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - start), latencies


async def engine_client(url: str, n: int, concurrency: int, workdir: Path) -> tuple[float, list[float]]:
    goldset = load(write_set(workdir / f"set-{n}", {f"t{i:06d}": "The quick brown fox." for i in range(n)}))
    with Store.open(workdir / f"runs-{time.perf_counter_ns()}.sqlite") as store:
        prepared = prepare_run(store, goldset, hosted_entry(url), RunOverrides(concurrency=concurrency), environ={})
        start = time.perf_counter()
        await RunExecutor(store, prepared).execute()
        elapsed = time.perf_counter() - start
        attempts = store.attempts_for_run(prepared.run.id)
    assert len(attempts) == n and all(a.outcome == "pass" for a in attempts), "the engine lost or failed attempts"
    # The audit ledger's duration is the request's wall time as the engine saw it.
    return n / elapsed, [a.e2e_ms for a in attempts if a.e2e_ms is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--out", default=str(ROOT / "bench/results/engine_overhead.md"))
    args = parser.parse_args()
    lines = [
        "| concurrency | raw httpx req/s | raw aiohttp req/s | engine req/s | engine / httpx | engine / aiohttp "
        "| httpx p99 ms | aiohttp p99 ms | engine p99 ms | added p99 ms (vs aiohttp) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        for c in args.concurrency:
            raw_rates, aio_rates, eng_rates, raw_lat, aio_lat, eng_lat = [], [], [], [], [], []
            for _ in range(args.rounds):
                rate, lat = asyncio.run(raw_client(server.url, args.tasks, c))
                raw_rates.append(rate)
                raw_lat += lat
                rate, lat = asyncio.run(raw_aiohttp(server.url, args.tasks, c))
                aio_rates.append(rate)
                aio_lat += lat
                rate, lat = asyncio.run(engine_client(server.url, args.tasks, c, Path(tmp)))
                eng_rates.append(rate)
                eng_lat += lat
            raw_r, aio_r, eng_r = (float(np.median(x)) for x in (raw_rates, aio_rates, eng_rates))
            raw_p99, aio_p99, eng_p99 = (float(np.percentile(x, 99)) for x in (raw_lat, aio_lat, eng_lat))
            lines.append(
                f"| {c} | {raw_r:,.0f} | {aio_r:,.0f} | {eng_r:,.0f} | {eng_r / raw_r:.2f} | {eng_r / aio_r:.2f} "
                f"| {raw_p99:.2f} | {aio_p99:.2f} | {eng_p99:.2f} | {eng_p99 - aio_p99:+.2f} |"
            )
            print(lines[-1], flush=True)
    header = [
        "# Engine overhead vs raw httpx and raw aiohttp clients (zero-delay loopback SSE server)",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_engine_overhead.py --tasks {args.tasks} --rounds {args.rounds}`",
        f"Medians of {args.rounds} alternating rounds of {args.tasks} requests; p99 over all rounds. "
        "Engine latency is its own end-to-end figure (request sent → last token chunk).",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(header + lines) + "\n")
    print("\n".join(header + lines))


if __name__ == "__main__":
    main()
