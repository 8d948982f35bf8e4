"""`gpu_count` and the hardware cost basis: read (NVML here, a DCGM exporter) or asked, never
assumed; and the report's words for each case, and for GPU figures read in different places."""

from __future__ import annotations

import subprocess
import sys

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.catalogue.adding import AddRequest, add_model
from compare_tui.cli import main
from compare_tui.engine.gpu import nvml_devices
from compare_tui.report import build_report
from compare_tui.report import formatting as fmt
from tests.core.report.test_report import HARDWARE, inputs, one
from tests.support.builders import models_add_argv
from tests.support.fake_nvml import REPO, FakeGpuBox, GiB
from tests.support.metrics_server import MetricsServer, recorded
from tests.support.scripted_stacks import ScriptedServer, llama_cpp_routes

NVML_GPU = {
    "measured": True,
    "source": "nvml",
    "devices": [{"index": 0, "name": "Fake H100", "uuid": "GPU-1", "peak_bytes": 5 * GiB, "baseline_bytes": 2 * GiB}],
}
DCGM_GPU = NVML_GPU | {"source": "dcgm", "host": "gpu-box:9400"}


@pytest.fixture
def llama():
    with ScriptedServer(llama_cpp_routes("tiny")) as server:
        yield server


@pytest.fixture
def weights(tmp_path):
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "tiny.gguf").write_bytes(b"GGUF" + bytes(range(256)))
    return folder


def test_models_add_on_this_machine_reads_the_gpu_count_from_nvml(tmp_path, weights, llama, capsys):
    path = tmp_path / "models.toml"
    assert main(models_add_argv(llama.url, weights, "--models", str(path))) == 0
    count, reason = nvml_devices()  # this project's machines: 0, "NVML library not found …"
    assert load_catalogue(path).get("tiny").cost.gpu_count == count
    out = capsys.readouterr().out
    assert f"gpu_count = {count}, read by NVML on this machine" in out
    assert reason is None or f"({reason})" in out


def test_on_a_gpu_box_models_add_writes_the_count_nvml_reads(tmp_path, weights, llama, fake_nvml_library):
    box = FakeGpuBox(tmp_path / "box", fake_nvml_library).devices(
        ("GPU-a", "Fake H100", [GiB]), ("GPU-b", "Fake H100", [GiB])
    )
    path = tmp_path / "models.toml"
    done = subprocess.run(
        [sys.executable, "-m", "compare_tui", *models_add_argv(llama.url, weights, "--models", str(path))],
        env=box.environ(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert load_catalogue(path).get("tiny").cost.gpu_count == 2
    assert "gpu_count = 2, read by NVML on this machine (give --gpu-count N" in done.stdout


def test_a_given_count_and_one_read_from_the_metrics_server(tmp_path, weights, llama, capsys):
    given = tmp_path / "given.toml"
    assert main(models_add_argv(llama.url, weights, "--models", str(given), "--gpu-count", "4")) == 0
    assert load_catalogue(given).get("tiny").cost.gpu_count == 4
    assert "gpu_count = 4, as given" in capsys.readouterr().out
    remote = tmp_path / "remote.toml"
    with MetricsServer([recorded("idle")]) as exporter:
        assert (
            main(
                models_add_argv(llama.url, weights, "--models", str(remote), "--note", f"gpu_telemetry={exporter.spec}")
            )
            == 0
        )
    entry = load_catalogue(remote).get("tiny")
    assert entry.cost.gpu_count == 2 and entry.serving.gpu_telemetry == exporter.spec
    assert f"gpu_count = 2, read from the DCGM exporter at 127.0.0.1:{exporter.port}" in capsys.readouterr().out


def test_an_exporter_that_does_not_answer_refuses_the_add_and_a_negative_count_is_refused(
    tmp_path, weights, llama, capsys
):
    path = tmp_path / "models.toml"
    assert (
        main(models_add_argv(llama.url, weights, "--models", str(path), "--note", "gpu_telemetry=dcgm=127.0.0.1:9"))
        == 2
    )
    err = capsys.readouterr().err
    assert "could not be read from dcgm=127.0.0.1:9" in err and "--gpu-count N" in err and not path.exists()
    assert main(models_add_argv(llama.url, weights, "--models", str(path), "--gpu-count", "-1")) == 2
    assert "0 or more" in capsys.readouterr().err and not path.exists()


def test_an_entry_whose_count_nobody_gave_or_read_says_so_and_never_assumes_one(tmp_path, weights, llama):
    path = tmp_path / "models.toml"
    outcome = add_model(
        AddRequest(name="tiny", endpoint=llama.url, weights_dir=weights, revision="v1", usd_per_hour=0.5), path
    )
    assert load_catalogue(path).get("tiny").cost.gpu_count is None
    assert "gpu_count" not in path.read_text()
    assert any(f.startswith("gpu_count not stated") and "--gpu-count N" in f for f in outcome.findings)


@pytest.mark.parametrize(
    ("count", "gpu", "words"),
    [
        (None, None, "hardware $2.00/h (GPU count not stated)"),
        (0, None, "hardware $2.00/h (no GPU)"),
        (1, NVML_GPU, "hardware $2.00/h (1 GPU)"),
        (2, NVML_GPU, "hardware $2.00/h (2 GPUs stated; 1 measured)"),
        (0, NVML_GPU, "hardware $2.00/h (no GPU stated; 1 measured)"),
        (1, {"measured": False, "reason": "NVML library not found"}, "hardware $2.00/h (1 GPU stated; none measured)"),
    ],
)
def test_the_cost_basis_states_the_gpus_as_stated_and_what_was_measured(count, gpu, words):
    basis = {k: v for k, v in HARDWARE.items() if k != "gpu_count"} | ({} if count is None else {"gpu_count": count})
    row = build_report(inputs(one("pp", cost_basis=basis, **({"gpu": gpu} if gpu else {})))).models[0]
    assert fmt.cost_basis(row.cost, row.gpu) == words


def test_figures_read_in_different_places_are_never_mixed_unsaid():
    report = build_report(inputs(one("pp", gpu=NVML_GPU), one("pp", "run-b", "model-b", gpu=DCGM_GPU)))
    a, b = report.models
    assert (fmt.gpu(a.gpu), fmt.gpu(b.gpu)) == ("5.00 GiB", "5.00 GiB (DCGM)")
    assert fmt.gpu_line(a.gpu) == "high-water mark 5.00 GiB on Fake H100 (NVML on this machine, 1 device: GPU-1)"
    (caveat,) = [c for c in report.caveats if c.code == "gpu_sources"]
    assert caveat.text == (
        "GPU memory was read in different places (model-a by NVML on this machine; model-b by DCGM on "
        "gpu-box:9400): each figure is of its own machine."
    )
    same = build_report(inputs(one("pp", gpu=NVML_GPU), one("pp", "run-b", "model-b", gpu=NVML_GPU)))
    assert not [c for c in same.caveats if c.code == "gpu_sources"]
