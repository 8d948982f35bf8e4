"""Whole-run replay end to end on loopback: sample agent runs whole, run them against a scripted
candidate that loses exactly one step of one run, and read the figures every surface shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from compare_tui.cli import main
from tests.core.sampling.test_sampling_builders import END, agent_run, write_jsonl
from tests.support.fake_openai import FakeServer, ToolCall, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]
RUNS = {"alpha": 3, "bravo": 4, "charlie": 2}
LOSES = ("bravo", 2)
"""The one step (run, 1-based step) the scripted candidate gets wrong."""


def _candidate(body: dict, _count: int):
    """Acts as the recorded agent did (see `agent_run`), except at `LOSES`."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    cid = next(name for name in RUNS if f"({name})" in user)
    step = sum(1 for m in body["messages"] if m["role"] == "assistant") + 1
    if step == RUNS[cid]:
        return text(f"Done: {cid} refunded.")
    if step == 1:
        return tool_calls(ToolCall("find_order", {"email": "[REDACTED:email]"}))
    amount = 99 if (cid, step) == LOSES else 10 * (step - 1)
    return tool_calls(
        ToolCall("refund", {"order": f"{cid}-o{step - 1}", "amount": amount, "note": "extra keys pass under subset"})
    )


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compare_tui", *args], env=env, capture_output=True, text=True, timeout=180
    )


def test_a_candidate_that_loses_one_step_loses_that_run_only(tmp_path, capsys):
    records = [r for i, (cid, steps) in enumerate(RUNS.items()) for r in agent_run(cid, steps, END - i * 600)]
    log = write_jsonl(tmp_path / "agent.jsonl", records)
    assert main(["sample", str(log), "--whole-runs", "--out", str(tmp_path / "set"), "--text-scorer", "exact"]) == 0
    capsys.readouterr()
    with FakeServer(_candidate) as server:
        catalogue = tmp_path / "models.toml"
        catalogue.write_text(
            f'[[model]]\nname = "fake"\nkind = "hosted"\nendpoint = "{server.url}"\nmodel = "fake-model"\nrevision = "r1"\n'
            f'weights_digest = "sha256:{"0" * 64}"\n[model.cost]\nbasis = "token_price"\nusd_per_mtok_input = 1.0\n'
            'usd_per_mtok_output = 2.0\ncaptured = "2026-12-01"\nsource = "test"\n'
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPARE_TUI_")} | {
            "PYTHONPATH": str(ROOT),
            "COMPARE_TUI_STATE_DIR": str(tmp_path / "state"),
        }
        store = str(tmp_path / "runs.sqlite")
        done = _cli(
            env, "run", str(tmp_path / "set"), "--model", "fake", "--models", str(catalogue), "--store", store, "--json"
        )
        assert done.returncode in (0, 1), done.stderr
        chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == sum(RUNS.values())
    report = _cli(env, "report", "latest", "--store", store, "--format", "json")
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    (fig,) = doc["trajectories"]
    assert fig["runs_driven"]["driven"] == 2 and fig["runs_driven"]["decided"] == 3
    assert fig["runs_lost"] == 1 and fig["runs_undecided"] == 0
    assert (fig["steps"]["kept"], fig["steps"]["lost"], fig["steps"]["not_measured"]) == (8, 1, 0)
    lost = [r for r in fig["runs"] if r["verdict"] == "lost"]
    assert len(lost) == 1 and lost[0]["first_lost_step"] == LOSES[1] and len(lost[0]["statuses"]) == RUNS[LOSES[0]]
    assert sorted(len(r["statuses"]) for r in fig["runs"]) == sorted(RUNS.values())
    assert any(c["code"] == "replay" for c in doc["caveats"])
    text_report = _cli(env | {"COLUMNS": "80"}, "report", "latest", "--store", store)
    assert "runs driven without losing a step: 2 of 3 runs (66.7%" in text_report.stdout
    assert f"lost at step {LOSES[1]}" in text_report.stdout
