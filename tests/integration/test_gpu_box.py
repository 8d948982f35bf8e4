"""A "GPU box" end to end, on a machine without a GPU: a bundled model on a real llama-server
(`local up`), a run whose engine loads the project's stand-in `libnvidia-ml.so.1` through the
real nvidia-ml-py (tests/support/fake_nvml.c), then the report (text, Markdown, JSON) and the
published page, each reading the peak the stand-in scripted, where it was read and on which
device, with the cost basis beside it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.fake_nvml import REPO, FakeGpuBox, GiB

SET = REPO / "sample_sets" / "support-triage"
UUID = "GPU-11111111-2222-3333-4444-555555555555"
NAME = "Fake H100 80GB HBM3"
LINE = f"high-water mark 5.00 GiB on {NAME} (NVML on this machine, 1 device: {UUID})"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=900, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def gpu_box_run(local_cluster, fake_nvml_library, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu-box")
    # Memory in use: 2 GiB before the first request, 5 GiB at the height of the run, then 3 GiB.
    box = FakeGpuBox(tmp / "box", fake_nvml_library).devices((UUID, NAME, [2 * GiB, 5 * GiB, 3 * GiB]))
    env = box.environ()
    store = tmp / "runs.sqlite"
    catalogue = str(local_cluster.catalogue_path)
    summary = cli(
        env,
        "run",
        str(SET),
        "--model",
        "smollm2-135m",
        "--models",
        catalogue,
        "--store",
        str(store),
        "--json",
        "--max-tokens",
        "16",
    )
    return env, store, json.loads(summary.stdout)["comparison"], tmp


def test_the_report_reads_the_peak_from_nvml_with_its_device_and_the_cost_basis_says_what_was_stated(gpu_box_run):
    env, store, comparison, _ = gpu_box_run
    doc = json.loads(cli(env, "report", comparison, "--store", str(store), "--format", "json").stdout)
    (row,) = doc["models"]
    gpu = row["gpu_memory"]
    assert (gpu["measured"], gpu["source"], gpu["host"], gpu["devices"]) == (True, "nvml", None, 1)
    assert (gpu["peak_bytes"], gpu["baseline_bytes"]) == (5 * GiB, 2 * GiB)
    assert (gpu["uuids"], gpu["device_names"], gpu["notes"]) == ([UUID], [NAME], [])
    markdown = cli(env, "report", comparison, "--store", str(store), "--format", "md").stdout
    assert "| 5.00 GiB |" in markdown and LINE in markdown
    # The bundled servers run on the CPU, and `local up` says so (gpu_count = 0); the GPU the
    # engine sampled is named beside that, not hidden by it.
    assert "/h (no GPU stated; 1 measured)" in markdown
    text = " ".join(cli(env, "report", comparison, "--store", str(store)).stdout.split())
    assert LINE in text


def test_the_published_page_shows_the_same_gpu_row(gpu_box_run):
    env, store, comparison, tmp = gpu_box_run
    cli(env, "publish", comparison, "--out", str(tmp / "bundle"), "--store", str(store))
    page = (tmp / "bundle" / "index.html").read_text(encoding="utf-8")
    assert f"<dt>GPU memory</dt><dd>{LINE}</dd>" in page
    assert "(no GPU stated; 1 measured)" in page
    report = json.loads((tmp / "bundle" / "report.json").read_text(encoding="utf-8"))
    assert report["models"][0]["gpu_memory"]["peak_bytes"] == 5 * GiB
