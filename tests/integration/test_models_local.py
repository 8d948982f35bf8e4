"""`models add` against the real llama-server of the embedded default, end to end: a model added
from a weights folder and its running server runs `verified`; one changed byte in a weights file
makes `models verify` exit 1 and `run` refuse, each naming the file (and `run` the fixing command).

The weights are a *copy* of the bundled GGUF in a temp folder (the server keeps serving the
original): the shared assembled models are never modified.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.store import Store
from tests.goldset_factory import make_set, manifest_data

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MODEL = "smollm2-135m"


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "compare_tui", *argv], env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def added(local_cluster, tmp_path_factory):
    """(catalogue, weights file copy, golden set, store) after `models add mine` from a copy of
    smollm2's weights folder and its running server."""
    tmp = tmp_path_factory.mktemp("models-add-local")
    server = local_cluster.server(MODEL)
    weights = tmp / "weights"
    weights.mkdir()
    copy = Path(shutil.copy2(server.model_file, weights / server.model_file.name))
    catalogue = tmp / "models.toml"
    catalogue.write_text("# my own catalogue (this comment stays)\n")
    done = cli(
        "models",
        "add",
        "mine",
        "--endpoint",
        server.endpoint,
        "--model",
        MODEL,
        "--weights-dir",
        str(weights),
        "--revision",
        "copy-1",
        "--usd-per-hour",
        "0.1",
        "--models",
        str(catalogue),
    )
    assert done.returncode == 0, done.stderr
    assert "added mine" in done.stdout and "1 file(s) pinned" in done.stdout
    goldset = make_set(tmp / "set", manifest=manifest_data(run={"attempts": 1, "temperature": 0.0, "max_tokens": 8}))
    return catalogue, copy, goldset, tmp / "runs.sqlite"


def test_models_add_reads_the_server_and_pins_the_file(added, local_cluster):
    catalogue, copy, _, _ = added
    assert catalogue.read_text().startswith("# my own catalogue (this comment stays)\n")
    entry = load_catalogue(catalogue).get("mine")
    assert entry.files == {copy.name: f"sha256:{local_cluster.server(MODEL).sha256}"}
    assert entry.weights_dir == copy.parent and entry.revision == "copy-1"
    assert entry.serving.stack and "llama.cpp" in entry.serving.stack
    assert entry.serving.build and entry.serving.context_size  # read from /props
    assert entry.serving.notes and "read from the server" in entry.serving.notes


def test_a_run_of_the_added_model_is_verified_then_one_changed_byte_is_refused(added):
    catalogue, copy, goldset, store = added
    ran = cli("run", str(goldset), "--model", "mine", "--models", str(catalogue), "--store", str(store), "--json")
    assert ran.returncode == 0, ran.stderr[-3000:]
    [summary] = json.loads(ran.stdout)["runs"]
    with Store.open(store) as opened:
        run = opened.get_run(summary["id"])
        assert run.provenance == "verified"  # weights hashed this run and matched the pins
        assert run.model_name == "mine" and run.status == "completed"
    verified = cli("models", "verify", "mine", "--models", str(catalogue))
    assert verified.returncode == 0 and verified.stdout.startswith("mine: verified, 1 file(s)")

    with open(copy, "r+b") as handle:  # one byte, in the middle of the copy
        handle.seek(copy.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))

    drift = cli("models", "verify", "mine", "--models", str(catalogue))
    assert drift.returncode == 1
    assert "mine: DRIFT" in drift.stdout and f"changed: {copy.name} is pinned as" in drift.stdout

    refused = cli("run", str(goldset), "--model", "mine", "--models", str(catalogue), "--store", str(store))
    assert refused.returncode == 2
    assert copy.name in refused.stderr and "changed" in refused.stderr
    assert "compare-tui models verify mine" in refused.stderr  # the fixing commands
    assert f"compare-tui models add mine --endpoint {load_catalogue(catalogue).get('mine').endpoint}" in refused.stderr
    with Store.open(store) as opened:
        assert len(opened.list_runs()) == 1  # the refused run wrote nothing
