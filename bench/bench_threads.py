"""Threads per llama-server: llama.cpp's default (every server uses every core) vs `local up`'s
shared allocation (the usable cores divided by the servers), side by side in one run.

For each allocation, the three bundled models are started on their own ports and state dir,
and the demo set is run twice through the real CLI:
- *one model at a time*, as `make demo` does (`run SET --model a --model b --model c`);
- *all three at once*, as when runs overlap (three `run` processes started together, e.g. an
  experiment beside a demo, or other work on the box).
Reported per model: the run's wall time and the generation and prompt-processing rates that
llama-server measured itself (`timings`: predicted_n / predicted_ms, prompt_n / prompt_ms),
summed over the run's attempts.

    PYTHONPATH=. .venv/bin/python bench/bench_threads.py [--set sample_sets/ticket-labels] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.collect import write_section  # noqa: E402 (after the path)

MODELS = ["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"]
ALLOCATIONS = {"shared": {}, "default": {"default_threads": True}}
FIRST_PORT = 18281  # away from `local up`'s own 18181…: the user's servers may be running


def cli(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "compare_tui", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run_ids(env: dict[str, str], model: str) -> list[str]:
    from compare_tui.store import Store

    with Store.open(Path(env["COMPARE_TUI_STORE"])) as store:
        return [r.id for r in store.list_runs(model=model)]


def rates(store_path: Path, run_id: str) -> tuple[float, float, int, float]:
    """(generation tok/s, prompt tok/s, completion tokens, wall s) of one run, from the server's own timings."""
    from compare_tui.store import Store

    with Store.open(store_path) as store:
        attempts = store.attempts_for_run(run_id)
    timed = [a.server_timings for a in attempts if a.server_timings]
    gen_n = sum(t.get("predicted_n", 0) for t in timed)
    gen_ms = sum(t.get("predicted_ms", 0.0) for t in timed)
    pp_n = sum(t.get("prompt_n", 0) for t in timed)
    pp_ms = sum(t.get("prompt_ms", 0.0) for t in timed)
    starts = [datetime.fromisoformat(a.started_at) for a in attempts if a.started_at]
    ends = [datetime.fromisoformat(a.finished_at) for a in attempts if a.finished_at]
    wall = (max(ends) - min(starts)).total_seconds() if starts and ends else float("nan")
    return (
        gen_n / gen_ms * 1000 if gen_ms else 0.0,
        pp_n / pp_ms * 1000 if pp_ms else 0.0,
        sum(a.completion_tokens or 0 for a in attempts),
        wall,
    )


def measure(
    allocation: str, set_dir: str, concurrency: int, work: Path
) -> list[tuple[str, str, str, float, float, int, float]]:
    from compare_tui import local

    env = {
        **os.environ,
        "XDG_STATE_HOME": str(work / allocation / "state"),
        "XDG_DATA_HOME": str(work / allocation / "data"),
        "XDG_CONFIG_HOME": str(work / allocation / "config"),
        "COMPARE_TUI_STORE": str(work / allocation / "runs.sqlite"),
    }
    catalogue = work / allocation / "models.toml"
    store = Path(env["COMPARE_TUI_STORE"])
    saved = {k: os.environ.get(k) for k in ("XDG_STATE_HOME",)}
    os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
    rows: list[tuple[str, str, str, float, float, int, float]] = []
    try:
        cluster = local.up(MODELS, catalogue_path=catalogue, port=FIRST_PORT, **ALLOCATIONS[allocation])
        threads = {s.name: s.threads for s in cluster.servers}
        print(f"[{allocation}] servers up: {threads}", flush=True)
        common = ["--models", str(catalogue), "--concurrency", str(concurrency), "--json"]
        # One model at a time, as the demo runs them.
        started = time.perf_counter()
        proc = cli(env, "run", set_dir, *sum((["--model", m] for m in MODELS), []), *common)
        out, _ = proc.communicate()
        if proc.returncode not in (0, 1):
            raise SystemExit(f"run failed ({proc.returncode}):\n{out[-2000:]}")
        print(f"[{allocation}] one at a time: {time.perf_counter() - started:.1f} s", flush=True)
        for model in MODELS:
            rows.append((allocation, "one at a time", model, *rates(store, run_ids(env, model)[0])))
        # All three at once.
        started = time.perf_counter()
        procs = [cli(env, "run", set_dir, "--model", m, *common) for m in MODELS]
        for proc in procs:
            out, _ = proc.communicate()
            if proc.returncode not in (0, 1):
                raise SystemExit(f"run failed ({proc.returncode}):\n{out[-2000:]}")
        print(f"[{allocation}] all at once: {time.perf_counter() - started:.1f} s", flush=True)
        for model in MODELS:
            rows.append((allocation, "all at once", model, *rates(store, run_ids(env, model)[0])))
        return rows
    finally:
        local.down(MODELS)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="sample_sets/ticket-labels")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    from compare_tui.local.cluster import share_threads, usable_cores

    with tempfile.TemporaryDirectory(prefix="bench-threads-") as tmp:
        results = [
            row for allocation in ALLOCATIONS for row in measure(allocation, args.set, args.concurrency, Path(tmp))
        ]
    by_key = {(a, mode, m): (gen, pp, n, wall) for a, mode, m, gen, pp, n, wall in results}
    load = os.getloadavg()[0]
    lines = [
        "## Threads per llama-server: llama.cpp's default vs a share of the cores",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_threads.py --set {args.set} --concurrency {args.concurrency}`",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {usable_cores()} usable cores (load average at the end "
        f"{load:.1f}); the three bundled models, {share_threads(3)} thread(s) each when shared, every core each "
        "by default. Generation and prompt rates are llama-server's own `timings`, summed over the run's "
        "attempts; wall is first request sent to last answer received.",
        "",
        "| runs | model | default: gen tok/s | shared: gen tok/s | ratio | default: prompt tok/s | shared: prompt tok/s | default: wall s | shared: wall s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in ("one at a time", "all at once"):
        for model in MODELS:
            d, s = by_key[("default", mode, model)], by_key[("shared", mode, model)]
            ratio = s[0] / d[0] if d[0] else float("nan")
            lines.append(
                f"| {mode} | {model} | {d[0]:.1f} | {s[0]:.1f} | {ratio:.2f} | {d[1]:.0f} | {s[1]:.0f} | "
                f"{d[3]:.1f} | {s[3]:.1f} |"
            )
    write_section("threads", lines)


if __name__ == "__main__":
    main()
