"""The report as each surface reads it, on bench_report's store (2 runs × N tasks): the
`report` command in text, JSON and Markdown (in process, output to a file), Home's pass rate of
one run, and the review queue's report. Runs on any checkout (before and after the one report
assembly: the queue's path is `assembly.report_rows` where it exists, else the whole report).

    PYTHONPATH=. .venv/bin/python bench/bench_assembly.py [--tasks 10000] [--repeat 5]

Prints a markdown table of median wall and CPU seconds (the process's CPU: on a shared machine
the steadier figure, since each step runs on one thread). Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import fill  # noqa: E402

from compare_tui.cli import main as cli  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from compare_tui.tui.home_data import report_pass_rate  # noqa: E402


def _queue_work(store: Store, ref: str):
    try:
        from compare_tui.assembly import report_rows

        return lambda: report_rows(store, ref)
    except ImportError:  # before the assembly: the review screen built the whole report
        from compare_tui.report import build_report, load_report_inputs

        return lambda: build_report(load_report_inputs(store, ref))


def median_s(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `repeat` calls after a warm-up."""
    work()
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def measure(tasks: int, repeat: int) -> list[tuple[str, tuple[float, float]]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.sqlite"
        with Store.open(path) as store:
            comparison_id = fill(store, tasks)
            run_id = store.get_comparison(comparison_id).run_ids[0]
        out = str(Path(folder) / "report.out")

        def command(fmt: str):
            def work() -> None:
                with contextlib.redirect_stderr(io.StringIO()):
                    cli(["report", comparison_id, "--store", str(path), "--format", fmt, "--out", out])

            return work

        rows = [(f"report --format {fmt}", median_s(command(fmt), repeat)) for fmt in ("text", "json", "md")]
        with Store.open(path) as store:
            rows.append(("Home: one run's pass rate", median_s(lambda: report_pass_rate(store, run_id), repeat)))
            rows.append(("review queue's report", median_s(_queue_work(store, comparison_id), repeat)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = measure(args.tasks, args.repeat)
    print(f"2 runs × {args.tasks} tasks, median of {args.repeat}, load {os.getloadavg()[0]:.1f}")
    print("| what | wall s | CPU s |\n|---|---:|---:|")
    for what, (wall, cpu) in rows:
        print(f"| {what} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
