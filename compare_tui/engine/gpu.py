"""GPU memory high-water mark through NVML, sampled from one background thread.

What the figure means (docs/measurement.md §4): device-wide memory in use, read with
`nvmlDeviceGetMemoryInfo(..., version=nvmlMemory_v2)` so that `used` matches nvidia-smi and
excludes driver-reserved memory. Baseline is the reading at `start()`, peak the highest
reading until `stop()`; spikes shorter than the interval can be missed. Scope is the whole
device (other processes included), because per-process figures are unreliable in containers.

The sampler never raises into a run: a machine without NVML, a driver or permission gives a
report with `measured=False` and a plain reason.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any, NotRequired, Protocol, TypedDict

from compare_tui.vocabulary import GpuSource

# NVML error codes (nvml.h) -> what a user should read. Matched by code, then by class name,
# so that a test double needs only exception classes with a `value`.
_REASONS = {
    12: ("LibraryNotFound", "NVML library not found (no NVIDIA driver installed on this machine)"),
    9: ("DriverNotLoaded", "NVIDIA driver is not loaded"),
    4: ("NoPermission", "no permission to query the GPU through NVML"),
    3: ("NotSupported", "GPU memory queries are not supported on this device"),
    13: ("FunctionNotFound", "the NVIDIA driver is too old for this NVML call"),
}
V1_NOTE = (
    "memory read with the NVML v1 call: 'used' includes driver-reserved memory, so figures read higher than nvidia-smi"
)


def nvml_reason(exc: BaseException) -> str:
    """A plain-words reason for an NVML (or import) failure."""
    if isinstance(exc, ImportError):
        return "NVML Python bindings (nvidia-ml-py) are not installed"
    code = getattr(exc, "value", None)
    if code in _REASONS:
        return _REASONS[code][1]
    for suffix, reason in _REASONS.values():
        if type(exc).__name__.endswith(suffix):
            return reason
    return f"NVML error: {type(exc).__name__}: {exc}"


def nvml_devices() -> tuple[int, str | None]:
    """How many NVIDIA GPUs NVML sees on this machine, and when none, why (the sampler's words:
    `no NVIDIA GPU found by NVML`, `NVML library not found …`). Never raises."""
    try:
        nvml: Any = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - any NVML failure becomes a reason
        return 0, nvml_reason(exc)
    try:
        count = int(nvml.nvmlDeviceGetCount())
        return count, None if count else "no NVIDIA GPU found by NVML"
    except Exception as exc:  # noqa: BLE001
        return 0, nvml_reason(exc)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


@functools.cache
def nvml_unavailable() -> str | None:
    """Why no GPU memory can be sampled on this machine (None: NVML answers and sees a GPU), as
    `GpuSampler.start` would say it: asked once per process, for screens that show a run
    before its sampler reports (the TUI's Live screen)."""
    return nvml_devices()[1]


class GpuDevice(TypedDict):
    """One GPU as a sampler tracks it: the first reading (`baseline_bytes`) and the highest
    (`peak_bytes`), None until read; `delta_bytes` (peak minus baseline) added in the report."""

    index: int | str
    """NVML's device index; DCGM's `gpu` label, as text."""
    name: str
    uuid: str
    hostname: NotRequired[str]
    """The exporter's host for the GPU (DCGM only)."""
    baseline_bytes: int | None
    peak_bytes: int | None
    delta_bytes: NotRequired[int]


def reported(device: GpuDevice) -> GpuDevice:
    """The device as the report holds it: `delta_bytes` added (the device was read at least once)."""
    assert device["peak_bytes"] is not None and device["baseline_bytes"] is not None
    return {**device, "delta_bytes": device["peak_bytes"] - device["baseline_bytes"]}


@dataclass
class GpuReport:
    """What the sampler saw. `devices` holds one dict per GPU:
    {index, name, uuid, baseline_bytes, peak_bytes, delta_bytes}."""

    measured: bool
    reason: str | None = None
    devices: list[GpuDevice] = field(default_factory=list)
    driver: str | None = None
    samples: int = 0
    interval_s: float = 0.1
    scope: str = "device"
    memory_api: str | None = None  # "v2" or "v1" (see V1_NOTE)
    notes: list[str] = field(default_factory=list)
    source: str = GpuSource.NVML
    """Where the readings came from (`vocabulary.GpuSource`)."""
    host: str | None = None
    """The exporter read (`HOST:PORT`) for DCGM; None for NVML, which reads this machine."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form, for the store and the report."""
        return asdict(self)


class MemorySampler(Protocol):
    """What a run needs of a GPU memory sampler (NVML here, `gpu_dcgm.DcgmSampler` remote)."""

    def start(self) -> bool: ...

    def stop(self) -> GpuReport: ...


def track(device: GpuDevice, used: int) -> None:
    """Count one reading of `used` bytes toward a device's baseline (its first) and peak."""
    if device["baseline_bytes"] is None:
        device["baseline_bytes"] = used
    device["peak_bytes"] = max(device["peak_bytes"] or 0, used)


def _text(value: Any) -> str:
    # Older bindings return bytes, newer ones str.
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class GpuSampler:
    """Samples every device's used memory at about 1/interval_s Hz between start() and stop().

    `nvml` injects a module with pynvml's API (tests); by default `pynvml` is imported at
    `start()`, never at import time."""

    def __init__(self, interval_s: float = 0.1, *, nvml: ModuleType | None = None) -> None:
        self.interval_s = interval_s
        self._nvml: Any = nvml
        self._handles: list[Any] = []
        self._devices: list[GpuDevice] = []
        self._v2 = True
        self._notes: list[str] = []
        self._driver: str | None = None
        self._samples = 0
        self._reason: str | None = "sampler was not started"
        self._initialised = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._report: GpuReport | None = None

    def __enter__(self) -> GpuSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> bool:
        """Initialise NVML, take the baseline reading and start the thread. Returns whether
        memory is being measured; never raises."""
        if self._initialised or self._report is not None:
            return self._reason is None
        try:
            if self._nvml is None:
                self._nvml = importlib.import_module("pynvml")
            self._nvml.nvmlInit()
            self._initialised = True
            self._open_devices()
            if not self._devices:
                self._reason = "no NVIDIA GPU found by NVML"
                return False
            self._sample()  # the baseline: memory in use before the run's first request
        except Exception as exc:  # noqa: BLE001 - any NVML failure becomes a reason, never a crash
            self._reason = nvml_reason(exc)
            return False
        self._reason = None
        self._thread = threading.Thread(target=self._loop, name="gpu-sampler", daemon=True)
        self._thread.start()
        return True

    def _open_devices(self) -> None:
        nvml = self._nvml
        try:
            self._driver = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:  # noqa: BLE001 - the driver version is nice to have
            self._notes.append(f"driver version unavailable: {nvml_reason(exc)}")
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            self._handles.append(handle)
            self._devices.append(
                {
                    "index": index,
                    "name": _text(nvml.nvmlDeviceGetName(handle)),
                    "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
                    "baseline_bytes": None,
                    "peak_bytes": None,
                }
            )

    def _used(self, handle: Any) -> int:
        nvml = self._nvml
        if self._v2:
            try:
                return int(nvml.nvmlDeviceGetMemoryInfo(handle, version=nvml.nvmlMemory_v2).used)
            except (TypeError, AttributeError) as exc:  # bindings without the v2 struct
                self._fall_back_to_v1(exc)
            except Exception as exc:  # noqa: BLE001
                # A driver without nvmlDeviceGetMemoryInfo_v2 (or refusing it) may still
                # answer v1; anything else is a real failure.
                if nvml_reason(exc) not in (_REASONS[13][1], _REASONS[3][1]):
                    raise
                self._fall_back_to_v1(exc)
        return int(nvml.nvmlDeviceGetMemoryInfo(handle).used)

    def _fall_back_to_v1(self, exc: BaseException) -> None:
        self._v2 = False
        self._notes.append(f"{V1_NOTE} (v2 unavailable: {type(exc).__name__})")

    def _sample(self) -> None:
        for device, handle in zip(self._devices, self._handles):
            track(device, self._used(handle))
        self._samples += 1

    def _loop(self) -> None:
        # Event.wait doubles as the sleep, so stop() ends the thread within one call.
        while not self._stop.wait(self.interval_s):
            try:
                self._sample()
            except Exception as exc:  # noqa: BLE001 - keep the peak so far, stop sampling
                self._notes.append(f"sampling stopped after {self._samples} samples: {nvml_reason(exc)}")
                return

    def stop(self) -> GpuReport:
        """Stop sampling, shut NVML down and return the report; later calls return the same
        report. Never raises."""
        if self._report is not None:
            return self._report
        self._stop.set()
        if self._thread is not None:
            self._thread.join(max(1.0, 10 * self.interval_s))
            try:
                self._sample()  # the state at the end of the run counts toward the peak
            except Exception:  # noqa: BLE001 - the thread has already noted sampling failures
                pass
        if self._initialised:
            try:
                self._nvml.nvmlShutdown()
            except Exception as exc:  # noqa: BLE001
                self._notes.append(f"nvmlShutdown failed: {nvml_reason(exc)}")
        measured = self._reason is None
        devices = [reported(d) for d in self._devices if measured]
        self._report = GpuReport(
            measured=measured,
            reason=self._reason,
            devices=devices,
            driver=self._driver,
            samples=self._samples,
            interval_s=self.interval_s,
            memory_api=("v2" if self._v2 else "v1") if measured else None,
            notes=list(self._notes),
        )
        return self._report
