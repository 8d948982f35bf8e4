"""The GPU memory figure in words, for every surface (text, Markdown, HTML, TUI, caveats):
the table cell, its source and the sentence with its device scope. Re-exported by
`report.formatting`; its own module so that the caveats can use it too (pure)."""

from __future__ import annotations

from compare_tui.report.figures import GpuMemory
from compare_tui.vocabulary import GpuSource

DASH = "\u2013"
"""What an empty cell shows, on every surface (re-exported as `formatting.DASH`)."""


def byte_size(value: int | None) -> str:
    if value is None:
        return DASH
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} GiB"  # pragma: no cover - the loop always returns


def gpu(memory: GpuMemory) -> str:
    """The table cell: the peak (`5.00 GiB`, `5.00 GiB (DCGM)` when read from a remote
    exporter, so a column never mixes sources unsaid), or why there is none."""
    if not memory.applicable:
        return "n/a (hosted)"
    if memory.measured and memory.peak_bytes is not None:
        return byte_size(memory.peak_bytes) + (" (DCGM)" if memory.source == GpuSource.DCGM else "")
    return f"not measured ({memory.reason})" if memory.reason else "not measured"


def gpu_source(memory: GpuMemory) -> str:
    """Where a GPU figure was read: `NVML on this machine`, `DCGM on gpu-box:9400`."""
    if memory.source == GpuSource.DCGM:
        return f"DCGM on {memory.host or 'an unnamed exporter'}"
    return "NVML on this machine"


def gpu_line(memory: GpuMemory) -> str:
    """The figure in a sentence, with its source and device scope: `high-water mark 5.00 GiB on
    NVIDIA H100 (NVML on this machine, 1 device: GPU-…)`; else as `gpu`."""
    if not (memory.applicable and memory.measured and memory.peak_bytes is not None):
        return gpu(memory)
    names = ", ".join(dict.fromkeys(n for n in memory.device_names if n)) or "unnamed GPUs"
    count = f"{memory.devices} device{'s' if memory.devices != 1 else ''}"
    uuids = ", ".join(u for u in memory.uuids if u)
    return (
        f"high-water mark {byte_size(memory.peak_bytes)} on {names} "
        f"({gpu_source(memory)}, {count}{': ' + uuids if uuids else ''})"
    )
