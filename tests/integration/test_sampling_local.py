"""A sampled set runs through the comparison engine against the real local llama.cpp models.

Integration tier (`-m integration`): needs the `compare-tui[local]` extra; the session's
`local_cluster` fixture serves both bundled models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare_tui.goldset import load_golden_set
from compare_tui.sampling import SampleOptions, sample_logs, write_sampled_set
from compare_tui.store import Store
from tests.core.sampling.test_sampling_builders import DAY, END, conversation, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_a_sampled_set_runs_against_both_local_models(local_cluster, tmp_path):
    # Short chats, so every replayed conversation fits the servers' per-slot context.
    records = [
        r for i in range(6) for r in conversation(f"c{i}", 4, END - i * DAY, text=f"Contact me at user{i}@example.com.")
    ]
    log = write_jsonl(tmp_path / "traffic.jsonl", records)
    out = write_sampled_set(sample_logs([log], SampleOptions(samples=8, seed="local")), tmp_path / "set")
    goldset = load_golden_set(out)
    names = [info.name for info in local_cluster.servers]
    args = [
        sys.executable,
        "-m",
        "compare_tui",
        "run",
        str(out),
        "--models",
        str(local_cluster.catalogue_path),
        "--store",
        str(tmp_path / "runs.sqlite"),
        "--json",
        "--max-tokens",
        "64",
    ]
    for name in names:
        args += ["--model", name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert len(summary["runs"]) == len(names)
    with Store.open(tmp_path / "runs.sqlite") as store:
        for run in store.list_runs():
            attempts = store.attempts_for_run(run.id)
            assert run.status == "completed" and len(attempts) == len(goldset.tasks)
            # Every replayed conversation was accepted and answered: scored, never an error.
            assert {a.outcome for a in attempts} <= {"pass", "fail", "review"}, [
                (a.task_id, a.outcome, a.error) for a in attempts
            ]
