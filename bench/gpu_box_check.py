"""The check a machine with an NVIDIA GPU can make, and this project's machines cannot: does the
report's GPU row agree with `nvidia-smi`?

It runs a golden set against a catalogue model served on this machine's GPU (a CUDA build of
llama-server, or vLLM), with the engine's NVML sampler as in any run, while `nvidia-smi
--query-gpu=uuid,memory.used` is sampled alongside every 100 ms; then it prints, per GPU (by
UUID), the report's peak beside nvidia-smi's highest reading, and their difference. They should
agree to within what changed between two samples (both read the same NVML counter; nvidia-smi
prints whole MiB). On a machine without a GPU it says so and exits 0.

    PYTHONPATH=. python bench/gpu_box_check.py SET --model NAME [--models CATALOGUE] [--store PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

MiB = 1 << 20


def no_gpu() -> str | None:
    """Why this machine cannot make the check, or None."""
    from compare_tui.engine.gpu import nvml_devices

    count, reason = nvml_devices()
    if shutil.which("nvidia-smi") is None:
        return f"nvidia-smi not found; NVML: {reason or f'{count} GPU(s)'}"
    return reason


class SmiSampler:
    """`nvidia-smi` read every `interval_ms`: the highest `memory.used` per GPU UUID, in bytes."""

    def __init__(self, interval_ms: int = 100) -> None:
        self.peaks: dict[str, int] = {}
        self._process = subprocess.Popen(
            [
                "nvidia-smi",
                "--query-gpu=uuid,memory.used",
                "--format=csv,noheader,nounits",
                f"-lms={interval_ms}",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            uuid, _, used = line.partition(",")
            if used.strip().isdigit():
                self.peaks[uuid.strip()] = max(self.peaks.get(uuid.strip(), 0), int(used) * MiB)

    def stop(self) -> dict[str, int]:
        self._process.terminate()
        self._process.wait(10)
        self._thread.join(5)
        return self.peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", help="the golden set folder")
    parser.add_argument("--model", required=True, help="a catalogue model served on this machine's GPU")
    parser.add_argument("--models", help="the catalogue (default: compare-tui's)")
    parser.add_argument("--store", help="the run store (default: a temporary one)")
    args = parser.parse_args()
    why = no_gpu()
    if why is not None:
        print(f"no GPU: {why}. Nothing to check on this machine; run this on one with an NVIDIA GPU.")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or str(Path(tmp) / "runs.sqlite")
        run = [sys.executable, "-m", "compare_tui", "run", args.set, "--model", args.model, "--store", store, "--json"]
        run += ["--models", args.models] if args.models else []
        smi = SmiSampler()
        try:
            done = subprocess.run(run, capture_output=True, text=True)
        finally:
            smi_peaks = smi.stop()
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        comparison = json.loads(done.stdout)["comparison"]
        report = subprocess.run(
            [sys.executable, "-m", "compare_tui", "report", comparison, "--store", store, "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        )
    (row,) = json.loads(report.stdout)["models"]
    gpu = row["gpu_memory"]
    if not gpu["measured"]:
        print(f"the report's GPU row is not measured: {gpu['reason']}")
        return 1
    print(f"report: peak {gpu['peak_bytes'] / MiB:,.0f} MiB over {gpu['devices']} device(s), source {gpu['source']}")
    for uuid in gpu["uuids"]:
        smi_peak = smi_peaks.get(uuid)
        shown = "not seen by nvidia-smi" if smi_peak is None else f"{smi_peak / MiB:,.0f} MiB"
        print(f"  {uuid}: nvidia-smi's highest memory.used {shown}")
    total = sum(smi_peaks.get(u, 0) for u in gpu["uuids"])
    print(f"report − nvidia-smi, summed: {(gpu['peak_bytes'] - total) / MiB:+,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
