"""End to end on the embedded default: both bundled models on real llama.cpp servers, the sample
golden set, the store, and every report format. This is the README's demo, as a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compare_tui.store import Store

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "sample_sets" / "support-triage"


@pytest.fixture(scope="module")
def demo_run(local_cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo")
    store = tmp / "runs.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "compare_tui",
            "run",
            str(SET),
            "--baseline",
            "gemma3-270m",
            "--model",
            "smollm2-135m",
            "--models",
            str(local_cluster.catalogue_path),
            "--store",
            str(store),
            "--json",
            # Gemma 3 270M (base) rarely stops on its own: a shorter cap keeps the suite quick.
            "--max-tokens",
            "32",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return store, json.loads(out.stdout), env


def test_both_models_answer_through_the_real_server_and_differ(demo_run):
    store_path, summary, _ = demo_run
    assert [r["status"] for r in summary["runs"]] == ["completed", "completed"]
    assert [r["model"] for r in summary["runs"]] == ["gemma3-270m", "smollm2-135m"]  # the baseline runs first
    assert summary["decision"].startswith(("Switch to candidate smollm2-135m", "Keep gemma3-270m"))
    with Store.open(store_path) as store:
        outcomes = {}
        for row in summary["runs"]:
            run = store.get_run(row["id"])
            assert run.provenance == "verified"  # weights hashed this run and matched the pins
            assert run.environment["server"]["props"]["build_info"]
            attempts = store.attempts_for_run(run.id)
            # One request per attempt, none failed: llama-server closes a connection after each
            # streamed answer (saying Keep-Alive), and no request may be sent into one it closed.
            ledger = store.audit_for_run(run.id)
            assert [(r.status, r.error_class) for r in ledger] == [(200, None)] * len(attempts)
            assert {a.retries for a in attempts} == {0}
            answered = [a for a in attempts if a.outcome != "error"]
            assert answered, f"{run.model_name} answered nothing: {[a.error for a in attempts][:3]}"
            for a in answered:
                assert a.prompt_tokens and a.completion_tokens is not None  # the server's usage
                assert a.server_timings and "prompt_ms" in a.server_timings  # llama.cpp timings kept
                if a.ttft_ms is not None:
                    assert 0 < a.ttft_ms <= a.e2e_ms
            outcomes[run.model_name] = {a.task_id: a.outcome for a in attempts}
    small, gemma = outcomes["smollm2-135m"], outcomes["gemma3-270m"]
    assert any(small[t] != gemma[t] for t in small), "the sample set does not discriminate the two models"
    assert "pass" in set(small.values()) | set(gemma.values())


@pytest.mark.parametrize("fmt", ["text", "json", "md", "junit"])
def test_every_report_format_from_the_real_run(demo_run, fmt, tmp_path):
    store_path, summary, env = demo_run
    out_file = tmp_path / f"report.{fmt}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compare_tui",
            "report",
            summary["comparison"],
            "--store",
            str(store_path),
            "--format",
            fmt,
            "--out",
            str(out_file),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    content = out_file.read_text()
    if fmt == "json":
        report = json.loads(content)
        assert report["schema"] == "compare-tui/report"
        assert {m["model"] for m in report["models"]} == {"smollm2-135m", "gemma3-270m"}
        assert report["recommendation"]["confidence"] in {"low", "medium", "high", None}
        decision = report["decision"]
        assert decision["baseline"] == "gemma3-270m" and decision["baseline_source"] == "named"
        [versus] = decision["versus"]
        assert versus["candidate"] == "smollm2-135m"
        assert versus["verdict"] in {"better", "no worse", "worse", "inconclusive"}
        low, high = versus["ci95_pp"]["low"], versus["ci95_pp"]["high"]
        assert (low > 0 or high < 0) == (versus["mcnemar_p"] < 0.05)  # the test beside it agrees
        assert decision["summary"] == summary["decision"]
    elif fmt == "junit":
        suites = ET.fromstring(content).findall(".//testsuite")
        assert [s.get("name") for s in suites] == ["gemma3-270m", "smollm2-135m", "versus gemma3-270m"]
    else:
        assert "smollm2-135m" in content and "gemma3-270m" in content


def test_promote_on_the_real_comparison_refuses_or_records_and_history_lists_it(demo_run):
    store_path, summary, env = demo_run

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "compare_tui", *args, "--store", str(store_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    report = json.loads(cli("report", summary["comparison"], "--format", "json").stdout)
    verdict = report["decision"]["versus"][0]["verdict"]
    first = cli("promote", summary["comparison"], "--model", "smollm2-135m")
    if verdict in ("worse", "inconclusive"):
        assert first.returncode == 3 and f"refused: smollm2-135m is {verdict} against gemma3-270m" in first.stderr
        forced = cli(
            "promote",
            summary["comparison"],
            "--model",
            "smollm2-135m",
            "--force",
            "--reason",
            "integration test: accepted risk",
        )
        assert forced.returncode == 0, forced.stderr
        kind = "forced"
    else:
        assert first.returncode == 0, first.stderr
        kind = "promoted"
    history = cli("baseline", "history", "support-triage", "--json")
    [decision] = json.loads(history.stdout)
    assert (decision["model"], decision["kind"], decision["comparison_id"]) == (
        "smollm2-135m",
        kind,
        summary["comparison"],
    )
