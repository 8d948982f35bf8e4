"""`publish` of a comparison of 2 runs × 10,000 tasks: time to write the bundle (target ≤ 2 s),
the page's size (targets ≤ 8 MB with answers, ≤ 1 MB without), and the time until headless
Chromium's `load` event on it from file:// (target ≤ 2 s).

    PYTHONPATH=. .venv/bin/python bench/bench_publish.py [--tasks 10000] [--repeat 3] [--out bench/results/publish.md]

The store is bench_report's (one attempt per task, 2 % errors, 1 in 500 tasks human) with a
real golden set of as many tasks (one JSON file each), so inputs and expected outcomes are read
as a user's would be. Medians after a warm-up, measured side by side in one process; the
split (report, answers, page, files) is measured on the same store. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

from compare_tui.publish import publish_report
from compare_tui.publish.comparison_page import comparison_page
from compare_tui.publish.details import Masker, task_details
from compare_tui.report import (
    build_report,
    load_report_inputs,
    render_json,
    report_document,
)
from compare_tui.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_report import fill, median_s

from tests.support.chromium import Browser

WRITE_TARGET_S, LOAD_TARGET_S = 2.0, 2.0
SIZE_TARGETS = {True: 8_000_000, False: 1_000_000}


def write_set(root: Path, tasks: int) -> Path:
    """A golden set with `tasks` tasks named like bench_report's (task-00000 …)."""
    (root / "tasks").mkdir(parents=True)
    (root / "golden.toml").write_text('workload_id = "bench"\nname = "Bench"\nversion = "1"\n'
                                      '[default_scorer]\nkind = "exact"\n')
    for n in range(tasks):
        task = {"id": f"task-{n:05d}", "input": {"system": "Classify the ticket: billing, bug, account or other.",
                                                  "prompt": f"Ticket {n}: I was charged twice for my subscription."},
                "expected": {"text": "billing"}}
        (root / "tasks" / f"task-{n:05d}.json").write_text(json.dumps(task))
    return root


def measure(tasks: int, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "runs.sqlite") as store:
        comparison_id = fill(store, tasks)
        goldset = write_set(Path(folder) / "set", tasks)
        with sqlite3.connect(store.path) as conn:  # bench_report's runs name no set: point them at ours
            conn.execute("UPDATE runs SET goldset_path = ?", [str(goldset)])
        for answers in (True, False):
            name = "with answers" if answers else "without answers"
            target = Path(folder) / name.replace(" ", "-")
            out[f"publish ({name}): the target"] = median_s(
                lambda t=target, a=answers: publish_report(store, comparison_id, t, answers=a), repeat)
            out[f"size ({name}) bytes"] = (target / "index.html").stat().st_size
            out[f"report.json ({name}) bytes"] = (target / "report.json").stat().st_size
        goldsets: dict[str, object] = {}
        inputs = load_report_inputs(store, comparison_id, goldsets=goldsets)
        report = build_report(inputs)
        runs = [r.run for r in inputs.runs]
        mask = Masker(runs)
        details = task_details(store, runs, report.task_ids, mask, goldsets)
        out["split: load (runs, attempts, golden set) + build_report"] = median_s(
            lambda: build_report(load_report_inputs(store, comparison_id)), repeat)
        out["split: task details (answers, masked)"] = median_s(
            lambda: task_details(store, runs, report.task_ids, mask, goldsets), repeat)
        out["split: page (HTML + SVG)"] = median_s(
            lambda: comparison_page(report, report_document(report), runs, details, mask), repeat)
        out["split: render_json"] = median_s(lambda: render_json(report), repeat)
        with Browser() as browser:
            browser.viewport(1280, 800)
            for name in ("with answers", "without answers"):
                url = (Path(folder) / name.replace(" ", "-") / "index.html").as_uri()
                browser.open(url)  # warm-up
                out[f"Chromium navigate → load ({name})"] = statistics.median(browser.open(url) for _ in range(repeat))
    return out


def render(results: dict[str, float], tasks: int, repeat: int) -> str:
    lines = [
        "# Publish benchmark",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_publish.py --tasks {tasks} --repeat {repeat}`",
        "",
        (f"A bundle of a comparison of 2 runs × {tasks:,} tasks (bench_report's store, plus a golden set of "
        f"{tasks:,} JSON task files). Median of {repeat} after a warm-up; Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs visible; Chromium headless over the DevTools pipe, "
        "1280×800, from file://."),
        "",
        "| measure | value | target | met |",
        "|---|---:|---:|---|",
    ]
    for key, value in results.items():
        if key.startswith("publish"):
            lines.append(f"| {key.replace(': the target', '')} (load, build, read answers, write, record) | "
                         f"{value:.2f} s | ≤ {WRITE_TARGET_S:.0f} s | {'yes' if value <= WRITE_TARGET_S else 'NO'} |")
        elif key.startswith("size"):
            limit = SIZE_TARGETS["with answers" in key]
            lines.append(f"| index.html {key[5:-6]} | {value / 1e6:.2f} MB | ≤ {limit / 1e6:.0f} MB | "
                         f"{'yes' if value <= limit else 'NO'} |")
        elif key.startswith("report.json"):
            lines.append(f"| {key[:-6]} | {value / 1e6:.2f} MB | – | – |")
        elif key.startswith("Chromium"):
            lines.append(f"| {key} | {value:.2f} s | ≤ {LOAD_TARGET_S:.0f} s | "
                         f"{'yes' if value <= LOAD_TARGET_S else 'NO'} |")
    lines += ["", "Where the write time goes (same store, with answers):", "", "| step | median s |", "|---|---:|"]
    lines += [f"| {key[7:]} | {value:.3f} |" for key, value in results.items() if key.startswith("split")]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "publish.md"))
    args = parser.parse_args()
    text = render(measure(args.tasks, args.repeat), args.tasks, args.repeat)
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
