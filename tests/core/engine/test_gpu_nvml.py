"""The NVML path as it runs on a GPU box, on a machine without one: the real nvidia-ml-py
(ctypes, versioned structs, error codes, the library lookup by soname) loading the project's
own stand-in `libnvidia-ml.so.1` (tests/support/fake_nvml.c), in a child process.

If the stand-in cannot be built these tests ERROR (the fixture raises): never skipped.
"""

from __future__ import annotations

import pytest

from tests.support.fake_nvml import FakeGpuBox, GiB, MiB

H100 = "Fake H100 80GB HBM3"
UUID0 = "GPU-11111111-2222-3333-4444-555555555555"
UUID1 = "GPU-66666666-7777-8888-9999-000000000000"


@pytest.fixture
def box(tmp_path, fake_nvml_library) -> FakeGpuBox:
    return FakeGpuBox(tmp_path / "gpu-box", fake_nvml_library)


def ramp() -> list[int]:
    """2 GiB at the baseline, up to 5 GiB and back down to 3 GiB."""
    return [2 * GiB] * 4 + [3 * GiB, 4 * GiB, 5 * GiB, 4 * GiB] + [3 * GiB]


def test_a_ramp_through_the_real_bindings_reads_its_baseline_and_peak(box):
    box.devices((UUID0, H100, ramp()))
    report = box.sample(0.02, 24)
    assert report["pynvml"].endswith("site-packages/pynvml.py")  # the real bindings, not a double
    assert report["measured"] is True and report["reason"] is None
    assert report["memory_api"] == "v2" and report["notes"] == []
    assert report["driver"] == "555.42.06-fake" and report["source"] == "nvml" and report["host"] is None
    assert report["samples"] >= 24 and report["interval_s"] == 0.02
    assert report["devices"] == [
        {
            "index": 0,
            "name": H100,
            "uuid": UUID0,
            "baseline_bytes": 2 * GiB,
            "peak_bytes": 5 * GiB,
            "delta_bytes": 3 * GiB,
        }
    ]


def test_several_gpus_are_each_named_by_uuid_and_each_keeps_its_own_peak(box):
    box.devices((UUID0, H100, ramp()), (UUID1, "Fake L4", [1 * GiB, 7 * GiB, 2 * GiB]))
    report = box.sample(0.01, 6)
    devices = {d["uuid"]: d for d in report["devices"]}
    assert [d["index"] for d in report["devices"]] == [0, 1]
    assert devices[UUID0]["peak_bytes"] == 5 * GiB and devices[UUID0]["name"] == H100
    assert devices[UUID1] == {
        "index": 1,
        "name": "Fake L4",
        "uuid": UUID1,
        "baseline_bytes": 1 * GiB,
        "peak_bytes": 7 * GiB,
        "delta_bytes": 6 * GiB,
    }


@pytest.mark.parametrize("why", ["no v2 call in the library", "v2 not supported by the driver"])
def test_without_the_v2_memory_call_it_falls_back_to_v1_and_says_so(tmp_path, fake_nvml_library, why):
    box = FakeGpuBox(tmp_path / "old-driver", fake_nvml_library, v2=why != "no v2 call in the library")
    box.devices((UUID0, H100, [2 * GiB, 5 * GiB]))
    if why == "v2 not supported by the driver":
        box.fail("v2", 3)
    report = box.sample(0.01, 4)
    assert report["measured"] and report["memory_api"] == "v1"
    # v1's `used` counts the driver-reserved memory (the stand-in's 300 MiB), as on a real driver.
    assert report["devices"][0]["peak_bytes"] == 5 * GiB + 300 * MiB
    expected = "NVMLError_FunctionNotFound" if why == "no v2 call in the library" else "NVMLError_NotSupported"
    assert len(report["notes"]) == 1
    assert "driver-reserved" in report["notes"][0] and expected in report["notes"][0]


@pytest.mark.parametrize(
    ("call", "code", "reason"),
    [
        ("init", 9, "NVIDIA driver is not loaded"),
        ("init", 4, "no permission to query the GPU through NVML"),
        ("memory", 3, "GPU memory queries are not supported on this device"),
        ("memory", 13, "the NVIDIA driver is too old for this NVML call"),
        ("init", 999, "NVML error: NVMLError_Unknown: Unknown Error"),
    ],
)
def test_each_nvml_error_the_sampler_names_reads_as_its_reason(box, call, code, reason):
    box.devices((UUID0, H100, [GiB])).fail(call, code)
    report = box.sample(0.01, 1)
    assert report["measured"] is False and report["reason"] == reason
    assert report["devices"] == [] and report["memory_api"] is None


def test_an_error_code_the_sampler_does_not_name_reads_through_the_librarys_own_words(box):
    box.devices((UUID0, H100, [GiB])).fail("init", 25)  # nvmlErrorString answers from the stand-in
    report = box.sample(0.01, 1)
    assert report["reason"] == "NVML error: NVMLError_ArgumentVersionMismatch: Argument version mismatch"


def test_no_library_and_no_gpu_are_reasons(box, tmp_path):
    box.devices()  # a driver that sees no GPU
    assert box.sample(0.01, 1)["reason"] == "no NVIDIA GPU found by NVML"
    bare = FakeGpuBox(tmp_path / "no-driver", box_library(box))
    bare.library_dir = tmp_path / "empty"  # the lookup by soname finds nothing
    bare.library_dir.mkdir()
    report = bare.sample(0.01, 1)
    assert report["reason"] == "NVML library not found (no NVIDIA driver installed on this machine)"


def box_library(box: FakeGpuBox):
    from tests.support.fake_nvml import FakeNvmlLibrary

    return FakeNvmlLibrary(box.library_dir, box.library_dir)


def test_a_gpu_that_disappears_mid_run_keeps_the_peak_so_far_and_says_when_sampling_stopped(box):
    box.devices((UUID0, H100, [2 * GiB, 4 * GiB, 6 * GiB, 6 * GiB, 6 * GiB, 1 * GiB]))
    report = box.sample(0.01, 100, lose_after=4)
    assert report["measured"] is True and report["devices"][0]["peak_bytes"] == 6 * GiB
    assert report["devices"][0]["baseline_bytes"] == 2 * GiB
    (stopped,) = [n for n in report["notes"] if n.startswith("sampling stopped after")]
    taken = int(stopped.split()[3])
    assert taken >= 4 and taken == report["samples"]
    assert stopped.endswith(": NVML error: NVMLError_GpuIsLost: GPU is lost")


def test_the_test_process_itself_never_loads_the_stand_in():
    import sys

    from compare_tui.engine.gpu import nvml_unavailable

    assert "COMPARE_TUI_FAKE_NVML" not in __import__("os").environ
    nvml_unavailable.cache_clear()
    try:
        assert nvml_unavailable() is not None or "pynvml" in sys.modules  # this machine: no GPU
    finally:
        nvml_unavailable.cache_clear()
