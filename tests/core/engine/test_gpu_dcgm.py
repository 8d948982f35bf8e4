"""A remote GPU read from its DCGM exporter: the spec, the exposition reader, the sampler against a
real loopback HTTP server serving recorded exposition text (and a malformed one), and a run with
`--gpu-telemetry` whose report says where the figure came from."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.catalogue.models import ServingNotes
from compare_tui.catalogue.refusals import combined_digest
from compare_tui.endpoint.dcgm import dcgm_devices, parse_gpu_telemetry
from compare_tui.engine.gpu import GpuSampler
from compare_tui.engine.gpu_dcgm import DcgmSampler, memory_sampler
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text
from tests.support.metrics_server import MetricsServer, recorded

MiB = 1 << 20
GPU0 = "GPU-a1b2c3d4-0000-1111-2222-333344445555"
GPU1 = "GPU-a1b2c3d4-6666-7777-8888-9999aaaabbbb"
ROOT = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------ the spec


@pytest.mark.parametrize(
    ("spec", "host", "port"),
    [
        ("dcgm=gpu-box:9400", "gpu-box", 9400),
        ("dcgm=10.0.0.7:9401", "10.0.0.7", 9401),
        ("dcgm=[::1]:9400", "[::1]", 9400),
    ],
)
def test_a_telemetry_spec_names_the_exporter(spec, host, port):
    telemetry = parse_gpu_telemetry(spec)
    assert (telemetry.host, telemetry.port, telemetry.spec) == (host, port, spec)
    assert telemetry.url == f"http://{host}:{port}/metrics"


@given(st.text(max_size=40))
def test_any_other_spec_is_refused_with_what_to_write(spec):
    try:
        telemetry = parse_gpu_telemetry(spec)
    except ValueError as exc:
        assert "dcgm=HOST:PORT" in str(exc)
    else:
        assert parse_gpu_telemetry(telemetry.spec) == telemetry and 0 < telemetry.port < 65536


@pytest.mark.parametrize("spec", ["gpu-box:9400", "dcgm=gpu-box", "dcgm=gpu-box:0", "dcgm=gpu-box:99999", "nvml"])
def test_the_catalogue_refuses_a_malformed_gpu_telemetry(spec):
    with pytest.raises(ValueError, match="dcgm=HOST:PORT"):
        ServingNotes.model_validate({"gpu_telemetry": spec})
    assert ServingNotes.model_validate({"gpu_telemetry": " dcgm=gpu-box:9400"}).gpu_telemetry == "dcgm=gpu-box:9400"


# ------------------------------------------------------------------ the exposition


def test_the_recorded_exposition_reads_each_gpu_by_uuid_in_bytes():
    devices = dcgm_devices(recorded("peak"))
    assert [(d.index, d.uuid, d.name, d.hostname, d.used_bytes) for d in devices] == [
        ("0", GPU0, "NVIDIA H100 80GB HBM3", "gpu-box-1", 24576 * MiB),
        ("1", GPU1, "NVIDIA H100 80GB HBM3", "gpu-box-1", 19000 * MiB),
    ]


def test_a_malformed_exposition_or_one_without_framebuffer_figures_is_a_value_error():
    with pytest.raises(ValueError, match="metrics line 16"):
        dcgm_devices(recorded("malformed"))
    with pytest.raises(ValueError, match="no DCGM_FI_DEV_FB_USED"):
        dcgm_devices('vllm:kv_cache_usage_perc{model_name="m"} 0.25\n')
    with pytest.raises(ValueError, match="not a size in MiB"):
        dcgm_devices(f'DCGM_FI_DEV_FB_USED{{UUID="{GPU0}"}} NaN\n')


# ------------------------------------------------------------------ the sampler, over HTTP


def sample(exporter: MetricsServer, reads: int):
    sampler = DcgmSampler(parse_gpu_telemetry(exporter.spec), interval_s=0.01)
    started = sampler.start()
    while started and exporter.requests < reads:
        pass
    return started, sampler.stop()


def test_the_sampler_reads_baseline_and_peak_of_every_gpu_the_exporter_lists():
    pages = [recorded("idle"), recorded("serving"), recorded("peak"), recorded("serving")]
    with MetricsServer(pages) as exporter:
        started, report = sample(exporter, 4)
    assert started and report.measured and report.reason is None
    assert report.source == "dcgm" and report.host == f"127.0.0.1:{exporter.port}"
    assert report.samples >= 4 and report.notes == []
    assert [(d["uuid"], d["hostname"], d["baseline_bytes"], d["peak_bytes"]) for d in report.devices] == [
        (GPU0, "gpu-box-1", 0, 24576 * MiB),
        (GPU1, "gpu-box-1", 0, 19000 * MiB),
    ]
    assert report.devices[0]["delta_bytes"] == 24576 * MiB


@pytest.mark.parametrize(
    ("pages", "status", "words"),
    [
        ([recorded("malformed")], 200, "answered no GPU memory figures (metrics line 16"),
        (["<html>not metrics</html>"], 200, "answered no GPU memory figures"),
        ([recorded("peak")], 500, "did not answer (HTTPStatusError"),
    ],
)
def test_an_exporter_that_answers_no_figures_is_a_reason_not_a_crash(pages, status, words):
    with MetricsServer(pages, status=status) as exporter:
        started, report = sample(exporter, 1)
    assert not started and not report.measured and report.devices == []
    assert report.reason.startswith(f"the DCGM exporter at 127.0.0.1:{exporter.port} ") and words in report.reason


def test_an_exporter_that_is_not_there_is_a_reason():
    with MetricsServer([recorded("idle")]) as exporter:
        spec = exporter.spec  # the port is free again once it stops
    report = DcgmSampler(parse_gpu_telemetry(spec), interval_s=0.01)
    assert report.start() is False
    assert "did not answer (ConnectError" in report.stop().reason


def test_a_read_that_fails_mid_run_is_counted_and_sampling_goes_on():
    pages = [recorded("serving"), recorded("malformed"), recorded("peak")]
    with MetricsServer(pages) as exporter:
        started, report = sample(exporter, 4)
    assert started and report.measured and report.devices[0]["peak_bytes"] == 24576 * MiB
    (note,) = report.notes
    assert note.startswith(f"1 of {report.samples + 1} reads failed, the first: the DCGM exporter")


def test_the_run_picks_dcgm_when_telemetry_is_named_else_nvml():
    assert isinstance(memory_sampler("dcgm=gpu-box:9400"), DcgmSampler)
    assert isinstance(memory_sampler(None), GpuSampler)


# ------------------------------------------------------------------ a run, end to end


def _local_catalogue(tmp_path: Path, url: str, telemetry: str | None) -> Path:
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "model.gguf").write_bytes(b"weights")
    files = {"model.gguf": "sha256:" + hashlib.sha256(b"weights").hexdigest()}
    serving = f'gpu_telemetry = "{telemetry}"\n' if telemetry else ""
    path = tmp_path / "models.toml"
    path.write_text(
        f"""[[model]]
name = "remote-gpu"
kind = "local"
endpoint = "{url}"
model = "fake-model"
revision = "r1"
weights_digest = "{combined_digest(files)}"
weights_dir = "weights"
files = {{ "model.gguf" = "{files["model.gguf"]}" }}
[model.serving]
{serving}[model.cost]
basis = "hardware"
usd_per_hour = 4.0
gpu_count = 2
"""
    )
    return path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")}
    env |= {"PYTHONPATH": str(ROOT), "COMPARE_TUI_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("where", ["flag", "catalogue"])
def test_a_run_with_gpu_telemetry_reports_the_remote_peak_and_where_it_came_from(tmp_path, where):
    goldset = write_set(tmp_path / "set", {f"t{i}": "ok" for i in range(4)})
    store = tmp_path / "runs.sqlite"
    pages = [recorded("idle"), recorded("serving"), recorded("peak"), recorded("serving")]
    # Each answer waits half a second, so the run spans several of the sampler's 0.1 s reads
    # whatever the machine's load: the peak page (the exporter's third) is read during the run.
    with FakeServer(default=text("ok", headers_delay_s=0.5)) as server, MetricsServer(pages) as exporter:
        models = _local_catalogue(tmp_path, server.url, exporter.spec if where == "catalogue" else None)
        flag = ["--gpu-telemetry", exporter.spec] if where == "flag" else []
        done = _run(
            tmp_path,
            "run",
            str(goldset),
            "--model",
            "remote-gpu",
            "--models",
            str(models),
            "--store",
            str(store),
            "--json",
            *flag,
        )
        assert done.returncode == 0, done.stderr
    comparison = json.loads(done.stdout)["comparison"]
    report = _run(tmp_path, "report", comparison, "--store", str(store), "--format", "json")
    assert report.returncode == 0, report.stderr
    (row,) = json.loads(report.stdout)["models"]
    gpu = row["gpu_memory"]
    assert gpu["measured"] and gpu["source"] == "dcgm" and gpu["host"] == f"127.0.0.1:{exporter.port}"
    assert gpu["peak_bytes"] == (24576 + 19000) * MiB and gpu["uuids"] == [GPU0, GPU1]
    words = _run(tmp_path, "report", comparison, "--store", str(store)).stdout
    flat = " ".join(words.split())
    assert "42.55 GiB (DCGM)" in flat, words
    assert (
        f"high-water mark 42.55 GiB on NVIDIA H100 80GB HBM3 (DCGM on 127.0.0.1:{exporter.port}, 2 devices: {GPU0}, {GPU1})"
        in flat
    )
    assert f"served on the host of the DCGM exporter 127.0.0.1:{exporter.port}" in flat
    assert "cost hold for that machine" in flat
    assert "hardware $4.00/h (2 GPUs)" in flat


def test_a_malformed_gpu_telemetry_flag_is_one_line(tmp_path):
    goldset = write_set(tmp_path / "set", {"t0": "ok"})
    done = _run(
        tmp_path,
        "run",
        str(goldset),
        "--model",
        "x",
        "--gpu-telemetry",
        "gpu-box:9400",
        "--store",
        str(tmp_path / "s.sqlite"),
    )
    assert done.returncode == 2 and "--gpu-telemetry: GPU telemetry is written dcgm=HOST:PORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_live_screen_says_before_the_run_where_a_remote_gpu_will_be_read():
    from compare_tui.engine.events import ModelsResolved
    from compare_tui.tui.engine_bridge import TallyObserver
    from compare_tui.tui.live_tally import LiveTally
    from compare_tui.vocabulary import ModelKind

    tally = LiveTally([])
    kinds = {"remote": ModelKind.LOCAL, "hosted": ModelKind.HOSTED}
    TallyObserver(tally, lambda message: None).on_event(ModelsResolved(kinds, {"remote": "dcgm=gpu-box:9400"}))
    lines = {view.model_name: view.gpu for view in tally.snapshot()}
    assert lines["remote"] == "being read from dcgm=gpu-box:9400 by the engine; the peak shows when the run ends"
    assert lines["hosted"].startswith("n/a (hosted")
