"""Where the engine's time per request goes: CPU µs of each step of one attempt, measured alone
(no network), beside the CPU a whole request costs the raw aiohttp client, the engine's own
HTTP client alone (`endpoint.client.chat_client`, the same least client as raw aiohttp's) and the engine, in
the same run against the zero-delay loopback SSE server (bench_engine_overhead.py's server).

At concurrency 64 the clients are CPU-bound on one core (the server runs in its own process),
so requests/s ≈ 1 / CPU per request, and the engine / raw aiohttp ratio is the inverse ratio of
their CPU per request. The rest row is the engine's CPU per request minus its HTTP client's
minus the steps measured alone: event-loop bookkeeping (the writer's futures, task switches),
and what a step costs inside a real run beyond its cost in a hot loop (cache misses).

    PYTHONPATH=. .venv/bin/python bench/bench_engine_costs.py [--tasks 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine_overhead import ServerProcess, raw_aiohttp  # noqa: E402

from compare_tui.endpoint.client import chat_client, open_post  # noqa: E402
from compare_tui.engine import RunExecutor, RunOverrides, prepare_run  # noqa: E402
from compare_tui.engine.audit import audit_values_of  # noqa: E402
from compare_tui.engine.exchange import Exchange, _chunk, _encode  # noqa: E402
from compare_tui.engine.request import chat_body  # noqa: E402
from compare_tui.engine.sse import SseFramer  # noqa: E402
from compare_tui.engine.stream import StreamAccumulator  # noqa: E402
from compare_tui.scoring import score  # noqa: E402
from compare_tui.store import Store, utc_now  # noqa: E402
from compare_tui.store.rows import attempt_values  # noqa: E402
from tests.support.builders import hosted_entry, load, write_set  # noqa: E402

BATCH = 64
"""Attempts per group commit in the store step (what the writer gathers at concurrency 64)."""


def _us(fn: Callable[[], object], number: int = 2000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


async def _one_stream(url: str) -> list[bytes]:
    body = {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16,
        "temperature": 0,
    }
    async with aiohttp.ClientSession() as session, session.post(url + "/chat/completions", json=body) as response:
        return [chunk async for chunk in response.content.iter_any()]


def steps(url: str, workdir: Path) -> dict[str, float]:
    """CPU µs of each step of one attempt, each measured alone."""
    reads = asyncio.run(_one_stream(url))
    goldset = load(write_set(workdir / "steps-set", {f"t{i:06d}": "The quick brown fox." for i in range(BATCH)}))
    store = Store.open(workdir / "steps.sqlite")
    prepared = prepare_run(store, goldset, hosted_entry(url), RunOverrides(concurrency=BATCH), environ={})
    task, run = goldset.tasks[0], prepared.run
    spec = goldset.scorer_for(task)

    def frame() -> list[bytes | str]:
        framer = SseFramer()
        return [d for read in reads for d in framer.feed_data(read)]

    datas = [d for d in frame() if d != b"[DONE]"]
    parsed = [_chunk(d) for d in datas]

    def accumulate() -> StreamAccumulator:
        acc = StreamAccumulator(sent_ns=0)
        for chunk in parsed:
            acc.feed(chunk, 1)
        return acc

    answer = accumulate().answer()

    exchange = Exchange(status=200, bytes_in=1299, bytes_out=180, sent_ns=0, ended_ns=1_000_000)

    def records() -> tuple[dict[str, object], dict[str, object]]:
        audit = audit_values_of(exchange, endpoint=url, model="fake-model", task_id=task.id, attempt=1, run_id=run.id)
        row = attempt_values(
            run_id=run.id,
            task_id=task.id,
            attempt=1,
            outcome="pass",
            answer_text=answer.text,
            tool_calls=[],
            reasoning=None,
            score_detail="exact match",
            score_data={},
            isolation=None,
            error_class=None,
            error=None,
            ttft_ms=1.0,
            e2e_ms=2.0,
            prompt_tokens=12,
            completion_tokens=4,
            usage_missing=False,
            server_timings=None,
            started_at=utc_now(),
            finished_at=utc_now(),
            retries=0,
            finish_reason="stop",
        )
        return audit, row

    audit, row = records()
    round_no = iter(range(1, 10**6))

    def commit() -> float:
        n = next(round_no)
        batch = [
            (
                [audit | {"task_id": t.id, "attempt": n}],
                row | {"id": f"{run.id}:{t.id}:{n}", "task_id": t.id, "attempt": n},
            )
            for t in goldset.tasks
        ]
        start = time.process_time()
        store.record_outcomes(batch)
        return (time.process_time() - start) / len(batch) * 1e6

    commit()
    result = {
        f"request body (chat_body + msgspec, {len(_encode(chat_body(task, 'fake-model', prepared.settings)))} B)": _us(
            lambda: _encode(chat_body(task, "fake-model", prepared.settings))
        ),
        f"SSE framing ({len(datas) + 1} events in {len(reads)} read(s))": _us(frame),
        f"JSON of {len(datas)} chunks": _us(lambda: [_chunk(d) for d in datas]),
        "accumulate chunks + answer": _us(lambda: accumulate().answer()),
        "score (exact)": _us(lambda: score(task, spec, answer, set_root=goldset.root)),
        "audit row + attempt row (unvalidated, 3 timestamps)": _us(records),
        f"SQLite group commit (per attempt, {BATCH} a transaction)": min(commit() for _ in range(20)),
    }
    store.close()
    return result


async def _engine(url: str, goldset, workdir: Path, concurrency: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    with Store.open(workdir / f"runs-{time.perf_counter_ns()}.sqlite") as store:
        prepared = prepare_run(store, goldset, hosted_entry(url), RunOverrides(concurrency=concurrency), environ={})
        cpu, start = time.process_time(), time.perf_counter()
        await RunExecutor(store, prepared).execute()
        return time.perf_counter() - start, time.process_time() - cpu


async def raw_chat_client(url: str, n: int, concurrency: int) -> tuple[float, list[float]]:
    """raw_aiohttp's least client on the engine's chat client: POST, read to [DONE]."""
    body = json.dumps(
        {
            "model": "fake-model",
            "messages": [{"role": "user", "content": "x"}],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": 16,
            "temperature": 0,
        }
    ).encode()
    counter = iter(range(n))
    async with chat_client(timeout_s=60, concurrency=concurrency) as client:

        async def worker() -> None:
            for _ in counter:
                async with open_post(
                    client, url + "/chat/completions", body, {"Content-Type": "application/json"}
                ) as response:
                    async for chunk in response.chunks():
                        if b"[DONE]" in chunk:
                            break

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - start), []


def whole(url: str, workdir: Path, n: int, rounds: int, concurrency: int) -> dict[str, tuple[float, float]]:
    """(requests/s, CPU µs per request) medians for raw aiohttp, the raw chat client and the
    engine, alternating."""
    goldset = load(write_set(workdir / "whole-set", {f"t{i:06d}": "The quick brown fox." for i in range(n)}))
    got: dict[str, list[tuple[float, float]]] = {"raw aiohttp": [], "raw chat client": [], "engine": []}
    for _ in range(rounds):
        for name, client in (("raw aiohttp", raw_aiohttp), ("raw chat client", raw_chat_client)):
            cpu = time.process_time()
            rate, _ = asyncio.run(client(url, n, concurrency))
            got[name].append((rate, (time.process_time() - cpu) / n * 1e6))
        elapsed, cpu_s = asyncio.run(_engine(url, goldset, workdir, concurrency))
        got["engine"].append((n / elapsed, cpu_s / n * 1e6))
    return {k: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        measured = whole(server.url, Path(tmp), args.tasks, args.rounds, args.concurrency)
        parts = steps(server.url, Path(tmp))
    raw_rate, raw_cpu = measured["raw aiohttp"]
    client_rate, client_cpu = measured["raw chat client"]
    eng_rate, eng_cpu = measured["engine"]
    print(f"Concurrency {args.concurrency}, {args.tasks} requests × {args.rounds} alternating rounds (medians).")
    print(
        f"raw aiohttp: {raw_rate:,.0f} req/s, {raw_cpu:.0f} µs CPU/request; engine: {eng_rate:,.0f} req/s, "
        f"{eng_cpu:.0f} µs CPU/request; ratio {eng_rate / raw_rate:.2f} (CPU ratio {raw_cpu / eng_cpu:.2f}); "
        f"raw chat client: {client_rate:,.0f} req/s, {client_cpu:.0f} µs CPU/request"
    )
    print("\n| step of one attempt | CPU µs |\n|---|---:|")
    print(
        f"| HTTP request + response on the engine's chat client (the raw chat client's whole cost) | {client_cpu:.0f} |"
    )
    for name, us in parts.items():
        print(f"| {name} | {us:.1f} |")
    rest = eng_cpu - client_cpu - sum(parts.values())
    print(
        f"| rest: event loop, writer futures, task switches, cache misses of a real run vs the hot loops above "
        f"| {rest:.0f} |"
    )
    print(f"| **engine, whole request** | **{eng_cpu:.0f}** |")
    print(f"| (raw aiohttp, whole request, for comparison) | ({raw_cpu:.0f}) |")


if __name__ == "__main__":
    main()
