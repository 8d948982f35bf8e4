"""The report of a comparison of 2 runs × 10,000 tasks: load + build_report (target ≤ 0.5 s),
each renderer, and the narrow attempt read against reading whole attempt records.

    PYTHONPATH=. .venv/bin/python bench/bench_report.py [--tasks 10000] [--repeat 5] [--out bench/results/report.md]

Prints a markdown table of median seconds measured side by side in one process, and saves
it. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compare_tui.report import (
    AttemptFacts,
    ReportInputs,
    RunInput,
    build_report,
    load_report_inputs,
    render_json,
    render_junit,
    render_md,
)
from compare_tui.store import AttemptRecord, ComparisonRecord, ReviewRecord, RunRecord, Store

TARGET_S = 0.5
HARDWARE = {"basis": "hardware", "usd_per_hour": 2.0, "gpu_count": 1}
TOKEN_PRICE = {
    "basis": "token_price",
    "usd_per_mtok_input": 0.15,
    "usd_per_mtok_output": 0.6,
    "captured": "2026-11-30",
    "source": "price page",
}


def fill(store: Store, tasks: int) -> str:
    """Two runs over the same `tasks` tasks (a few human, some errors), one comparison."""
    rng = random.Random(20260101)
    run_ids = []
    models = (("local-small", 0.72, HARDWARE, "local"), ("hosted-big", 0.78, TOKEN_PRICE, "hosted"))
    for name, skill, basis, kind in models:
        run = store.create_run(
            RunRecord(
                goldset_id="bench",
                goldset_name="Bench",
                goldset_version="1",
                goldset_digest="sha256:bench",
                model_name=name,
                model_entry={"kind": kind},
                provenance="verified",
                cost_basis=basis,
                started_at="2026-01-01T00:00:00Z",
                finished_at="2026-01-01T02:00:00Z",
                task_count=tasks,
                gpu={"measured": True, "devices": [{"index": 0, "peak_bytes": 6 * 2**30, "baseline_bytes": 2**30}]},
            )
        )
        run_ids.append(run.id)
        records = []
        for n in range(tasks):
            roll = rng.random()
            outcome = "review" if n % 500 == 0 else "error" if roll > 0.98 else "pass" if roll < skill else "fail"
            records.append(
                AttemptRecord(
                    run_id=run.id,
                    task_id=f"task-{n:05d}",
                    attempt=1,
                    outcome=outcome,
                    answer_text="billing" * 8,
                    score_detail="exact match after normalisation",
                    ttft_ms=rng.uniform(20, 200),
                    e2e_ms=rng.uniform(200, 3000),
                    prompt_tokens=None if outcome == "error" else 180,
                    completion_tokens=None if outcome == "error" else rng.randint(4, 60),
                    error_class="timeout" if outcome == "error" else None,
                    started_at="2026-01-01T00:00:00Z",
                    finished_at="2026-01-01T00:00:01Z",
                )
            )
        for offset in range(0, len(records), 2_000):
            store.record_attempts(records[offset : offset + 2_000])
        for n in range(0, tasks, 1_000):
            store.add_review(ReviewRecord(run_id=run.id, task_id=f"task-{n:05d}", verdict="pass"))
    comparison = store.create_comparison(ComparisonRecord(name="bench", run_ids=run_ids))
    return comparison.id


def full_record_inputs(store: Store, comparison_id: str) -> ReportInputs:
    """The same inputs through the store's typed records (every attempt field validated)."""
    runs = []
    for run_id in store.get_comparison(comparison_id).run_ids:
        facts = tuple(AttemptFacts.from_record(a) for a in store.attempts_for_run(run_id))
        verdicts = {t: r.verdict for t, r in store.reviews_for_run(run_id).items()}
        runs.append(RunInput(store.get_run(run_id), facts, verdicts))
    return ReportInputs(runs=tuple(runs), comparison_id=comparison_id)


def median_s(work: Callable[[], object], repeat: int) -> float:
    work()  # warm-up: imports, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def render_text_to_string(report) -> str:
    from rich.console import Console

    from compare_tui.report.render_text import render_text

    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(render_text(report))
    return console.file.getvalue()


def measure(tasks: int, repeat: int) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "runs.sqlite") as store:
        comparison_id = fill(store, tasks)
        inputs = load_report_inputs(store, comparison_id)
        report = build_report(inputs)

        def load() -> ReportInputs:
            return load_report_inputs(store, comparison_id)

        return [
            ("load + build_report (the target)", median_s(lambda: build_report(load()), repeat)),
            ("load_report_inputs (narrow attempt read)", median_s(load, repeat)),
            (
                "load through whole AttemptRecords (for comparison)",
                median_s(lambda: full_record_inputs(store, comparison_id), repeat),
            ),
            ("build_report", median_s(lambda: build_report(inputs), repeat)),
            ("render_json", median_s(lambda: render_json(report), repeat)),
            ("render_md", median_s(lambda: render_md(report), repeat)),
            ("render_junit", median_s(lambda: render_junit(report), repeat)),
            ("render_text (Rich, to a string)", median_s(lambda: render_text_to_string(report), repeat)),
        ]


def median_table(results: list[tuple[str, float]], target_s: float) -> list[str]:
    """A markdown table of (step, median seconds), each as a share of the target."""
    lines = [f"| step | median s | share of the {target_s:g} s target |", "|---|---:|---:|"]
    return lines + [f"| {what} | {seconds:.3f} | {seconds / target_s:.0%} |" for what, seconds in results]


def render(results: list[tuple[str, float]], tasks: int, repeat: int) -> str:
    target = results[0][1]
    narrow = dict(results)["load_report_inputs (narrow attempt read)"]
    full = dict(results)["load through whole AttemptRecords (for comparison)"]
    lines = [
        "# Report benchmark",
        "",
        f"A comparison of 2 runs × {tasks:,} tasks (one attempt each; 2 % errors, 1 in 500 tasks human). "
        f"Median of {repeat} after a warm-up; Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs visible.",
        "",
        *median_table(results, TARGET_S),
    ]
    verdict = "within" if target <= TARGET_S else "OVER"
    lines += [
        "",
        f"load + build_report: {target:.3f} s, {verdict} the {TARGET_S} s target. Reading whole "
        f"attempt records instead of the narrow read takes {full / narrow:.1f}× as long, measured "
        "side by side.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "report.md")
    args = parser.parse_args()
    text = render(measure(args.tasks, args.repeat), args.tasks, args.repeat)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
