"""Where the engine's time per request goes: CPU µs of each step of one attempt, measured alone
(no network), beside the CPU a whole request costs the raw aiohttp client and the engine in the
same run against the zero-delay loopback SSE server (bench_engine_overhead.py's server).

At concurrency 64 both clients are CPU-bound on one core (the server runs in its own process),
so requests/s ≈ 1 / CPU per request, and the engine / raw aiohttp ratio is the inverse ratio of
their CPU per request. The rest row is the engine's CPU per request minus raw aiohttp's minus
the steps measured alone: event-loop bookkeeping (the exchange's timeout, the writer's futures),
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

from compare_tui.engine import RunExecutor, RunOverrides, prepare_run  # noqa: E402
from compare_tui.engine.client import _chunk  # noqa: E402
from compare_tui.engine.request import chat_body  # noqa: E402
from compare_tui.engine.sse import SseFramer  # noqa: E402
from compare_tui.engine.stream import StreamAccumulator  # noqa: E402
from compare_tui.scoring import score  # noqa: E402
from compare_tui.store import AttemptRecord, AuditRow, Store, utc_now  # noqa: E402
from tests.support.builders import hosted_entry, load, write_set  # noqa: E402

BATCH = 64
"""Attempts per group commit in the store step (what the writer gathers at concurrency 64)."""


def _us(fn: Callable[[], object], number: int = 2000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


async def _one_stream(url: str) -> list[bytes]:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "x"}], "stream": True,
            "stream_options": {"include_usage": True}, "max_tokens": 16, "temperature": 0}
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

    def frame() -> list[str]:
        return [e.data for read in reads for e in SseFramer().feed(read, 1)]

    datas = [d for d in frame() if d != "[DONE]"]
    parsed = [_chunk(d) for d in datas]

    def accumulate() -> StreamAccumulator:
        acc = StreamAccumulator(sent_ns=0)
        for chunk in parsed:
            acc.feed(chunk, 1)
        return acc

    answer = accumulate().answer()

    def records() -> tuple[AuditRow, AttemptRecord]:
        audit = AuditRow(at=utc_now(), run_id=run.id, task_id=task.id, attempt=1, endpoint=url, model="fake-model",
                         status=200, bytes_in=1299, bytes_out=180, prompt_tokens=12, completion_tokens=4,
                         duration_ms=1.0, error_class=None)
        record = AttemptRecord(id=f"{run.id}:{task.id}:1", run_id=run.id, task_id=task.id, attempt=1, outcome="pass",
                               answer_text=answer.text, tool_calls=[], reasoning=None, score_detail="exact match",
                               score_data={}, isolation=None, error_class=None, error=None, ttft_ms=1.0, e2e_ms=2.0,
                               prompt_tokens=12, completion_tokens=4, usage_missing=False, server_timings=None,
                               started_at=utc_now(), finished_at=utc_now(), retries=0, finish_reason="stop")
        return audit, record

    audit, record = records()
    round_no = iter(range(1, 10**6))

    def commit() -> float:
        n = next(round_no)
        batch = [([audit.model_copy(update={"task_id": t.id, "attempt": n})],
                  record.model_copy(update={"id": f"{run.id}:{t.id}:{n}", "task_id": t.id, "attempt": n}))
                 for t in goldset.tasks]
        start = time.process_time()
        store.record_outcomes(batch)
        return (time.process_time() - start) / len(batch) * 1e6

    commit()
    result = {
        f"request body (chat_body + json.dumps, {len(json.dumps(chat_body(task, 'fake-model', prepared.settings)))} B)":
            _us(lambda: json.dumps(chat_body(task, "fake-model", prepared.settings), ensure_ascii=False).encode()),
        f"SSE framing ({len(datas) + 1} events in {len(reads)} read(s))": _us(frame),
        f"JSON of {len(datas)} chunks": _us(lambda: [_chunk(d) for d in datas]),
        "accumulate chunks + answer": _us(lambda: accumulate().answer()),
        "score (exact)": _us(lambda: score(task, spec, answer, set_root=goldset.root)),
        "audit row + attempt record (pydantic, 4 timestamps)": _us(records),
        f"rows + SQLite group commit (per attempt, {BATCH} a transaction)": min(commit() for _ in range(20)),
    }
    store.close()
    return result


async def _engine(url: str, goldset, workdir: Path, concurrency: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    with Store.open(workdir / f"runs-{time.perf_counter_ns()}.sqlite") as store:
        prepared = prepare_run(store, goldset, hosted_entry(url), RunOverrides(concurrency=concurrency), environ={})
        cpu, start = time.process_time(), time.perf_counter()
        await RunExecutor(store, prepared).execute()
        return time.perf_counter() - start, time.process_time() - cpu


def whole(url: str, workdir: Path, n: int, rounds: int, concurrency: int) -> dict[str, tuple[float, float]]:
    """(requests/s, CPU µs per request) medians for raw aiohttp and the engine, alternating."""
    goldset = load(write_set(workdir / "whole-set", {f"t{i:06d}": "The quick brown fox." for i in range(n)}))
    got: dict[str, list[tuple[float, float]]] = {"raw aiohttp": [], "engine": []}
    for _ in range(rounds):
        cpu = time.process_time()
        rate, _ = asyncio.run(raw_aiohttp(url, n, concurrency))
        got["raw aiohttp"].append((rate, (time.process_time() - cpu) / n * 1e6))
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
    eng_rate, eng_cpu = measured["engine"]
    print(f"Concurrency {args.concurrency}, {args.tasks} requests × {args.rounds} alternating rounds (medians).")
    print(f"raw aiohttp: {raw_rate:,.0f} req/s, {raw_cpu:.0f} µs CPU/request; engine: {eng_rate:,.0f} req/s, "
          f"{eng_cpu:.0f} µs CPU/request; ratio {eng_rate / raw_rate:.2f} (CPU ratio {raw_cpu / eng_cpu:.2f})")
    print("\n| step of one attempt | CPU µs |\n|---|---:|")
    print(f"| aiohttp request + response (the raw client's whole cost) | {raw_cpu:.0f} |")
    for name, us in parts.items():
        print(f"| {name} | {us:.1f} |")
    rest = eng_cpu - raw_cpu - sum(parts.values())
    print(f"| rest: event loop, the exchange's timeout, writer futures, cache misses of a real run vs the hot loops above "
          f"| {rest:.0f} |")
    print(f"| **engine, whole request** | **{eng_cpu:.0f}** |")
    print(f"\nFor 0.9× raw aiohttp the engine may spend {raw_cpu / 0.9 - raw_cpu:.0f} µs a request beyond aiohttp; "
          f"the steps measured alone take {sum(parts.values()):.0f}.")


if __name__ == "__main__":
    main()
