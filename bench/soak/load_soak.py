"""Load soak (issue 12): a run of N tasks (default 50,000) at concurrency 128 against the
zero-delay fake server running as a separate process, driven through the TUI's Live screen
(headless Textual app; the engine in its child process, as `compare-tui` runs it) exactly as
a user starts one.

Measured side by side, nothing asserted:
- resident memory of this process (the TUI) and of the engine process (engine + store writes),
  sampled every second from /proc/PID/status, plus VmHWM (the kernel's peak) -> is memory flat?
- the UI event loop's lag: a 20 ms heartbeat timer on the app, as in bench/bench_tui.py;
- afterwards, from the store: every task recorded once.

    PYTHONPATH=. .venv/bin/python bench/soak/load_soak.py [--tasks 50000] [--concurrency 128] \
        [--out bench/results/soak_load.md]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from compare_tui.engine import RunOverrides  # noqa: E402
from compare_tui.store import Store  # noqa: E402
from compare_tui.tui.app import create_app  # noqa: E402
from compare_tui.tui.engine_bridge import NewRunPlan  # noqa: E402
from compare_tui.tui.screens.live import LiveScreen  # noqa: E402
from tests.core.engine.test_chaos_helpers import ServerProcess, task_ids  # noqa: E402
from tests.support.builders import write_set  # noqa: E402
from tests.tui.test_tui_data import write_catalogue  # noqa: E402


def rss_kib(pid: str = "self") -> tuple[int, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


class RssSampler(threading.Thread):
    def __init__(self, server_pid: int, every_s: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.server_pid, self.every_s = server_pid, every_s
        self.samples: list[tuple[float, int, int, int]] = []  # (t, TUI RSS, server RSS, engine RSS) KiB
        self.engine_pid: int | None = None
        """The TUI's engine process (a child of this one), once it is known."""
        self.engine_hwm = 0
        self.stop = threading.Event()
        self.t0 = time.perf_counter()

    def run(self) -> None:
        self.t0 = time.perf_counter()
        while not self.stop.wait(self.every_s):
            try:
                server = rss_kib(str(self.server_pid))[0]
            except OSError:
                server = 0
            engine = 0
            if self.engine_pid is not None:
                try:
                    engine, hwm = rss_kib(str(self.engine_pid))
                    self.engine_hwm = max(self.engine_hwm, hwm)
                except OSError:  # it has exited
                    pass
            self.samples.append((time.perf_counter() - self.t0, rss_kib()[0], server, engine))


async def _until(condition, timeout_s: float) -> None:
    end = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the run did not finish in time")
        await asyncio.sleep(0.05)


async def soak(tasks: int, concurrency: int, freeze_gc: bool = True) -> dict:
    with tempfile.TemporaryDirectory() as folder, ServerProcess("zero-delay") as server:
        root = Path(folder)
        write_set(root / "sets" / "many", {t: "The quick brown fox." for t in task_ids(tasks)}, max_tokens=8)
        with Store.open(root / "runs.sqlite") as store:
            app = create_app(
                store=store,
                catalogue_path=write_catalogue(root / "models.toml", server.url),
                sets_dir=root / "sets",
                reviewer="soak",
                probe=lambda endpoint: "healthy",
            )
            app.freeze_gc_after_start = freeze_gc  # as `compare-tui` (run_app) does
            lags: list[float] = []
            worst, started_at = [0.0, 0.0], [time.perf_counter()]  # the longest stall and when (s into the run)
            sampler = RssSampler(server.pid)
            async with app.run_test(size=(120, 40)) as pilot:  # noqa: F841
                await app.workers.wait_for_complete()
                expected = [time.perf_counter()]

                def beat() -> None:
                    now = time.perf_counter()
                    lags.append(max(0.0, now - expected[0] - 0.02))
                    worst[:] = max(worst, [lags[-1], now - started_at[0]])
                    expected[0] = now

                timer = app.set_interval(0.02, beat)
                screen = LiveScreen(
                    NewRunPlan(root / "sets" / "many", ("fake-a",), RunOverrides(concurrency=concurrency))
                )
                await app.push_screen(screen)
                await _until(lambda: bool(screen.run_ids), timeout_s=600)
                lags.clear()
                worst[:] = [0.0, 0.0]
                rss_start = rss_kib()[0]
                sampler.engine_pid = getattr(screen.session, "pid", None)
                sampler.start()
                expected[0] = started = started_at[0] = time.perf_counter()
                await _until(lambda: bool(screen.statuses), timeout_s=7200)
                elapsed = time.perf_counter() - started
                sampler.stop.set()
                timer.stop()
                run_id = screen.run_ids[0]
            attempts = store.attempt_columns(run_id, ["task_id", "attempt", "outcome"])
            status = store.get_run(run_id).status
        hwm = rss_kib()[1]
    running = sorted(lags)
    pct = lambda q: 1000 * running[int(q * (len(running) - 1))]  # noqa: E731
    own = [s[1] for s in sampler.samples]
    tenth = max(1, len(own) // 10)
    return {
        "tasks": tasks,
        "concurrency": concurrency,
        "status": status,
        "seconds": elapsed,
        "attempts": len(attempts),
        "distinct_tasks": len({a["task_id"] for a in attempts}),
        "passed": sum(a["outcome"] == "pass" for a in attempts),
        "rss_start_mib": rss_start / 1024,
        "rss_peak_sampled_mib": max(own) / 1024,
        "vmhwm_mib": hwm / 1024,
        "rss_first_tenth_mib": statistics.mean(own[:tenth]) / 1024,
        "rss_last_tenth_mib": statistics.mean(own[-tenth:]) / 1024,
        "server_rss_peak_mib": max(s[2] for s in sampler.samples) / 1024,
        "engine_rss_first_tenth_mib": statistics.mean(s[3] for s in sampler.samples[:tenth]) / 1024,
        "engine_rss_last_tenth_mib": statistics.mean(s[3] for s in sampler.samples[-tenth:]) / 1024,
        "engine_rss_peak_mib": max(s[3] for s in sampler.samples) / 1024,
        "engine_vmhwm_mib": sampler.engine_hwm / 1024,
        "engine_series": [(round(t), round(e / 1024, 1)) for t, _, _, e in sampler.samples[:: max(1, len(own) // 20)]],
        "rss_series": [(round(t), round(r / 1024, 1)) for t, r, _, _ in sampler.samples[:: max(1, len(own) // 20)]],
        "lag_p50_ms": pct(0.5),
        "lag_p99_ms": pct(0.99),
        "lag_max_ms": 1000 * running[-1],
        "beats": len(running),
        "lag_max_at_s": worst[1],
    }


def render(r: dict, argv: list[str]) -> str:
    series = ", ".join(f"{t}s {m}" for t, m in r["rss_series"])
    engine_series = ", ".join(f"{t}s {m}" for t, m in r["engine_series"])
    return f"""## Load: {r["tasks"]:,} tasks at concurrency {r["concurrency"]} (TUI Live screen, engine in its child process, zero-delay server in its own process)

Command: `PYTHONPATH=. .venv/bin/python bench/soak/load_soak.py {" ".join(argv)}`

| figure | value |
|---|---:|
| run status | {r["status"]} |
| attempts recorded / distinct tasks / passed | {r["attempts"]:,} / {r["distinct_tasks"]:,} / {r["passed"]:,} |
| wall time of the run | {r["seconds"]:.0f} s ({r["attempts"] / r["seconds"]:.0f} attempts/s) |
| TUI process RSS when the first request went out | {r["rss_start_mib"]:.0f} MiB |
| TUI process RSS mean, first tenth of the run | {r["rss_first_tenth_mib"]:.0f} MiB |
| TUI process RSS mean, last tenth of the run | {r["rss_last_tenth_mib"]:.0f} MiB |
| TUI process RSS peak (1 s samples) | {r["rss_peak_sampled_mib"]:.0f} MiB |
| VmHWM (kernel peak RSS, whole process life) | {r["vmhwm_mib"]:.0f} MiB |
| engine process RSS mean, first / last tenth of the run | {r["engine_rss_first_tenth_mib"]:.0f} / {r["engine_rss_last_tenth_mib"]:.0f} MiB |
| engine process RSS peak (1 s samples) / VmHWM (last read) | {r["engine_rss_peak_mib"]:.0f} / {r["engine_vmhwm_mib"]:.0f} MiB |
| fake server RSS peak (its own process) | {r["server_rss_peak_mib"]:.0f} MiB |
| UI event-loop lag p50 / p99 / max (20 ms heartbeat, {r["beats"]:,} beats) | {r["lag_p50_ms"]:.1f} / {r["lag_p99_ms"]:.1f} / {r["lag_max_ms"]:.1f} ms (max at {r["lag_max_at_s"]:.0f} s) |

TUI process RSS over the run (s → MiB): {series}

Engine process RSS over the run (s → MiB): {engine_series}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=50_000)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--no-freeze-gc",
        action="store_true",
        help="leave the start-up objects to the cyclic GC (the app freezes them; see app._freeze_gc)",
    )
    args = parser.parse_args()
    result = asyncio.run(soak(args.tasks, args.concurrency, freeze_gc=not args.no_freeze_gc))
    text = render(result, sys.argv[1:])
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
