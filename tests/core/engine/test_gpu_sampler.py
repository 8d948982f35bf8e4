"""GPU sampler: baseline/peak tracking, v1 fallback and every "not measured" path."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types

import pytest

from compare_tui.engine.gpu import GpuReport, GpuSampler

MiB = 1 << 20


def fake_nvml(
    readings: list[list[int]], *, init_error: str | None = None, v2: str = "ok", fail_after: int | None = None
) -> types.ModuleType:
    """A stand-in for pynvml. Device i reports `readings[i]` in order (the last value
    repeats). `v2`: "ok", "typeerror" (bindings without `version=`) or "missing" (driver without
    the _v2 call). `fail_after`: memory reads after this many raise GpuIsLost."""
    nvml = types.ModuleType("fake_pynvml")
    codes = {
        "NotSupported": 3,
        "NoPermission": 4,
        "DriverNotLoaded": 9,
        "LibraryNotFound": 12,
        "FunctionNotFound": 13,
        "GpuIsLost": 15,
    }

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(value)
            self.value = value

    nvml.NVMLError = NVMLError
    for name, code in codes.items():
        cls = type(f"NVMLError_{name}", (NVMLError,), {"__init__": lambda self, c=code: NVMLError.__init__(self, c)})
        setattr(nvml, cls.__name__, cls)
    nvml.nvmlMemory_v2 = 0x02000028
    nvml.calls = {"init": 0, "shutdown": 0, "memory": 0}
    positions = [0] * len(readings)
    lock = threading.Lock()

    def nvmlInit():
        nvml.calls["init"] += 1
        if init_error:
            raise getattr(nvml, f"NVMLError_{init_error}")()

    def nvmlDeviceGetMemoryInfo(handle, version=None):
        if version is not None and v2 == "typeerror":
            raise TypeError("nvmlDeviceGetMemoryInfo() got an unexpected keyword 'version'")
        if version is not None and v2 == "missing":
            raise nvml.NVMLError_FunctionNotFound()
        with lock:
            nvml.calls["memory"] += 1
            if fail_after is not None and nvml.calls["memory"] > fail_after:
                raise nvml.NVMLError_GpuIsLost()
            series = readings[handle]
            used = series[min(positions[handle], len(series) - 1)]
            positions[handle] += 1
        return types.SimpleNamespace(total=80_000 * MiB, used=used, free=80_000 * MiB - used, reserved=300 * MiB)

    nvml.nvmlInit = nvmlInit
    nvml.nvmlShutdown = lambda: nvml.calls.__setitem__("shutdown", nvml.calls["shutdown"] + 1)
    nvml.nvmlSystemGetDriverVersion = lambda: b"550.54.15"
    nvml.nvmlDeviceGetCount = lambda: len(readings)
    nvml.nvmlDeviceGetHandleByIndex = lambda i: i
    nvml.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"
    nvml.nvmlDeviceGetUUID = lambda h: f"GPU-0000-{h}"
    nvml.nvmlDeviceGetMemoryInfo = nvmlDeviceGetMemoryInfo
    return nvml


def run_until(sampler: GpuSampler, nvml, memory_calls: int) -> GpuReport:
    sampler.start()
    deadline = time.monotonic() + 5
    while nvml.calls["memory"] < memory_calls and time.monotonic() < deadline:
        time.sleep(0.002)
    return sampler.stop()


def sampler_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gpu-sampler"]


def test_tracks_baseline_and_peak_per_device():
    nvml = fake_nvml([[100 * MiB, 500 * MiB, 300 * MiB], [1000 * MiB, 900 * MiB, 1200 * MiB, 1100 * MiB]])
    sampler = GpuSampler(0.001, nvml=nvml)
    report = run_until(sampler, nvml, 8)
    assert report.measured and report.reason is None
    assert report.devices == [
        {
            "index": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "uuid": "GPU-0000-0",
            "baseline_bytes": 100 * MiB,
            "peak_bytes": 500 * MiB,
            "delta_bytes": 400 * MiB,
        },
        {
            "index": 1,
            "name": "NVIDIA H100 80GB HBM3",
            "uuid": "GPU-0000-1",
            "baseline_bytes": 1000 * MiB,
            "peak_bytes": 1200 * MiB,
            "delta_bytes": 200 * MiB,
        },
    ]
    assert report.driver == "550.54.15" and report.scope == "device"
    assert report.memory_api == "v2" and report.notes == []
    assert report.samples >= 4 and report.interval_s == 0.001
    assert nvml.calls["shutdown"] == 1 and not sampler_threads()
    assert sampler.stop() is report and nvml.calls["shutdown"] == 1  # idempotent
    assert report.to_dict()["devices"][0]["delta_bytes"] == 400 * MiB


def test_context_manager_and_slow_interval_stops_promptly():
    nvml = fake_nvml([[7]])
    started = time.monotonic()
    with GpuSampler(30.0, nvml=nvml) as sampler:
        pass
    assert time.monotonic() - started < 2  # stop() does not wait out the interval
    report = sampler.stop()
    assert report.measured and report.devices[0]["delta_bytes"] == 0 and not sampler_threads()


@pytest.mark.parametrize("v2", ["typeerror", "missing"])
def test_falls_back_to_v1_memory_info_and_says_so(v2):
    nvml = fake_nvml([[10, 20]], v2=v2)
    report = run_until(GpuSampler(0.001, nvml=nvml), nvml, 2)
    assert report.measured and report.memory_api == "v1"
    assert report.devices[0]["peak_bytes"] == 20
    assert len(report.notes) == 1 and "driver-reserved" in report.notes[0]


@pytest.mark.parametrize(
    "error, words",
    [
        ("LibraryNotFound", "NVML library not found"),
        ("DriverNotLoaded", "driver is not loaded"),
        ("NoPermission", "no permission"),
        ("NotSupported", "not supported"),
    ],
)
def test_nvml_unavailable_is_a_reason_not_a_crash(error, words):
    nvml = fake_nvml([[1]], init_error=error)
    sampler = GpuSampler(nvml=nvml)
    assert sampler.start() is False
    report = sampler.stop()
    assert not report.measured and words in report.reason
    assert report.devices == [] and report.samples == 0 and report.memory_api is None
    assert nvml.calls["shutdown"] == 0  # never initialised, so nothing to shut down
    assert sampler.stop() is report and not sampler_threads()


def test_no_devices_and_not_started():
    nvml = fake_nvml([])
    sampler = GpuSampler(nvml=nvml)
    assert sampler.start() is False
    report = sampler.stop()
    assert not report.measured and "no NVIDIA GPU" in report.reason
    assert nvml.calls["shutdown"] == 1
    assert GpuSampler(nvml=nvml).stop().reason == "sampler was not started"


def test_sampling_failure_mid_run_keeps_peak_and_notes_it():
    nvml = fake_nvml([[5, 50, 40]], fail_after=3)
    report = run_until(GpuSampler(0.001, nvml=nvml), nvml, 4)
    assert report.measured and report.devices[0]["peak_bytes"] == 50
    assert any("sampling stopped after 3 samples" in n for n in report.notes)
    assert not sampler_threads()


def test_missing_bindings(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    report = _start_stop(GpuSampler())
    assert not report.measured and "nvidia-ml-py" in report.reason


def _start_stop(sampler: GpuSampler) -> GpuReport:
    sampler.start()
    return sampler.stop()


def test_real_pynvml_never_raises():
    report = _start_stop(GpuSampler(0.05))
    if report.measured:  # a machine with an NVIDIA GPU
        assert report.devices and report.devices[0]["peak_bytes"] >= report.devices[0]["baseline_bytes"]
    else:  # this project's CI box: no driver
        assert report.reason and report.devices == []
    assert not sampler_threads()


def test_import_does_not_load_pynvml():
    code = "import sys, compare_tui.engine.gpu; assert 'pynvml' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("nvml", "expected"),
    [
        (
            fake_nvml([[1]], init_error="LibraryNotFound"),
            "NVML library not found (no NVIDIA driver installed on this machine)",
        ),
        (fake_nvml([]), "no NVIDIA GPU found by NVML"),
        (fake_nvml([[1]]), None),
        (ImportError("No module named 'pynvml'"), "NVML Python bindings (nvidia-ml-py) are not installed"),
    ],
)
def test_the_live_screen_says_before_a_run_whether_gpu_memory_can_be_sampled(monkeypatch, nvml, expected):
    from compare_tui.engine import gpu
    from compare_tui.tui.engine_bridge import gpu_before_run

    def load(name):
        if isinstance(nvml, Exception):
            raise nvml
        return nvml

    monkeypatch.setattr(gpu.importlib, "import_module", load)
    gpu.nvml_unavailable.cache_clear()
    try:
        reason = gpu.nvml_unavailable()
    finally:
        gpu.nvml_unavailable.cache_clear()
    assert reason == expected
    if not isinstance(nvml, Exception):
        opened = expected is None or expected.startswith("no NVIDIA GPU")
        assert nvml.calls["shutdown"] == (1 if opened else 0)  # what was opened is closed again
    line = gpu_before_run("local", reason)
    assert line == (
        "being sampled by the engine; the peak shows when the run ends"
        if expected is None
        else f"not measured ({expected})"
    )
    assert gpu_before_run("hosted", reason).startswith("n/a (hosted")
