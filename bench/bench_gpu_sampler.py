"""What the GPU memory sampler costs a run, at its interval: CPU per sample and share of a core.

The NVML sampler (`engine.gpu.GpuSampler`) runs in a child process that loads the project's
stand-in `libnvidia-ml.so.1` (tests/support/fake_nvml.c) through the real nvidia-ml-py, so the
whole Python path (pynvml's ctypes calls, the v2 struct, the thread's wake-ups) is measured; the
stand-in's own work (reading a small file per call) stands in for the driver's ioctl, which this
machine cannot measure. The DCGM sampler (`engine.gpu_dcgm.DcgmSampler`) reads a loopback
exporter serving recorded exposition text from this process. For each interval the child's CPU
time over the same wall time is measured without a sampler and with one, alternated; the
difference divided by the samples taken is the cost per sample. Printed and written to
bench/results/gpu_sampler.md. Never run as a timed test.

    PYTHONPATH=. python bench/bench_gpu_sampler.py [--seconds 3] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "gpu_sampler.md"
INTERVALS = (0.1, 0.02, 0.005)


def child(kind: str, interval: float, seconds: float, telemetry: str | None) -> dict:
    """In this process: CPU seconds over `seconds` of wall time with the sampler on (or off)."""
    from compare_tui.endpoint.dcgm import parse_gpu_telemetry
    from compare_tui.engine.gpu import GpuSampler
    from compare_tui.engine.gpu_dcgm import DcgmSampler

    sampler = None
    if kind == "nvml":
        sampler = GpuSampler(interval)
    elif kind == "dcgm":
        assert telemetry is not None
        sampler = DcgmSampler(parse_gpu_telemetry(telemetry), interval)
    if sampler is not None:  # warm: import pynvml / httpx and open the library before timing
        assert sampler.start(), sampler.stop().reason
        sampler.stop()
        sampler = (
            GpuSampler(interval) if kind == "nvml" else DcgmSampler(parse_gpu_telemetry(telemetry or ""), interval)
        )
    cpu0 = time.process_time()
    if sampler is not None:
        sampler.start()
    time.sleep(seconds)
    samples = sampler.stop().samples if sampler is not None else 0
    return {"cpu_s": time.process_time() - cpu0, "samples": samples}


def measure(env: dict[str, str], kind: str, interval: float, seconds: float, telemetry: str | None) -> dict:
    command = [sys.executable, __file__, "--child", kind, str(interval), str(seconds), telemetry or "-"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=4)
    args = parser.parse_args()
    if args.child:
        kind, interval, seconds, telemetry = args.child
        print(json.dumps(child(kind, float(interval), float(seconds), None if telemetry == "-" else telemetry)))
        return

    sys.path.insert(0, str(ROOT))
    from tests.support.fake_nvml import FakeGpuBox, GiB, build
    from tests.support.metrics_server import MetricsServer, recorded

    rows = []
    with tempfile.TemporaryDirectory() as tmp, MetricsServer([recorded("peak")]) as exporter:
        library = build(Path(tmp) / "lib")
        box = FakeGpuBox(Path(tmp) / "box", library).devices(("GPU-bench", "Fake H100", [2 * GiB, 5 * GiB, 3 * GiB]))
        env = box.environ() | {"PYTHONPATH": str(ROOT)}
        for kind in ("nvml", "dcgm"):
            for interval in INTERVALS:
                idle, busy, per_sample, samples = [], [], [], []
                for _ in range(args.rounds):  # alternated, so both see the same machine load
                    off = measure(env, "off", interval, args.seconds, None)
                    on = measure(env, kind, interval, args.seconds, exporter.spec)
                    idle.append(off["cpu_s"])
                    busy.append(on["cpu_s"])
                    samples.append(on["samples"])
                    per_sample.append((on["cpu_s"] - off["cpu_s"]) / max(on["samples"], 1))
                cost = statistics.median(per_sample)
                rows.append(
                    f"| {kind.upper()} | {interval * 1000:g} ms | {statistics.median(samples):.0f} | "
                    f"{cost * 1e6:,.0f} | {cost / interval * 100:.2f} % | "
                    f"{', '.join(f'{b:.3f}/{i:.3f}' for b, i in zip(busy, idle))} |"
                )
                print(rows[-1], flush=True)
    lines = [
        "## GPU memory sampler: cost per sample at its interval",
        "",
        f"`PYTHONPATH=. python bench/bench_gpu_sampler.py --seconds {args.seconds:g} --rounds {args.rounds}`; "
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, Python {platform.python_version()}, "
        f"{os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}. NVML: the real nvidia-ml-py "
        "loading the project's stand-in `libnvidia-ml.so.1` (no GPU here: the driver's own cost is not in "
        "these figures). DCGM: a loopback exporter serving recorded exposition for two GPUs (one HTTP "
        "request and parse per sample). CPU of the sampling process over the same wall time, sampler on vs "
        "off, alternated; the difference per sample taken (median of the rounds). The engine samples at "
        "100 ms.",
        "",
        "| source | interval | samples | CPU per sample, µs | share of one core | CPU s on/off per round |",
        "|---|---:|---:|---:|---:|---|",
        *rows,
    ]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
