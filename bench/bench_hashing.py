"""Weights hashing throughput: `compare_tui.catalogue.hash_file` against `sha256sum`.

Creates a 1 GiB file in the temp folder (deleted afterwards), then hashes it with each
method in alternation, 3 rounds each, so both see the same page cache and machine load.
Reports median throughput (MB/s, 10^6 bytes) and the ratio ours / sha256sum (target
>= 0.9), printed and written to bench/results/hashing.md. Never run as a timed test.

    PYTHONPATH=. python bench/bench_hashing.py [--size-mib 1024] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compare_tui.catalogue.verify import CHUNK_SIZE, hash_file

RESULTS = Path(__file__).parent / "results" / "hashing.md"
BLOCK = 64 * 1024 * 1024


def make_file(path: Path, size: int) -> None:
    # Random bytes (not zeros) so nothing downstream can shortcut; one block repeated
    # keeps creation fast, and sha256 cost does not depend on the content.
    block = os.urandom(min(BLOCK, size))
    with open(path, "wb") as handle:
        written = 0
        while written < size:
            written += handle.write(block[: size - written])


def sha256sum(path: Path) -> str:
    out = subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True)
    return "sha256:" + out.stdout.split()[0]


def file_digest(path: Path) -> str:
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def timed(fn: Callable[[Path], str], path: Path) -> tuple[float, str]:
    start = time.perf_counter()
    digest = fn(path)
    return time.perf_counter() - start, digest


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    size = args.size_mib * 1024 * 1024

    methods: dict[str, Callable[[Path], str]] = {
        f"hash_file ({CHUNK_SIZE // 2**20} MiB chunks, shipped)": hash_file,
        "sha256sum": sha256sum,
        "hash_file (1 MiB chunks)": lambda p: hash_file(p, chunk_size=2**20),
        "hash_file (16 MiB chunks)": lambda p: hash_file(p, chunk_size=16 * 2**20),
        "hashlib.file_digest": file_digest,
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    with tempfile.TemporaryDirectory(prefix="bench-hashing-") as tmp:
        path = Path(tmp) / "weights.bin"
        make_file(path, size)
        digests = set()
        for _ in range(args.rounds):
            for name, fn in methods.items():  # alternate: one of each per round
                seconds, digest = timed(fn, path)
                times[name].append(seconds)
                digests.add(digest)
        if len(digests) != 1:
            print(f"methods disagree: {digests}", file=sys.stderr)
            return 1

    mbps = {name: size / 1e6 / statistics.median(t) for name, t in times.items()}
    ours, ref = next(iter(mbps)), "sha256sum"
    ratio = mbps[ours] / mbps[ref]
    coreutils = subprocess.run(["sha256sum", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    lines = [
        "# Weights hashing throughput",
        "",
        f"{args.size_mib} MiB file in the temp folder (page cache warm for every method), "
        f"{args.rounds} rounds, methods alternated; median of the rounds. MB = 10^6 bytes.",
        "",
        f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs visible)",
        f"- Python {platform.python_version()}, {ssl.OPENSSL_VERSION}; {coreutils}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        "| method | median MB/s | rounds (s) | vs sha256sum |",
        "|---|---:|---|---:|",
    ]
    for name, value in mbps.items():
        rounds = ", ".join(f"{t:.3f}" for t in times[name])
        lines.append(f"| {name} | {value:,.0f} | {rounds} | {value / mbps[ref]:.2f}× |")
    verdict = "meets" if ratio >= 0.9 else "BELOW"
    lines += ["", f"**Ratio (shipped hash_file / sha256sum): {ratio:.2f}× — {verdict} the 0.9× target.**", ""]
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
