"""Sampling logged traffic: time and peak memory at 100k and 1M logged turns.

Generates synthetic chat logs in the plain `{request, response, timestamp,
conversation_id}` shape, streamed straight to a temporary file (gzip with --gzip), so the
generator never holds the log either: conversations of 1-20 turns whose requests repeat
the whole history, a third of replies tool calls, e-mails and phone numbers to redact, a
few bad lines. Then samples --samples turns from the first 100k turns and from all
1,000,000, each in a fresh child process that reports its own time and peak RSS
(`resource.getrusage(...).ru_maxrss`) and its RSS after imports, before reading anything.
Flat memory shows as the same peak for 10x the log. Printed and written to
bench/results/sampling.md. Never run as a timed test.

    PYTHONPATH=. python bench/bench_sampling.py [--turns 1000000] [--samples 200] [--gzip]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "sampling.md"
END = 1_741_600_000  # 2025-03-10: the generated traffic ends here
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def generate(path: Path, turns: int, use_gzip: bool, seed: int = 1) -> int:
    """Write `turns` logged turns to `path`; returns the characters written (uncompressed)."""
    rnd = random.Random(seed)
    opener = (
        (lambda p: gzip.open(p, "wt", encoding="utf-8", compresslevel=1))
        if use_gzip
        else (lambda p: open(p, "w", encoding="utf-8"))
    )
    written = 0
    characters = 0
    conversation = 0
    with opener(path) as out:
        while written < turns:
            conversation += 1
            start = END - rnd.uniform(0, 45 * 86400)
            history = [
                {"role": "system", "content": "You are the order desk of Northwind. Escalate to ops@northwind.example."}
            ]
            for position in range(min(rnd.randint(1, 20), turns - written)):
                history.append(
                    {
                        "role": "user",
                        "content": f"Order {conversation}-{position}: where is it? Call me on +44 20 7946 {rnd.randint(1000, 9999)}.",
                    }
                )
                if position % 3 == 2:
                    reply = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{position}",
                                "type": "function",
                                "function": {
                                    "name": "lookup_order",
                                    "arguments": json.dumps({"order_id": f"{conversation}-{position}"}),
                                },
                            }
                        ],
                    }
                else:
                    reply = {"role": "assistant", "content": f"Your order {conversation}-{position} ships tomorrow."}
                record = {
                    "request": {"model": "gpt-4o", "messages": history, "tools": TOOLS},
                    "response": {
                        "model": "gpt-4o-2024-08-06",
                        "choices": [{"message": reply, "finish_reason": "stop"}],
                    },
                    "timestamp": start + position * 90,
                    "conversation_id": f"conv-{conversation}",
                }
                line = json.dumps(record) + "\n"
                if rnd.random() < 0.001:
                    line = line[: len(line) // 2] + "\n"  # a torn write: reported as bad JSON
                out.write(line)
                characters += len(line)
                written += 1
                history = history + [reply]
                if reply.get("tool_calls"):
                    history.append(
                        {"role": "tool", "tool_call_id": f"call_{position}", "content": '{"status": "shipped"}'}
                    )
    return characters


CHILD = r"""
import json, resource, sys, time, tempfile
from pathlib import Path
from compare_tui.sampling import SampleOptions, sample_logs, write_sampled_set
from compare_tui.goldset import load_golden_set
rss_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
began = time.perf_counter()
sampled = sample_logs([sys.argv[1]], SampleOptions(samples=int(sys.argv[2]), window="30d", seed="bench"))
out = write_sampled_set(sampled, Path(tempfile.mkdtemp()) / "set")
elapsed = time.perf_counter() - began
tasks = len(load_golden_set(out).tasks)
print(json.dumps({"seconds": elapsed, "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "rss_after_imports_kib": rss_imports, "tasks": tasks, "counts": sampled.info["counts"]}))
"""


def measure(path: Path, samples: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(samples)], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--gzip", action="store_true", help="write the generated logs gzip-compressed")
    args = parser.parse_args()
    small_turns = max(1, args.turns // 10)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for turns in (small_turns, args.turns):
            path = Path(tmp) / f"log-{turns}.jsonl{'.gz' if args.gzip else ''}"
            began = time.perf_counter()
            raw = generate(path, turns, args.gzip)
            generated_s = time.perf_counter() - began
            size = path.stat().st_size
            result = measure(path, args.samples)
            rows.append((turns, (raw, size), generated_s, result))
            print(
                f"{turns:>9,} turns  {raw / 1e6:8.1f} MB ({size / 1e6:.1f} MB stored)  sample {result['seconds']:6.1f} s  "
                f"peak RSS {result['peak_rss_kib'] / 1024:6.1f} MiB  (after imports {result['rss_after_imports_kib'] / 1024:.1f} MiB)",
                flush=True,
            )
            path.unlink()
    (small, _, _, r_small), (big, _, _, r_big) = rows
    lines = [
        "# Sampling benchmark",
        "",
        f"`PYTHONPATH=. python bench/bench_sampling.py --turns {args.turns} --samples {args.samples}{' --gzip' if args.gzip else ''}`",
        "",
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs. Synthetic plain-shape logs "
        f"({'gzip level 1' if args.gzip else 'uncompressed'}), conversations of 1-20 turns, each request repeating the history; "
        f"window 30d, {args.samples} samples. Each sampling run is a fresh process; time covers the one parse pass (which also "
        "hashes the file), two passes over the 64-byte-a-turn spill file, reading back the chosen lines, redaction and writing the set.",
        "",
        "| logged turns | log size (uncompressed) | stored | sampling time | turns/s | peak RSS | RSS after imports | peak above imports | tasks |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for turns, (raw, size), _gen_s, r in rows:
        lines.append(
            f"| {turns:,} | {raw / 1e6:,.0f} MB | {size / 1e6:,.1f} MB | {r['seconds']:.1f} s | {turns / r['seconds']:,.0f} | {r['peak_rss_kib'] / 1024:.1f} MiB | "
            f"{r['rss_after_imports_kib'] / 1024:.1f} MiB | {(r['peak_rss_kib'] - r['rss_after_imports_kib']) / 1024:.1f} MiB | {r['tasks']} |"
        )
    lines += [
        "",
        f"Ratios, {big:,} vs {small:,} turns (10x the log): time x{r_big['seconds'] / r_small['seconds']:.2f}, "
        f"peak RSS x{r_big['peak_rss_kib'] / r_small['peak_rss_kib']:.2f}.",
        "",
        f"Counts at {big:,}: `{json.dumps(r_big['counts'])}`",
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
