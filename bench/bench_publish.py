"""`publish` of a comparison of 2 runs × 10,000 tasks: time to write the bundle (target ≤ 2 s),
the page's size (targets ≤ 8 MB with answers, ≤ 1 MB without), and the time until headless
Chromium's `load` event on it from file:// (target ≤ 2 s).

    PYTHONPATH=. .venv/bin/python bench/bench_publish.py [--tasks 10000] [--repeat 3] [--before /work/main] [--out bench/results/publish.md]

The store is bench_report's (one attempt per task, 2 % errors, 1 in 500 tasks human) with a
real golden set of as many tasks (one JSON file each), so inputs and expected outcomes are read
as a user's would be. Medians after a warm-up, measured side by side in one process; the
split (report, answers, page, files) is measured on the same store. With `--before CHECKOUT`
(another checkout of compare-tui, e.g. main before a change), the write is also timed with that
checkout's code on a copy of one store (filled by that checkout's own benchmark code, so an older
store schema is no obstacle; this checkout migrates its copy), alternating with this one's in child processes (a shared
machine's load then weighs on both alike), and the two bundles' sha256 are compared. Not a
test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_tui.publish import publish_report
from compare_tui.publish.comparison_page import comparison_page
from compare_tui.publish.details import Masker, task_details
from compare_tui.publish.indented_json import indented_json
from compare_tui.report import (
    build_report,
    load_report_inputs,
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
    (root / "golden.toml").write_text(
        'workload_id = "bench"\nname = "Bench"\nversion = "1"\n[default_scorer]\nkind = "exact"\n'
    )
    for n in range(tasks):
        task = {
            "id": f"task-{n:05d}",
            "input": {
                "system": "Classify the ticket: billing, bug, account or other.",
                "prompt": f"Ticket {n}: I was charged twice for my subscription.",
            },
            "expected": {"text": "billing"},
        }
        (root / "tasks" / f"task-{n:05d}.json").write_text(json.dumps(task))
    return root


# One publish in a child process running a given checkout's code: a warm-up, then one timed write.
CHILD = """
import json, sys, time
from pathlib import Path
from compare_tui.publish import publish_report
from compare_tui.store import Store
store, out, answers = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "1"
with Store.open(Path(store)) as s:
    publish_report(s, "latest", out, answers=answers)
    wall, cpu = time.perf_counter(), time.process_time()
    publish_report(s, "latest", out, answers=answers)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
"""


def child_publish(checkout: Path, store: Path, out: Path, answers: bool) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(store), str(out), "1" if answers else "0"],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# The store in a child process running the older checkout's own benchmark code, so a checkout
# whose store schema is older than this one's can read it (this checkout migrates its copy).
BEFORE_STORE = """
import sqlite3, sys
from pathlib import Path
sys.path[:0] = [str(Path.cwd() / "bench"), str(Path.cwd())]
from bench_publish import write_set
from bench_report import fill
from compare_tui.store import Store
folder, tasks = Path(sys.argv[1]), int(sys.argv[2])
with Store.open(folder / "runs.sqlite") as store:
    fill(store, tasks)
goldset = write_set(folder / "set", tasks)
with sqlite3.connect(folder / "runs.sqlite") as conn:
    conn.execute("UPDATE runs SET goldset_path = ?", [str(goldset)])
"""


def before_after(before: Path, folder: Path, tasks: int, repeat: int) -> dict[str, float]:
    """The write timed with `before`'s code and with this checkout's, alternating, on copies of one
    store that `before`'s code filled; and whether the two wrote the same bytes."""
    here = Path(__file__).resolve().parents[1]
    (folder / "before").mkdir()
    subprocess.run(
        [sys.executable, "-c", BEFORE_STORE, str(folder / "before"), str(tasks)],
        cwd=before,
        env={**os.environ, "PYTHONPATH": str(before)},
        check=True,
    )
    stores = {"before": folder / "before" / "runs.sqlite", "after": folder / "after.sqlite"}
    with sqlite3.connect(stores["before"]) as src, sqlite3.connect(stores["after"]) as dst:
        src.backup(dst)
    out: dict[str, float] = {}
    for answers in (True, False):
        name = "with answers" if answers else "without answers"
        times: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(repeat):
            for label, checkout in (("before", before), ("after", here)):
                times[label].append(child_publish(checkout, stores[label], folder / f"{label}-{name[:4]}", answers))
        for label, found in times.items():
            out[f"{label} ({name}) wall s"] = statistics.median(t["wall"] for t in found)
            out[f"{label} ({name}) cpu s"] = statistics.median(t["cpu"] for t in found)
        digests = {
            label: [
                hashlib.sha256((folder / f"{label}-{name[:4]}" / f).read_bytes()).hexdigest()
                for f in ("index.html", "report.json")
            ]
            for label in times
        }
        out[f"same bytes ({name})"] = float(digests["before"] == digests["after"])
    return out


def measure(tasks: int, repeat: int, before: Path | None) -> dict[str, float]:
    out: dict[str, float] = {"load average at the start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "runs.sqlite") as store:
        comparison_id = fill(store, tasks)
        goldset = write_set(Path(folder) / "set", tasks)
        with sqlite3.connect(store.path) as conn:  # bench_report's runs name no set: point them at ours
            conn.execute("UPDATE runs SET goldset_path = ?", [str(goldset)])
        if before is not None:
            out.update(before_after(before, Path(folder), tasks, repeat))
        for answers in (True, False):
            name = "with answers" if answers else "without answers"
            target = Path(folder) / name.replace(" ", "-")
            out[f"publish ({name}): the target"] = median_s(
                lambda t=target, a=answers: publish_report(store, comparison_id, t, answers=a), repeat
            )
            out[f"size ({name}) bytes"] = (target / "index.html").stat().st_size
            out[f"report.json ({name}) bytes"] = (target / "report.json").stat().st_size
        goldsets: dict[str, object] = {}
        inputs = load_report_inputs(store, comparison_id, goldsets=goldsets)
        report = build_report(inputs)
        runs = [r.run for r in inputs.runs]
        mask = Masker(runs)
        details = task_details(store, runs, report.task_ids, mask, goldsets)
        document = report_document(report)
        gc.disable()  # as during a publish (publish/bundle.py)
        try:
            out["split: load (runs, attempts, golden set) + build_report"] = median_s(
                lambda: build_report(load_report_inputs(store, comparison_id)), repeat
            )
            out["split: task details (answers, masked)"] = median_s(
                lambda: task_details(store, runs, report.task_ids, mask, goldsets), repeat
            )
            out["split: page (HTML + SVG)"] = median_s(
                lambda: comparison_page(report, document, runs, details, mask), repeat
            )
            out["split: report.json text (indented_json)"] = median_s(lambda: indented_json(document), repeat)
        finally:
            gc.enable()
        with Browser() as browser:
            browser.viewport(1280, 800)
            for name in ("with answers", "without answers"):
                url = (Path(folder) / name.replace(" ", "-") / "index.html").as_uri()
                browser.open(url)  # warm-up
                out[f"Chromium navigate → load ({name})"] = statistics.median(browser.open(url) for _ in range(repeat))
    out["load average at the end"] = os.getloadavg()[0]
    return out


def _before_after_table(results: dict[str, float], before: Path) -> list[str]:
    lines = [
        "",
        f"The write with `{before}`'s code (before) and this checkout's (after), on copies of one store "
        "(filled by the before checkout's code, migrated by this one's), alternating in child processes "
        "(median of each; wall and CPU seconds of one publish after a warm-up):",
        "",
        "| bundle | before wall s | after wall s | after ÷ before | before CPU s | after CPU s | same bytes |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name in ("with answers", "without answers"):
        wall = results[f"before ({name}) wall s"], results[f"after ({name}) wall s"]
        cpu = results[f"before ({name}) cpu s"], results[f"after ({name}) cpu s"]
        same = "yes" if results[f"same bytes ({name})"] else "NO"
        lines.append(
            f"| {name} | {wall[0]:.2f} | {wall[1]:.2f} | {wall[1] / wall[0]:.2f} | {cpu[0]:.2f} | "
            f"{cpu[1]:.2f} | {same} |"
        )
    return lines


def render(results: dict[str, float], tasks: int, repeat: int, before: Path | None) -> str:
    option = f" --before {before}" if before is not None else ""
    lines = [
        "# Publish benchmark",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_publish.py --tasks {tasks} --repeat {repeat}{option}`",
        "",
        (
            f"A bundle of a comparison of 2 runs × {tasks:,} tasks (bench_report's store, plus a golden set of "
            f"{tasks:,} JSON task files). Median of {repeat} after a warm-up; Python {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} CPUs visible; Chromium headless over the DevTools pipe, "
            "1280×800, from file://. Load average (1 min) "
            f"{results['load average at the start']:.1f} at the start, {results['load average at the end']:.1f} at the end."
        ),
        "",
        "| measure | value | target | met |",
        "|---|---:|---:|---|",
    ]
    for key, value in results.items():
        if key.startswith("publish"):
            lines.append(
                f"| {key.replace(': the target', '')} (load, build, read answers, write, record) | "
                f"{value:.2f} s | ≤ {WRITE_TARGET_S:.0f} s | {'yes' if value <= WRITE_TARGET_S else 'NO'} |"
            )
        elif key.startswith("size"):
            limit = SIZE_TARGETS["with answers" in key]
            lines.append(
                f"| index.html {key[5:-6]} | {value / 1e6:.2f} MB | ≤ {limit / 1e6:.0f} MB | "
                f"{'yes' if value <= limit else 'NO'} |"
            )
        elif key.startswith("report.json"):
            lines.append(f"| {key[:-6]} | {value / 1e6:.2f} MB | – | – |")
        elif key.startswith("Chromium"):
            lines.append(
                f"| {key} | {value:.2f} s | ≤ {LOAD_TARGET_S:.0f} s | {'yes' if value <= LOAD_TARGET_S else 'NO'} |"
            )
    if before is not None:
        lines += _before_after_table(results, before)
    lines += [
        "",
        "Where the write time goes (same store, with answers; the collector off, as in a publish):",
        "",
        "| step | median s |",
        "|---|---:|",
    ]
    lines += [f"| {key[7:]} | {value:.3f} |" for key, value in results.items() if key.startswith("split")]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout of compare-tui to time the write against (e.g. /work/main)",
    )
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "publish.md"))
    args = parser.parse_args()
    before = args.before.resolve() if args.before is not None else None
    text = render(measure(args.tasks, args.repeat, before), args.tasks, args.repeat, before)
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
