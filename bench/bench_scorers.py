"""Command scorers at scale: this machine with 1 and 2 jobs, a Ray cluster with 1 and 2 nodes.

A generated code set: N tasks, each answered with a small Python function (right or subtly
wrong); each task's `command` scorer runs a test suite against the answer over and over until it
has spent 1 s of CPU, then passes or fails. No model is asked: the answers are given, and what is
measured is scoring through the executor seam (`score_batch`), the same path a run takes.

Modes, one after another on the same items: `local` with `--scorer-jobs` 1 and 2
(`LocalScorers`), and `ray` on a real local cluster with 1 node then 2 nodes of one CPU each
(`RayScorers`, started as the tests start it). Ray binds every interface, so the benchmark re-runs
itself inside a loopback-only network namespace (`unshare --net`, needs root).

Per mode: wall time, throughput (scorers/s), mean scorer time inside its sandbox, overhead per
scorer (slots × wall / N less that mean: what the executor adds around each scorer), speed-up
against 1 job / 1 node, and the outcomes (every mode must agree).
Usage: python bench/bench_scorers.py [--tasks 200] [--cpu-s 1.0] [--out bench/results/scorers.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compare_tui.goldset import load_golden_set  # noqa: E402
from compare_tui.scoring import Answer  # noqa: E402
from compare_tui.scoring.executor import LocalScorers, ScoreItem  # noqa: E402

CHECK = """\
import os, sys, time
namespace = {}
exec(open(os.environ["COMPARE_TUI_ANSWER"]).read(), namespace)
fn = namespace["running_max"]
cases = [([3, 1, 4, 1, 5, 9, 2, 6], [3, 3, 4, 4, 5, 9, 9, 9]), ([], []), ([-2, -5, -1], [-2, -2, -1])]
ok = True
budget = float(sys.argv[1])
while time.process_time() < budget:
    for given, want in cases:
        ok = ok and fn(given) == want
    big = list(range(2000, 0, -1))
    ok = ok and fn(big)[-1] == 2000
print("suite", "passed" if ok else "failed")
sys.exit(0 if ok else 1)
"""

RIGHT = """\
def running_max(xs):
    out, best = [], None
    for x in xs:
        best = x if best is None or x > best else best
        out.append(best)
    return out
"""
WRONG = RIGHT.replace("x > best", "x >= best and x != 9")


def write_set(root: Path, n: int, cpu_s: float) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "check.py").write_text(CHECK)
    (root / "golden.toml").write_text(
        'workload_id = "bench-scorers"\nname = "Bench scorers"\nversion = "1"\n'
        f'[default_scorer]\nkind = "command"\nrun = ["python3", "check.py", "{cpu_s}"]\ntimeout_s = 60\n'
    )
    for i in range(n):
        task = {"id": f"code-{i:03d}", "input": {"prompt": "write running_max"}, "expected": {"text": "ok"}}
        (root / "tasks" / f"code-{i:03d}.json").write_text(json.dumps(task))
    return root


async def score_all(executor, goldset) -> tuple[float, dict[str, str], list[float]]:
    items = [
        ScoreItem(t, 1, Answer(WRONG if i % 3 == 2 else RIGHT), goldset.scorer_for(t))
        for i, t in enumerate(goldset.tasks)
    ]
    start = time.perf_counter()
    outcomes, durations = {}, []
    async for scored in executor.score_batch(goldset, items):
        assert scored.result is not None, scored.unavailable
        outcomes[scored.item.task.id] = str(scored.result.outcome)
        durations.append(float(scored.result.data["duration_s"]))
    return time.perf_counter() - start, outcomes, durations


def measure_local(goldset, jobs: int) -> dict:
    executor = LocalScorers(jobs)
    try:
        wall, outcomes, durations = asyncio.run(score_all(executor, goldset))
    finally:
        executor.close()
    return {"mode": f"local, --scorer-jobs {jobs}", "slots": jobs, "wall": wall, "outcomes": outcomes, "d": durations}


def measure_ray(goldset, nodes: int) -> dict:
    from compare_tui.scoring.ray_cluster import RayScorers

    executor = RayScorers("127.0.0.1:6379")
    executor.connect()
    try:
        # One warm-up item per node first: worker processes and the runtime environment are
        # made once per cluster, not per scorer (said in the table's notes).
        asyncio.run(score_all_subset(executor, goldset, nodes))
        wall, outcomes, durations = asyncio.run(score_all(executor, goldset))
    finally:
        executor.close()
    return {"mode": f"Ray, {nodes} node(s) × 1 CPU", "slots": nodes, "wall": wall, "outcomes": outcomes, "d": durations}


async def score_all_subset(executor, goldset, n: int) -> None:
    items = [ScoreItem(t, 1, Answer(RIGHT), goldset.scorer_for(t)) for t in goldset.tasks[:n]]
    async for _ in executor.score_batch(goldset, items):
        pass


def inside(args: argparse.Namespace) -> None:
    from tests.support.ray_cluster import RayTestCluster, ThisNamespace

    args.load_before = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="bench-scorers-"))
    goldset = load_golden_set(write_set(tmp / "set", args.tasks, args.cpu_s))
    rows = [measure_local(goldset, 1), measure_local(goldset, 2)]
    cluster = RayTestCluster(ThisNamespace(), nodes=1)
    try:
        cluster.start()
        rows.append(measure_ray(goldset, 1))
        cluster.add_node()
        time.sleep(2)  # the new node's resources reach the scheduler
        rows.append(measure_ray(goldset, 2))
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    render(args, rows)


def render(args: argparse.Namespace, rows: list[dict]) -> None:
    n = args.tasks
    agree = all(r["outcomes"] == rows[0]["outcomes"] for r in rows)
    passed = sum(1 for o in rows[0]["outcomes"].values() if o == "pass")
    lines = [
        "# Command scorers at scale: this machine vs a Ray cluster",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_scorers.py --tasks {n} --cpu-s {args.cpu_s:g}`",
        f"{n} generated code tasks; each scorer runs a test suite until it has spent {args.cpu_s:g} s of CPU "
        f"({passed} pass, {n - passed} fail). Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load average {args.load_before:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} cores. Ray: a real local cluster "
        "(head + second raylet, 1 CPU each) in a loopback-only network namespace, one warm-up scorer per node "
        f"before timing. Outcomes identical in every mode: {'yes' if agree else 'NO'}.",
        "",
        "| mode | wall s | scorers/s | mean scorer s (in its sandbox) | overhead per scorer ms | speed-up |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    base = {"local": rows[0]["wall"], "Ray": rows[2]["wall"] if len(rows) > 2 else rows[0]["wall"]}
    for r in rows:
        mean = statistics.fmean(r["d"])
        overhead_ms = (r["slots"] * r["wall"] / n - mean) * 1000
        ref = base["Ray" if r["mode"].startswith("Ray") else "local"]
        lines.append(
            f"| {r['mode']} | {r['wall']:.1f} | {n / r['wall']:.2f} | {mean:.2f} | {overhead_ms:.0f} | {ref / r['wall']:.2f}× |"
        )
    lines.append("")
    lines.append("Speed-up: against 1 job (local rows) and against 1 node (Ray rows).")
    ray_rows = [r for r in rows if r["mode"].startswith("Ray")]
    if ray_rows:
        r = ray_rows[-1]
        overhead = max(0.0, r["slots"] * r["wall"] / n - statistics.fmean(r["d"]))
        lines += [
            "",
            "On paper, N nodes: scoring is the only part spread over the cluster; the run's process keeps "
            "the model requests (bounded by the model servers) and the one writer (about 5,600 attempts/s "
            "one transaction each, more batched: see the store benchmark). With scorers of S seconds each and "
            f"the per-scorer overhead measured here ({overhead * 1000:.0f} ms on 2 nodes: the Ray task, the "
            "payload reference, the set's files written on the worker), N one-CPU nodes score about "
            "N / (S + overhead) answers per second, so the driver becomes the limit only when that passes "
            "what the models answer or what one driver submits and stores: at S = 1 s, thousands of CPUs; "
            "at S = 10 ms, the overhead dominates and `--scorers local` is the better choice.",
        ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--cpu-s", type=float, default=1.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        inside(args)
        return
    argv = [sys.executable, *sys.argv, "--inside"]
    script = 'ip link set lo up && exec "$@"'
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sys.exit(subprocess.call(["unshare", "--net", "--", "sh", "-c", script, "sh", *argv], env=env))


if __name__ == "__main__":
    main()
