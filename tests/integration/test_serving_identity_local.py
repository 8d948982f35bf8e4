"""Serving identity against the real llama-server: what it says it loaded and how it is
configured, checked and recorded at every run start.

One server of its own (SmolLM2, `--threads 1`), restarted with other settings mid-test, as a
user restarts theirs: pins that belong to another model are refused at `models add` and at `run`
(exit 2, nothing stored); after a restart with `-c 8192 -np 1 --no-jinja` the next run carries a
caveat listing the three differences, `--strict-serving` refuses it, `reproduce` lists them, and
the experiment arm whose runs straddle the restart shows the confound banner.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from compare_tui.catalogue import Catalogue, ModelEntry, load_catalogue, write_catalogue
from compare_tui.catalogue.pinning import pin_weights, weight_files
from compare_tui.local.bundled import bundled_model, ensure_model
from compare_tui.local.server import free_port, server_cmdline, start, wait_healthy
from compare_tui.store import Store
from tests.core.experiment.test_experiment_helpers import cli
from tests.support.builders import write_set

pytestmark = pytest.mark.integration

ALIAS = "smol"


class OwnServer:
    """One llama-server on a fixed loopback port, restartable with other settings."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.port = tmp, free_port()
        self.model_file = ensure_model(bundled_model("smollm2-135m")).path
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def serve(self, *, ctx: int, parallel: int, jinja: bool) -> None:
        self.stop()
        argv = server_cmdline(
            self.model_file, name=ALIAS, port=self.port, ctx=ctx, parallel=parallel, jinja=jinja, threads=1
        )
        log = self.tmp / f"server-{ctx}-{parallel}-{jinja}.log"
        self.proc = start(argv, log)
        wait_healthy(self.proc, name=ALIAS, port=self.port, log_path=log, timeout_s=180)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


@pytest.fixture
def server(tmp_path):
    own = OwnServer(tmp_path)
    own.serve(ctx=2048, parallel=2, jinja=True)
    try:
        yield own
    finally:
        own.stop()


def _add(server: OwnServer, name: str, weights_dir: Path, catalogue: Path):
    return cli(
        "models", "add", name, "--endpoint", server.url, "--model", ALIAS, "--weights-dir", str(weights_dir),
        "--revision", "x", "--usd-per-hour", "0.1", "--models", str(catalogue),
    )  # fmt: skip


def test_pins_of_another_model_are_refused_at_add_and_at_run(server, tmp_path):
    gemma = ensure_model(bundled_model("gemma3-270m")).path
    catalogue, store = tmp_path / "models.toml", tmp_path / "runs.sqlite"
    added = _add(server, "ghost2", gemma.parent, catalogue)
    assert added.code == 2, added.out
    assert str(server.model_file) in added.err and gemma.name in added.err and "not added" in added.err
    assert not catalogue.exists() or "ghost2" not in load_catalogue(catalogue)

    # The same pins written by hand (an edited catalogue): the run is refused before any request.
    root, files = weight_files(gemma.parent, [])
    pins = pin_weights(root, files)
    ghost = ModelEntry.model_validate(
        {
            "name": "ghost2",
            "kind": "local",
            "endpoint": server.url,
            "model": ALIAS,
            "revision": "x",
            "weights_dir": str(root),
            "files": pins.files,
            "weights_digest": pins.digest,
            "cost": {"basis": "hardware", "usd_per_hour": 0.1},
        }
    )
    write_catalogue(Catalogue(models=(ghost,)), catalogue)
    goldset = write_set(tmp_path / "set", {"t1": "ok"})
    refused = cli("run", str(goldset), "--model", "ghost2", "--models", str(catalogue), "--store", str(store))
    assert refused.code == 2
    assert "refused" in refused.err and str(server.model_file) in refused.err and "nothing was sent" in refused.err
    with Store.open(store) as s:
        assert s.list_runs() == [] and s.list_comparisons() == []


def test_a_restart_with_other_settings_is_a_caveat_a_strict_refusal_a_reproduce_difference_and_a_confound(
    server, tmp_path
):
    catalogue, store = tmp_path / "models.toml", str(tmp_path / "runs.sqlite")
    assert _add(server, ALIAS, server.model_file.parent, catalogue).code == 0
    serving = load_catalogue(catalogue).get(ALIAS).serving
    assert (serving.context_size, serving.extra["parallel_slots"], serving.extra["template_mode"]) == (
        1024,
        "2",
        "jinja",
    )
    goldset = str(write_set(tmp_path / "set", {"t1": "ok", "t2": "hello"}, max_tokens=8))
    made = cli(
        "experiment", "new", "e1", goldset, "--arm", ALIAS, "--arm", f"{ALIAS} max_tokens=4", "--repeats", "1",
        "--concurrency", "1",
        "--models", str(catalogue), "--store", store,
    )  # fmt: skip
    assert made.code == 0, made.err
    first = cli("experiment", "run", "e1", "--json", "--models", str(catalogue), "--store", store)
    assert first.code == 0, first.err

    server.serve(ctx=8192, parallel=1, jinja=False)

    strict = cli("run", goldset, "--model", ALIAS, "--strict-serving", "--models", str(catalogue), "--store", store)
    assert strict.code == 2
    for difference in ("context per slot 1024 → 8192", "slots 2 → 1", "template mode jinja → legacy (--no-jinja)"):
        assert difference in strict.err
    assert "models add smol" in strict.err

    second = cli("experiment", "run", "e1", "--repeats", "2", "--json", "--models", str(catalogue), "--store", store)
    assert second.code == 0, second.err
    with Store.open(Path(store)) as s:
        runs = sorted(s.list_runs(), key=lambda r: r.created_at)
    assert len(runs) == 4  # two per arm: the strict refusal stored nothing
    a, b = [r for r in runs if r.settings["max_tokens"] == 8]
    assert b.provenance == "verified" and b.serving[-1]["fingerprint"]["template_mode"] == "legacy (--no-jinja)"

    doc = json.loads(cli("report", b.id, "--store", store, "--format", "json").out)
    caveat = next(c["text"] for c in doc["caveats"] if c["code"] == "serving_differs")
    assert "context per slot 1024 → 8192; slots 2 → 1; template mode jinja → legacy (--no-jinja)" in caveat
    assert doc["models"][0]["serving"]["loaded_check"]["status"] == "matched"
    rows = {r["label"]: r["value"] for r in doc["models"][0]["serving"]["rows"]}
    assert (rows["context per slot"], rows["slots"], rows["quantisation"]) == ("8192", "1", "Q4_1")

    reproduce = json.loads(cli("reproduce", a.id, b.id, "--store", store, "--json").out)
    found = {d["what"]: (d["a"], d["b"]) for d in reproduce["differences"]}
    assert found["serving context per slot"] == ("1024", "8192")
    assert found["serving slots"] == ("2", "1")
    assert found["serving template mode"] == ("jinja", "legacy (--no-jinja)")

    banner = cli("experiment", "show", "e1", "--store", store).out
    assert banner.startswith("⚠ CONFOUND") and "serving context per slot differs across its runs" in banner
    assert "1024 (run " in banner and "8192 (run " in banner
