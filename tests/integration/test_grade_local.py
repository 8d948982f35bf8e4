"""`compare-tui grade` with a bundled judge through real llama.cpp (integration tier): Qwen2.5-Coder
0.5B grades the order-extraction runs of the two session models on the 1–5 quality rubric.

A 0.5B judge is no oracle: this checks the pipeline end to end (every answer graded or counted
as a failed call, the figures and Δ computed, the judge's calls in the audit ledger apart from
the runs, and a second `grade` asking nothing), not the grades' quality.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from compare_tui.cli import main

pytestmark = pytest.mark.integration

QWEN = "qwen2.5-coder-0.5b"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_sets" / "order-extraction"
KEEP = 6
"""Tasks of the sample set the test runs and grades (its first six by name: JSON extraction and
unit conversion alike). The pipeline is the same for six as for twelve; a 0.5B judge on 2 cores
spends about 4 s a grade, so the other six would only add time."""


@pytest.fixture(scope="module")
def qwen(qwen_cluster):
    return qwen_cluster


def test_a_bundled_judge_grades_two_runs_and_a_second_grade_asks_nothing(qwen, tmp_path, capsys):
    store, models = tmp_path / "runs.sqlite", str(qwen.catalogue_path)
    goldset = shutil.copytree(SAMPLE, tmp_path / "set")
    for extra in sorted((goldset / "tasks").iterdir())[KEEP:]:
        extra.unlink()
    code = main(
        [
            "run",
            str(goldset),
            "--baseline",
            "smollm2-135m",
            "--model",
            "gemma3-270m",
            "--json",
            "--models",
            models,
            "--store",
            str(store),
        ]
    )
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    summary = json.loads(captured.out)
    assert code in (0, 1), summary
    runs = [r["id"] for r in summary["runs"]]
    args = [
        "grade",
        *runs,
        "--judge",
        QWEN,
        "--max-tokens",
        "64",
        "--models",
        models,
        "--store",
        str(store),
        "--format",
        "json",
    ]
    code = main(args)
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    out = json.loads(captured.out)
    assert code in (0, 1), out
    assert out["judge"]["model"] == QWEN and out["judge"]["provenance"] == "verified"
    assert out["baseline"]["model"] == "smollm2-135m"  # the comparison's baseline, without --reference
    tasks = len(list((goldset / "tasks").iterdir()))
    for graded in out["runs"]:
        f = graded["figures"]
        assert f["graded"] + f["failed"] + f["not_graded"] == tasks
        assert f["graded"] >= tasks // 2, graded  # the judge gives a readable grade to most answers
        assert sum(f["distribution"].values()) == f["graded"] and 1 <= f["mean"] <= 5
    gemma = next(g for g in out["runs"] if g["model"] == "gemma3-270m")
    assert gemma["delta_vs_baseline"]["tasks"] > 0
    calls = out["judge_usage"]["calls"]
    assert calls == 2 * tasks and out["judge_usage"]["prompt_tokens"] > 0
    conn = sqlite3.connect(store)
    judge_rows = conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NULL").fetchone()[0]
    assert judge_rows >= calls  # every judge request (retries too) is a row of no run
    print(
        json.dumps({r["model"]: r["figures"] | {"delta": r["delta_vs_baseline"]} for r in out["runs"]}), file=sys.stderr
    )  # the figures, for the record (pytest -s)
    failed = sum(g["figures"]["failed"] for g in out["runs"])
    main(args)
    capsys.readouterr()
    asked = conn.execute("SELECT COUNT(*) FROM audit WHERE run_id IS NULL").fetchone()[0] - judge_rows
    assert asked == 0 if failed == 0 else asked >= failed  # only failed calls are asked again
