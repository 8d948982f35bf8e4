"""How much the command sandbox costs: scorer runs per second, sandboxed vs plain.

Runs the same tiny python3 check script three ways, interleaved round by round so machine
load affects all three alike:
  plain      subprocess.run([python3, check.py]) with the answer on stdin
  sandbox    score_command(...) with every isolation except the network namespace
  sandbox+ns score_command(...) with a network namespace (when this OS allows one)
Prints a markdown table with ratios to plain; `--out FILE` also writes it there.
Usage: python bench/bench_sandbox.py [--runs 60] [--out bench/results/sandbox.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compare_tui.goldset.models import CommandScorer, Task  # noqa: E402
from compare_tui.scoring import Answer, Limits, Outcome, network_namespace, score_command  # noqa: E402
from compare_tui.scoring.sandbox import SAFE_PATH  # noqa: E402

CHECK = "import sys\nsys.exit(0 if sys.stdin.read().strip() == 'billing' else 1)\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    python3 = shutil.which("python3", path=SAFE_PATH) or sys.executable
    set_root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    (set_root / "check.py").write_text(CHECK)
    task = Task.model_validate({"id": "bench", "input": {"prompt": "q"}, "expected": {"text": "billing"}})
    spec = CommandScorer(kind="command", run=[python3, "check.py"])
    answer = Answer(text="billing")
    netns = network_namespace()  # probe outside the timed loop

    def plain() -> None:
        done = subprocess.run([python3, str(set_root / "check.py")], input=b"billing", capture_output=True)
        assert done.returncode == 0

    def sandboxed(limits: Limits):
        def run() -> None:
            result = score_command(task, spec, answer, set_root, limits=limits)
            assert result.outcome is Outcome.PASS, result.detail

        return run

    modes = {"plain subprocess.run": plain, "sandbox, no network namespace": sandboxed(Limits(isolate_network=False))}
    if netns.available:
        modes["sandbox + network namespace"] = sandboxed(Limits())
    times: dict[str, list[float]] = {name: [] for name in modes}
    for fn in modes.values():
        fn()  # warm caches once
    for _ in range(args.runs):
        for name, fn in modes.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    shutil.rmtree(set_root)

    base = len(times["plain subprocess.run"]) / sum(times["plain subprocess.run"])
    lines = [
        f"# Command sandbox cost ({args.runs} interleaved runs each)",
        "",
        f"- machine: {platform.platform()}, {os.cpu_count()} CPUs, python3 = {python3}, uid {os.getuid()}",
        f"- load average at the end (1 min): {os.getloadavg()[0]:.1f} — figures are noisy on a shared box; read the ratios",
        f"- network namespace: {'yes, ' + netns.how if netns.available else 'unavailable: ' + netns.how}",
        "",
        "| mode | runs/s | p50 ms | p95 ms | runs/s vs plain |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, samples in times.items():
        rate = len(samples) / sum(samples)
        p95 = statistics.quantiles(samples, n=20)[-1]
        lines.append(
            f"| {name} | {rate:.1f} | {statistics.median(samples) * 1000:.1f} | {p95 * 1000:.1f} | {rate / base:.2f}× |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
