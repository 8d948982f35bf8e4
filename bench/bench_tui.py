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
from textual.geometry import Region  # noqa: E402

from compare_tui.diff import read_run_pair  # noqa: E402
from compare_tui.report import build_report, load_report_inputs  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from compare_tui.tui.app import create_app  # noqa: E402
from compare_tui.tui.screens import diff as diff_screen_module  # noqa: E402
from compare_tui.tui.screens import report as report_screen_module  # noqa: E402
from compare_tui.tui.screens.diff import DiffScreen  # noqa: E402
from compare_tui.tui.screens.live import LiveScreen  # noqa: E402
from compare_tui.tui.screens.report import ReportScreen  # noqa: E402
from compare_tui.tui.widgets.task_grid import TaskGrid  # noqa: E402

TARGET_S = 1.0
FREEZE_GC = "--no-freeze" not in sys.argv
SIZE = (120, 40)


async def _until(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never finished loading")
        await asyncio.sleep(0.05)


class TimedReport(ReportScreen):
    """The Report screen, telling the benchmark when its report is laid out (no polling, which
    would wake the UI thread and slow the worker it waits for)."""

    CSS_PATH = str(Path(report_screen_module.__file__).with_name("report.tcss"))

    def __init__(self, ref: str, done: asyncio.Event) -> None:
        super().__init__(ref)
        self.done = done

    def on_report_built(self, message) -> None:
        super().on_report_built(message)
        self.done.set()


class TimedDiff(DiffScreen):
    CSS_PATH = str(Path(diff_screen_module.__file__).with_name("diff.tcss"))

    def __init__(self, run_a: str, run_b: str, done: asyncio.Event) -> None:
        super().__init__(run_a, run_b)
        self.done = done

    def on_diff_built(self, message) -> None:
        super().on_diff_built(message)
        self.done.set()


async def _open(app, pilot, make_screen) -> tuple[float, float]:
    """(wall, CPU) seconds from pushing the screen to its content laid out and painted. CPU is
    the whole process (UI thread and worker): on a busy shared machine it is the better guess
    of what the wall time would be on an idle one."""
    done = asyncio.Event()
    started, cpu = time.perf_counter(), time.process_time()
    await app.push_screen(make_screen(done))
    await done.wait()
    await pilot.pause()  # the refresh that paints what the message handler filled in
    elapsed = (time.perf_counter() - started, time.process_time() - cpu)
    app.pop_screen()
    await pilot.pause()
    return elapsed


async def _in_thread(work: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of `work` in a worker thread while the app idles, as the screens run it."""
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.to_thread(work)
    return time.perf_counter() - started, time.process_time() - cpu


async def measure_screens(store: Store, comparison_id: str, repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Each round measures the report work alone and then its screen, back to back, so a busy
    machine slows both alike."""
    run_a, run_b = store.get_comparison(comparison_id).run_ids
    app = create_app(
        store=store,
        catalogue_path=ROOT / "missing.toml",
        sets_dir=ROOT / "missing",
        reviewer="bench",
        probe=lambda endpoint: "healthy",
    )
    app.freeze_gc_after_start = FREEZE_GC  # as `run_app` does
    times: dict[str, list[tuple[float, float]]] = {
        k: [] for k in ("report", "report core", "diff", "diff core", "grid")
    }
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(3):  # Home and what it starts (reading runs and their pass rates)
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
        for n in range(repeat + 1):  # the first round warms imports and caches up
            round_times = {
                "report core": await _in_thread(lambda: build_report(load_report_inputs(store, comparison_id))),
                "report": await _open(app, pilot, lambda done: TimedReport(comparison_id, done)),
                "diff core": await _in_thread(lambda: read_run_pair(store, run_a, run_b)),
                "diff": await _open(app, pilot, lambda done: TimedDiff(run_a, run_b, done)),
            }
            screen = ReportScreen(comparison_id)
            await app.push_screen(screen)
            await _until(lambda: screen.report is not None)
            await pilot.press("3")
            grid = screen.query_one(TaskGrid)
            region = grid.scrollable_content_region
            started, cpu = time.perf_counter(), time.process_time()
            for _ in range(20):  # move a page on and draw every line of it, as a repaint does
                grid.action_page(1)
                grid.render_lines(Region(0, 0, region.width, region.height))
            round_times["grid"] = ((time.perf_counter() - started) / 20, (time.process_time() - cpu) / 20)
            app.pop_screen()
            await pilot.pause()
            if n:
                for key, value in round_times.items():
                    times[key].append(value)
            assert grid.cursor_task > 0
    return times


async def measure_live(tasks: int) -> dict[str, float]:
    """A real run against the zero-delay fake server while a 20 ms heartbeat measures how late
    the UI's event loop runs (its lag is what a key press waits)."""
    from compare_tui.engine import RunOverrides
    from compare_tui.tui.engine_bridge import NewRunPlan
    from tests.support.builders import write_set
    from tests.support.fake_openai import FakeServer
    from tests.tui.test_tui_data import write_catalogue

    with tempfile.TemporaryDirectory() as folder, FakeServer(mode="zero-delay", record=False) as server:
        root = Path(folder)
        write_set(root / "sets" / "many", {f"t{i:05d}": "the quick brown fox." for i in range(tasks)}, max_tokens=8)
        with Store.open(root / "runs.sqlite") as store:
            app = create_app(
                store=store,
                catalogue_path=write_catalogue(root / "models.toml", server.url),
                sets_dir=root / "sets",
                reviewer="bench",
                probe=lambda endpoint: "healthy",
            )
            app.freeze_gc_after_start = FREEZE_GC
            lags: list[float] = []
            async with app.run_test(size=SIZE):
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
                await app.push_screen(screen)
                # From the first request on (mounting the screen and hashing/loading before it
                # is not the run); the last repaint after the run is included.
                await _until(lambda: bool(screen.run_ids), timeout_s=600)
                lags.clear()
                expected[0] = started = time.perf_counter()
                await _until(lambda: bool(screen.statuses), timeout_s=600)
                elapsed = time.perf_counter() - started
                idle_timer.stop()
                done = screen.tally.snapshot()[0].done
    running = sorted(lags)
    return {
        "attempts": done,
        "seconds": elapsed,
        "rate": done / elapsed,
        "idle_p99_ms": 1000 * sorted(idle)[int(0.99 * (len(idle) - 1))],
        "lag_p50_ms": 1000 * statistics.median(running),
        "lag_p99_ms": 1000 * running[int(0.99 * (len(running) - 1))],
        "lag_max_ms": 1000 * running[-1],
    }


def _median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def render(tasks: int, repeat: int, screens: dict[str, list[tuple[float, float]]], live: dict[str, float]) -> str:
    m = {key: _median(samples) for key, samples in screens.items()}

    def row(what: str, key: str) -> str:
        wall, cpu = m[key]
        return f"| {what} | {wall:.3f} | {cpu:.3f} | {cpu / TARGET_S:.0%} |"

    report, diff = m["report"], m["diff"]
    lines = [
        "# TUI benchmark",
        "",
        f"2 runs × {tasks:,} tasks in one comparison (the store of bench/bench_report.py). Headless app at "
        f"{SIZE[0]}×{SIZE[1]}; median of {repeat} rounds after a warm-up, each round timing the report work alone "
        f"(in a worker thread, as the screens run it) and then its screen, back to back; Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs visible, load average "
        f"{os.getloadavg()[0]:.1f} at the end. The runs record no golden set folder, as in the report benchmark, "
        "so no set is read from disk.",
        "",
        "Wall time is what this (shared) machine gave; CPU time is the whole process's (UI thread and worker), "
        "the better estimate of the wall time on an idle machine, since the GIL lets one thread run at a time.",
        "",
        "| step | wall s | CPU s | CPU of the 1 s target |",
        "|---|---:|---:|---:|",
        row("open the Report screen (push → figures, tables, grid painted)", "report"),
        row("· the report alone: load_report_inputs + build_report", "report core"),
        row("open the A/B diff screen (push → flips, deltas, changed tasks painted)", "diff"),
        row("· the diff alone: read_run_pair (two loads + build_report + paired)", "diff core"),
        row(f"task grid: move a page and draw all its lines ({SIZE[0]}×~{SIZE[1] - 8})", "grid"),
        "",
        f"Report screen: {report[1]:.3f} s CPU ({'within' if report[1] <= TARGET_S else 'OVER'} the target), "
        f"{report[1] / m['report core'][1]:.2f}× the report work it shows; {report[0]:.3f} s wall here. "
        f"A/B diff screen: {diff[1]:.3f} s CPU ({'within' if diff[1] <= TARGET_S else 'OVER'} the target), "
        f"{diff[1] / m['diff core'][1]:.2f}× the diff work; {diff[0]:.3f} s wall here.",
        "",
        "## Responsiveness during a run",
        "",
        f"{live['attempts']:,} attempts against the zero-delay fake server at concurrency 8: "
        f"{live['rate']:.0f} completed attempts/s over {live['seconds']:.1f} s, the engine in its child process (as `compare-tui` runs it) "
        "and the Live screen repainting from its tally every 0.25 s. "
        + (
            "The collector is frozen after start-up, as `run_app` does."
            if FREEZE_GC
            else "The collector is NOT frozen (--no-freeze)."
        ),
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
    parser.add_argument("--no-freeze", action="store_true", help="leave the GC as a test process does")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "tui.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "runs.sqlite") as store:
        comparison_id = fill(store, args.tasks)
        screens = asyncio.run(measure_screens(store, comparison_id, args.repeat))
    live = asyncio.run(measure_live(args.live_tasks))
    text = render(args.tasks, args.repeat, screens, live)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
