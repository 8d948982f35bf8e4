"""A real whole-run replay: the committed agent log (bench/agent_replay), sampled whole, run
against the embedded llama.cpp models, reported with the run-level figures.

Integration tier (`-m integration`): the session's `local_cluster` fixture serves the models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare_tui.goldset import load_golden_set
from compare_tui.sampling import SampleOptions, sample_runs, write_sampled_set

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "bench" / "agent_replay" / "agent-log.jsonl"


@pytest.mark.integration
def test_the_agent_log_replays_against_the_local_models(local_cluster, tmp_path):
    out = write_sampled_set(sample_runs([LOG], SampleOptions(samples=20, text_scorer="exact")), tmp_path / "set")
    goldset = load_golden_set(out)
    runs = {t.trace.run for t in goldset.tasks if t.trace}
    assert len(runs) == 6 and len(goldset.tasks) == 15
    names = [info.name for info in local_cluster.servers]
    store = str(tmp_path / "runs.sqlite")
    args = [
        sys.executable,
        "-m",
        "compare_tui",
        "run",
        str(out),
        "--models",
        str(local_cluster.catalogue_path),
        "--store",
        store,
        "--json",
        "--max-tokens",
        "96",
    ]
    for name in names:
        args += ["--model", name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = subprocess.run(
        [sys.executable, "-m", "compare_tui", "report", "latest", "--store", store, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr[-3000:]
    doc = json.loads(report.stdout)
    assert [t["model"] for t in doc["trajectories"]] == [m["label"] for m in doc["models"]] and len(names) == len(
        doc["models"]
    )
    for fig, model in zip(doc["trajectories"], doc["models"]):
        # Every step was sent as recorded and measured (a tool call or text is scored, never an error).
        assert model["counts"]["error"] == 0 and model["counts"]["missing"] == 0, model["error_classes"]
        assert fig["runs_undecided"] == 0 and fig["runs_driven"]["decided"] == 6
        assert fig["steps"]["kept"] + fig["steps"]["lost"] == 15
        lost = [r for r in fig["runs"] if r["verdict"] == "lost"]
        assert fig["runs_lost"] == len(lost) and all(r["statuses"][r["first_lost_step"] - 1] == "fail" for r in lost)
        print(
            f"\n{fig['model']}: runs driven {fig['runs_driven']['driven']}/{fig['runs_driven']['decided']} "
            f"ci95 {fig['runs_driven']['ci95']}; steps {fig['steps']['kept']}/{fig['steps']['kept'] + fig['steps']['lost']} "
            f"ci95 {fig['steps']['ci95']}; strips {[(r['statuses'], r['first_lost_step']) for r in fig['runs']]}"
        )
