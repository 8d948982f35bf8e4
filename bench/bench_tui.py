"""How fast the TUI opens the Report and A/B diff screens for 2 runs × 10,000 tasks (target
≤ 1 s each), beside the report work they wrap, and how responsive the UI stays while the
engine finishes 50+ attempts a second.

    PYTHONPATH=. .venv/bin/python bench/bench_tui.py [--tasks 10000] [--repeat 5] [--out bench/results/tui.md]

Everything runs headless in one process and is measured side by side; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_report import fill  # noqa: E402  (the report benchmark's 2 × N-task store)

from compare_tui.report import build_report, load_report_inputs  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from compare_tui.tui.app import create_app  # noqa: E402
from compare_tui.tui.run_pair import read_run_pair  # noqa: E402
from compare_tui.tui.screens.diff import DiffScreen  # noqa: E402
from compare_tui.tui.screens.live import LiveScreen  # noqa: E402
from compare_tui.tui.screens.report import ReportScreen  # noqa: E402
from compare_tui.tui.widgets.task_grid import TaskGrid  # noqa: E402

TARGET_S = 1.0
SIZE = (120, 40)


async def _until(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never finished loading")
        await asyncio.sleep(0.002)


async def _open(app, pilot, make_screen, ready: Callable[[object], bool]) -> float:
    """Seconds from pushing the screen to its content laid out and painted."""
    started = time.perf_counter()
    screen = make_screen()
    await app.push_screen(screen)
    await _until(lambda: ready(screen))
    await pilot.pause()  # the refresh that paints what the message handler filled in
    elapsed = time.perf_counter() - started
    app.pop_screen()
    await pilot.pause()
    return elapsed


async def measure_screens(store: Store, comparison_id: str, repeat: int) -> dict[str, list[float]]:
    run_a, run_b = store.get_comparison(comparison_id).run_ids
    app = create_app(store=store, catalogue_path=ROOT / "missing.toml", sets_dir=ROOT / "missing",
                     reviewer="bench", probe=lambda endpoint: "healthy")
    times: dict[str, list[float]] = {k: [] for k in ("report", "diff", "grid")}
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        for n in range(repeat + 1):  # the first round warms imports and caches up
            report = await _open(app, pilot, lambda: ReportScreen(comparison_id),
                                 lambda s: s.report is not None and not s.query_one("#report-tabs").loading)
            diff = await _open(app, pilot, lambda: DiffScreen(run_a, run_b),
                               lambda s: s.diff is not None and not s.query_one("#diff-tabs").loading)
            screen = ReportScreen(comparison_id)
            await app.push_screen(screen)
            await _until(lambda: screen.report is not None)
            await pilot.press("3")
            grid = screen.query_one(TaskGrid)
            started = time.perf_counter()
            for _ in range(20):  # page through 20 screens of blocks
                await pilot.press("pagedown")
            elapsed = (time.perf_counter() - started) / 20
            app.pop_screen()
            await pilot.pause()
            if n:
                times["report"].append(report)
                times["diff"].append(diff)
                times["grid"].append(elapsed)
            assert grid.cursor_task > 0
    return times


def median_s(work: Callable[[], object], repeat: int) -> float:
    work()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def measure_live(tasks: int) -> dict[str, float]:
    """A real run against the zero-delay fake server while a 20 ms heartbeat measures how late
    the UI's event loop runs (its lag is what a key press waits)."""
    from compare_tui.engine import RunOverrides
    from compare_tui.tui.engine_bridge import NewRunPlan
    from tests.support.builders import write_set
    from tests.support.fake_openai import FakeServer
    from tests.test_tui_data import write_catalogue

    with tempfile.TemporaryDirectory() as folder, FakeServer(mode="zero-delay", record=False) as server:
        root = Path(folder)
        write_set(root / "sets" / "many", {f"t{i:05d}": "the quick brown fox." for i in range(tasks)}, max_tokens=8)
        with Store.open(root / "runs.sqlite") as store:
            app = create_app(store=store, catalogue_path=write_catalogue(root / "models.toml", server.url),
                             sets_dir=root / "sets", reviewer="bench", probe=lambda endpoint: "healthy")
            lags: list[float] = []
            async with app.run_test(size=SIZE) as pilot:
                await app.workers.wait_for_complete()
                expected = [time.perf_counter()]

                def beat() -> None:
                    now = time.perf_counter()
                    lags.append(max(0.0, now - expected[0] - 0.02))
                    expected[0] = now

                idle_timer = app.set_interval(0.02, beat)
                await asyncio.sleep(1.0)
                idle = list(lags)
                lags.clear()
                plan = NewRunPlan(root / "sets" / "many", ("fake-a",), RunOverrides(concurrency=8))
                screen = LiveScreen(plan)
                started = time.perf_counter()
                await app.push_screen(screen)
                await _until(lambda: bool(screen.statuses), timeout_s=600)
                elapsed = time.perf_counter() - started
                idle_timer.stop()
                done = screen.tally.snapshot()[0].done
    running = sorted(lags)
    return {
        "attempts": done, "seconds": elapsed, "rate": done / elapsed,
        "idle_p99_ms": 1000 * sorted(idle)[int(0.99 * (len(idle) - 1))],
        "lag_p50_ms": 1000 * statistics.median(running), "lag_p99_ms": 1000 * running[int(0.99 * (len(running) - 1))],
        "lag_max_ms": 1000 * running[-1],
    }


def render(tasks: int, repeat: int, screens: dict[str, list[float]], core: dict[str, float], live: dict[str, float]) -> str:
    report, diff = statistics.median(screens["report"]), statistics.median(screens["diff"])
    lines = [
        "# TUI benchmark",
        "",
        f"2 runs × {tasks:,} tasks in one comparison (the store of bench/bench_report.py). Headless app at "
        f"{SIZE[0]}×{SIZE[1]}; median of {repeat} after a warm-up; Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs visible. The runs record no golden set folder, as in the "
        "report benchmark, so no set is read from disk.",
        "",
        "| step | median s | of the 1 s target |",
        "|---|---:|---:|",
        f"| open the Report screen (push → figures, tables, grid painted) | {report:.3f} | {report / TARGET_S:.0%} |",
        f"| · the report alone: load_report_inputs + build_report | {core['report']:.3f} | {core['report'] / TARGET_S:.0%} |",
        f"| open the A/B diff screen (push → flips, deltas, changed tasks painted) | {diff:.3f} | {diff / TARGET_S:.0%} |",
        f"| · the diff alone: read_run_pair (two loads + build_report + paired) | {core['diff']:.3f} | {core['diff'] / TARGET_S:.0%} |",
        f"| page the task grid one screen (PageDown, repaint) | {statistics.median(screens['grid']):.4f} | – |",
        "",
        f"Report screen {report:.3f} s ({'within' if report <= TARGET_S else 'OVER'} the target): "
        f"{report / core['report']:.2f}× the report work it shows. A/B diff screen {diff:.3f} s "
        f"({'within' if diff <= TARGET_S else 'OVER'} the target): {diff / core['diff']:.2f}× the diff work.",
        "",
        "## Responsiveness during a run",
        "",
        f"{live['attempts']:,} attempts against the zero-delay fake server at concurrency 8: "
        f"{live['rate']:.0f} completed attempts/s over {live['seconds']:.1f} s, the engine in one worker thread "
        "and the Live screen repainting from its tally every 0.25 s.",
        "",
        "| UI event-loop lag (20 ms heartbeat) | ms |",
        "|---|---:|",
        f"| idle, p99 | {live['idle_p99_ms']:.1f} |",
        f"| during the run, p50 | {live['lag_p50_ms']:.1f} |",
        f"| during the run, p99 | {live['lag_p99_ms']:.1f} |",
        f"| during the run, max | {live['lag_max_ms']:.1f} |",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--live-tasks", type=int, default=1_500)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "tui.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "runs.sqlite") as store:
        comparison_id = fill(store, args.tasks)
        run_a, run_b = store.get_comparison(comparison_id).run_ids
        core = {
            "report": median_s(lambda: build_report(load_report_inputs(store, comparison_id)), args.repeat),
            "diff": median_s(lambda: read_run_pair(store, run_a, run_b), args.repeat),
        }
        screens = asyncio.run(measure_screens(store, comparison_id, args.repeat))
    live = asyncio.run(measure_live(args.live_tasks))
    text = render(args.tasks, args.repeat, screens, core, live)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
