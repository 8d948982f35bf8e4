"""Run-store throughput: attempts written one transaction each (as the engine writes them)
against the same attempts written in batches, and a 10,000-attempt run read back.

    PYTHONPATH=. .venv/bin/python bench/bench_store.py [--attempts 100000] [--out bench/results/store.md]

Prints a markdown table of rows/s measured side by side in one process, and saves it.
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import platform
import sqlite3
import tempfile
import time
from pathlib import Path

from compare_tui.store import AttemptRecord, RunRecord, Store

RUN_SIZE = 10_000
BATCH = 1_000


def _attempts(run_id: str, count: int) -> list[AttemptRecord]:
    # A realistic row: a short answer, one tool call, score detail, timings and tokens.
    return [
        AttemptRecord(
            run_id=run_id,
            task_id=f"task-{n:05d}",
            attempt=1,
            outcome="pass" if n % 3 else "fail",
            answer_text="billing" * 8,
            tool_calls=[{"id": "c1", "name": "lookup", "arguments": '{"q": 1}'}],
            score_detail="exact match after normalisation",
            score_data={"expected": "billing"},
            ttft_ms=41.5,
            e2e_ms=220.25,
            prompt_tokens=180,
            completion_tokens=12,
            started_at="2026-01-01T00:00:00Z",
            finished_at="2026-01-01T00:00:01Z",
            finish_reason="stop",
        )
        for n in range(count)
    ]


def _timed_inserts(store: Store, prefix: str, total: int, batch: int | None) -> float:
    """Seconds spent writing `total` attempts in runs of RUN_SIZE; building records is not timed."""
    spent = 0.0
    for index in range(max(1, total // RUN_SIZE)):
        run = store.create_run(RunRecord(id=f"{prefix}{index}", goldset_id="bench", model_name="m"))
        records = _attempts(run.id, min(RUN_SIZE, total))  # one run's records at a time: bounded memory
        start = time.perf_counter()
        if batch is None:
            for record in records:
                store.record_attempt(record)
        else:
            for offset in range(0, len(records), batch):
                store.record_attempts(records[offset : offset + batch])
        spent += time.perf_counter() - start
    return spent


def measure(total: int) -> list[tuple[str, int, float]]:
    """(what, rows, seconds) for each measured operation, in a fresh store each time."""
    results = []
    with tempfile.TemporaryDirectory() as folder:
        with Store.open(Path(folder) / "single.sqlite") as store:
            spent = _timed_inserts(store, "single", total, None)
            results.append(("insert, one transaction per attempt", total, spent))

            again = _attempts("single0", RUN_SIZE // 10)
            start = time.perf_counter()
            for record in again:
                store.record_attempt(record)  # same ids again: the idempotent resume path
            results.append(("re-insert same ids (INSERT OR REPLACE)", len(again), time.perf_counter() - start))

            start = time.perf_counter()
            read = store.attempts_for_run("single0")
            results.append(
                (f"read one run back ({len(read):,} attempts, as records)", len(read), time.perf_counter() - start)
            )

            start = time.perf_counter()
            keys = store.completed_keys("single0")
            results.append(("completed_keys of one run", len(keys), time.perf_counter() - start))

        with Store.open(Path(folder) / "batched.sqlite") as store:
            spent = _timed_inserts(store, "batch", total, BATCH)
            results.append((f"insert, batches of {BATCH:,}", total, spent))

        start = time.perf_counter()
        built = _attempts("build", RUN_SIZE)
        results.append(("build AttemptRecord objects (pydantic, no store)", len(built), time.perf_counter() - start))
    return results


def render(results: list[tuple[str, int, float]]) -> str:
    lines = [
        "# Run store benchmark",
        "",
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {platform.machine()}; "
        "WAL, synchronous=NORMAL; one process.",
        "",
        "| operation | rows | seconds | rows/s |",
        "|---|---:|---:|---:|",
    ]
    for what, rows, seconds in results:
        lines.append(f"| {what} | {rows:,} | {seconds:.2f} | {rows / seconds:,.0f} |")
    single = next(s / r for w, r, s in results if w.startswith("insert, one"))
    batched = next(s / r for w, r, s in results if w.startswith("insert, batches"))
    lines += ["", f"Batched inserts are {single / batched:.1f}× the per-attempt rate, measured side by side."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "store.md")
    args = parser.parse_args()
    text = render(measure(args.attempts))
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
