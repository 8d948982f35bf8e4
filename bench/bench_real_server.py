"""Two checkouts side by side on one real llama-server: the demo set's run wall time, errors,
HTTP requests per attempt and TTFT against the server's own `timings`, for each checkout's
engine and chat client, alternating in child processes so both meet the same load.

One server (`local up` of this checkout: smollm2-135m, 4 slots, `--threads 1`) serves both.
Each round runs, from each checkout in turn (the first alternating): the demo set
(`sample_sets/ticket-labels`, 64 tasks) as one engine run at concurrency 4 (the demo's), then
`--ttft-requests` single requests at concurrency 1 with `cache_prompt: false` through the
client a run uses (TTFT − the server's `timings.prompt_ms`, as `bench_ttft_accuracy.py`). A
checkout from before the endpoint seam sends through `engine.transport.chat_session` (its
default transport); a later one through `endpoint.client.chat_client`.

    PYTHONPATH=. .venv/bin/python bench/bench_real_server.py --before ../old-checkout [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO_SET = "sample_sets/ticket-labels"
MODEL = "smollm2-135m"


def worker(args: argparse.Namespace) -> None:
    """In a child process: this checkout's engine against the running server; JSON on stdout."""
    sys.path.insert(0, str(Path(args.checkout).resolve()))
    from compare_tui.engine import RunExecutor, RunOverrides, prepare_run
    from compare_tui.engine.exchange import stream_chat
    from compare_tui.goldset import load_golden_set
    from compare_tui.store import Store
    from tests.support.builders import hosted_entry

    try:
        from compare_tui.endpoint.client import chat_client

        def client() -> object:
            return chat_client(timeout_s=120, concurrency=1)
    except ImportError:  # before the endpoint seam: the run's default transport then
        from compare_tui.engine.transport import chat_session

        def client() -> object:
            return chat_session(timeout_s=120, concurrency=1)

    # A hosted entry for the same server, so both checkouts read the same catalogue data.
    entry = hosted_entry(args.endpoint, name=MODEL)
    demo = load_golden_set(Path(args.checkout) / DEMO_SET)
    with Store.open(Path(args.store)) as store:
        prepared = prepare_run(store, demo, entry, RunOverrides(concurrency=4), environ={})
        start, cpu = time.perf_counter(), time.process_time()
        asyncio.run(RunExecutor(store, prepared).execute())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        attempts = store.attempts_for_run(prepared.run.id)
        requests = len(store.audit_for_run(prepared.run.id))
    deltas = [
        a.ttft_ms - a.server_timings["prompt_ms"]
        for a in attempts
        if a.ttft_ms is not None and a.server_timings and "prompt_ms" in a.server_timings
    ]
    # What the server says it spent (prompt + decode) and the rest of each attempt's end-to-end time.
    server = [
        (a.server_timings["prompt_ms"] + a.server_timings["predicted_ms"], a.e2e_ms)
        for a in attempts
        if a.e2e_ms is not None and a.server_timings and {"prompt_ms", "predicted_ms"} <= set(a.server_timings)
    ]

    async def ttft() -> list[float]:
        out = []
        for i in range(args.ttft_requests):
            body = {
                "model": "x",
                "messages": [
                    {"role": "user", "content": f"Request {args.seed}-{i}: summarise. " + "ticket refund " * (i % 20)}
                ],
                "stream": True,
                "stream_options": {"include_usage": True},
                "max_tokens": 8,
                "temperature": 0,
                "cache_prompt": False,
            }
            async with client() as c:  # type: ignore[attr-defined]
                ex = await stream_chat(c, args.endpoint, body)
            acc = ex.acc
            if not ex.error_class and acc is not None and acc.timings and acc.ttft_ms() is not None:
                out.append(float(acc.ttft_ms() - acc.timings["prompt_ms"]))
        return out

    single = asyncio.run(ttft())
    errors = Counter(str(a.error_class) for a in attempts if a.error_class)
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "server_ms": [s for s, _ in server],
                "outside_ms": [e - s for s, e in server],
                "n": len(attempts),
                "errors": sum(errors.values()),
                "requests_per_attempt": requests / max(1, len(attempts)),
                "deltas": deltas,
                "single": single,
            }
        )
    )


def pct(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(values, q)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", metavar="CHECKOUT", help="the older checkout (required; its .venv is not used)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ttft-requests", type=int, default=10, help="per checkout and round, at concurrency 1")
    parser.add_argument("--out", default=str(ROOT / "bench/results/real_server.md"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if not args.before:
        parser.error("--before CHECKOUT is required: the older checkout to run beside this one")

    sys.path.insert(0, str(ROOT))
    from compare_tui.catalogue import load_catalogue
    from compare_tui.local import down, up

    sides = {"before": str(Path(args.before).resolve()), "after": str(ROOT)}
    got: dict[str, list[dict]] = {s: [] for s in sides}
    loads: list[str] = []
    state = tempfile.mkdtemp(prefix="bench-real-server-")
    os.environ["COMPARE_TUI_STATE_DIR"] = state
    cluster = up([MODEL], parallel=4, ctx=4096, threads=1, catalogue_path=Path(state) / "models.toml")
    try:
        endpoint = load_catalogue(cluster.catalogue_path).get(MODEL).endpoint
        order = list(sides)
        for r in range(args.rounds + 1):  # round 0 warms the server (weights paged in) and is dropped
            for side in order[r % 2 :] + order[: r % 2]:
                env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
                child = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        "--checkout",
                        sides[side],
                        "--endpoint",
                        endpoint,
                        "--store",
                        str(Path(state) / f"{side}.sqlite"),
                        "--ttft-requests",
                        str(args.ttft_requests),
                        "--seed",
                        str(r),
                    ],
                    capture_output=True,
                    text=True,
                    cwd=sides[side],
                    env=env,
                    check=True,
                )
                one = json.loads(child.stdout.strip().splitlines()[-1])
                loads.append(Path("/proc/loadavg").read_text().split()[0])
                if r:
                    got[side].append(one)
                print(
                    side,
                    f"round {r}: wall {one['wall']:.1f} s, CPU {one['cpu']:.2f} s, errors {one['errors']}, load {loads[-1]}",
                    flush=True,
                )
    finally:
        down()
    import numpy as np

    lines = [
        "# Real llama-server, two checkouts side by side",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python bench/bench_real_server.py --before CHECKOUT --rounds {args.rounds} "
        f"--ttft-requests {args.ttft_requests}`; {MODEL}, 4 slots, `--threads 1`; the demo set at concurrency 4; "
        f"load average (1 min) after each child: {min(loads)}–{max(loads)}.",
        "",
        "| checkout | run wall s, median (min–max) | client CPU s per run | errors | HTTP requests per attempt "
        "| server's prompt + decode ms per attempt, median | end to end − that, median ms | TTFT − prompt_ms at 4, "
        "median / p95 ms | at 1, median / p95 / min ms, negatives |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for side, runs in got.items():
        walls = [g["wall"] for g in runs]
        deltas = [d for g in runs for d in g["deltas"]]
        single = [d for g in runs for d in g["single"]]
        lines.append(
            f"| {side} | {np.median(walls):.2f} ({min(walls):.2f}–{max(walls):.2f}) "
            f"| {np.median([g['cpu'] for g in runs]):.2f} | {sum(g['errors'] for g in runs)} "
            f"| {max(g['requests_per_attempt'] for g in runs):.2f} "
            f"| {pct([x for g in runs for x in g['server_ms']], 50):.0f} "
            f"| {pct([x for g in runs for x in g['outside_ms']], 50):.0f} | {pct(deltas, 50):.0f} / {pct(deltas, 95):.0f} "
            f"| {pct(single, 50):.1f} / {pct(single, 95):.1f} / {min(single):.1f}, {sum(d < 0 for d in single)} |"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
