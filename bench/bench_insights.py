"""`compare-tui insights` on a comparison of 2 runs × 10,000 tasks (target ≤ 2 s): load (the
report's loader, the golden set's 10,000 task files, one narrow read per run) + build + render.

    PYTHONPATH=. .venv/bin/python bench/bench_insights.py [--tasks 10000] [--repeat 5]

The store is bench_report's, its failed attempts then given varied causes (wrong labels,
truncated, empty, refusals, request errors); the golden set is bench_publish's, a third of its
tasks tagged. Prints a markdown table of median seconds and writes `results/insights.md`
(`bench/collect.py` joins it into RESULTS.md). Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_publish import write_set  # noqa: E402
from bench_report import fill, median_s, median_table  # noqa: E402

from bench.collect import write_section  # noqa: E402
from compare_tui.goldset import load_golden_set  # noqa: E402
from compare_tui.insights import build_insights, insights_document, load_insight_inputs, render_text  # noqa: E402
from compare_tui.store import Store  # noqa: E402

TARGET_S = 2.0
LABELS = ("bug", "account", "other", "refund", "billing ")
TAGS = ("german", "english", "french")


def vary_failures(path: Path, goldset: Path) -> None:
    """Give the failed attempts realistic, varied causes, and tag a third of the tasks."""
    rng = random.Random(53)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET goldset_path = ?", [str(goldset)])
        rows = conn.execute("SELECT id FROM attempts WHERE outcome = 'fail'").fetchall()
        for (attempt_id,) in rows:
            roll = rng.random()
            label = rng.choice(LABELS)
            answer, finish = label, "stop"
            if roll < 0.1:
                answer, finish = "billing, because the customer", "length"
            elif roll < 0.15:
                answer = ""
            elif roll < 0.2:
                answer = "I'm sorry, but I can't help with that."
            data = {"normalize": [], "expected": "billing", "got": answer}
            conn.execute(
                "UPDATE attempts SET answer_text = ?, finish_reason = ?, score_data = ? WHERE id = ?",
                [answer, finish, json.dumps(data), attempt_id],
            )
    for n, task_file in enumerate(sorted((goldset / "tasks").iterdir())):
        if n % 3 == 0:
            task = json.loads(task_file.read_text())
            task["tags"] = [TAGS[n % len(TAGS)]]
            task_file.write_text(json.dumps(task))


def measure(tasks: int, repeat: int) -> tuple[list[tuple[str, float]], int]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.sqlite"
        with Store.open(path) as store:
            comparison_id = fill(store, tasks)
        goldset = write_set(Path(folder) / "set", tasks)
        vary_failures(path, goldset)
        with Store.open(path) as store:
            inputs = load_insight_inputs(store, comparison_id)
            insights = build_insights(inputs)

            def whole() -> str:
                return render_text(build_insights(load_insight_inputs(store, comparison_id)))

            results = [
                ("load + build + render text (the target)", median_s(whole, repeat)),
                ("load_insight_inputs", median_s(lambda: load_insight_inputs(store, comparison_id), repeat)),
                (
                    "of which the golden set's task files (load_golden_set; `report` reads them too)",
                    median_s(lambda: load_golden_set(goldset), repeat),
                ),
                ("build_insights", median_s(lambda: build_insights(inputs), repeat)),
                ("render_text", median_s(lambda: render_text(insights), repeat)),
                ("insights_document (JSON)", median_s(lambda: json.dumps(insights_document(insights)), repeat)),
            ]
        return results, sum(g.total for g in insights.groups)


def render(results: list[tuple[str, float]], failed: int, tasks: int, repeat: int) -> list[str]:
    target = results[0][1]
    lines = [
        "# Insights benchmark",
        "",
        f"`PYTHONPATH=. python bench/bench_insights.py --tasks {tasks} --repeat {repeat}`: `compare-tui insights` "
        f"on a comparison of 2 runs × {tasks:,} tasks ({failed:,} failed attempts in all, of varied causes; a "
        f"golden set of {tasks:,} task files, a third tagged). Median of {repeat} after a warm-up; Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs visible, load average "
        f"{os.getloadavg()[0]:.1f} (a shared machine: the steps' medians need not add up).",
        "",
        *median_table(results, TARGET_S),
    ]
    verdict = "within" if target <= TARGET_S else "OVER"
    lines += ["", f"load + build + render: {target:.3f} s, {verdict} the {TARGET_S:.0f} s target."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results, failed = measure(args.tasks, args.repeat)
    write_section("insights", render(results, failed, args.tasks, args.repeat))


if __name__ == "__main__":
    main()
