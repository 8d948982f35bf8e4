"""The third bundled model, Qwen2.5-Coder 0.5B, where it adds coverage (integration tier):
the demo's decision end to end, and its tool calls parsed through real llama.cpp with
compare-tui's tool-aware chat template.

It is started here, beside the session's two servers, and stopped when this module ends, so
the rest of the suite keeps its share of the cores.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from compare_tui import local
from compare_tui.cli import main
from compare_tui.toolcall import ToolcallOutcome

pytestmark = pytest.mark.integration

QWEN = "qwen2.5-coder-0.5b"
DEMO_SET = Path(__file__).resolve().parents[2] / "sample_sets" / "ticket-labels"


@pytest.fixture(scope="module")
def qwen(qwen_cluster):
    return qwen_cluster


def test_qwen_serves_with_its_share_of_the_cores_and_is_pinned(qwen):
    info = next(s for s in qwen.servers if s.name == QWEN)
    assert info.threads == local.cluster.share_threads(3)
    assert info.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert "threads" in qwen.catalogue_path.read_text(encoding="utf-8")


def test_the_demo_ends_in_a_decision_whose_interval_excludes_zero(qwen, tmp_path, capsys):
    store = tmp_path / "runs.sqlite"
    code = main(
        [
            "run",
            str(DEMO_SET),
            "--baseline",
            "smollm2-135m",
            "--model",
            QWEN,
            "--json",
            "--models",
            str(qwen.catalogue_path),
            "--store",
            str(store),
        ]
    )
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    summary = json.loads(captured.out)
    assert code == 0, summary
    assert [r["provenance"] for r in summary["runs"]] == ["verified", "verified"]
    assert summary["decision"].startswith(f"Switch to candidate {QWEN}: better than smollm2-135m")
    assert main(["report", summary["comparison"], "--format", "json", "--store", str(store)]) == 0
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    report = json.loads(captured.out)
    [versus] = report["decision"]["versus"]
    assert versus["verdict"] == "better" and versus["ci95_pp"]["low"] > 0, versus


def test_with_the_tool_aware_template_real_llama_cpp_parses_the_call(qwen, tmp_path, capsys):
    """The model's own template asks for `<tool_call>` tags the 0.5B Coder never writes, so every
    call stayed text (issue 37); compare-tui's template asks for the ```json block it writes."""
    code = main(
        [
            "toolcall",
            "--model",
            QWEN,
            "--scenario",
            "S01",
            "--json",
            "--keep-arguments",
            "--models",
            str(qwen.catalogue_path),
            "--store",
            str(tmp_path / "runs.sqlite"),
        ]
    )
    captured = capsys.readouterr()
    assert captured.out, captured.err  # a refusal prints its reason, not JSON
    data = json.loads(captured.out)
    assert code == 0, data
    [result] = data["runs"][0]["results"]
    assert result["outcome"] == ToolcallOutcome.PASS.value, result
    assert [call["name"] for call in result["calls"]] == ["get_weather"]
    assert result["calls"][0]["arguments"]["city"].lower() == "paris"
    assert "qwen2.5-coder-tools.jinja" in qwen.catalogue_path.read_text(encoding="utf-8")


def _completions_served(cluster, name: str) -> int:
    """Chat completions the real llama-server started (one `launch_slot_` line each in its log)."""
    server = next(s for s in cluster.servers if s.name == name)
    return server.log_path.read_text(encoding="utf-8", errors="replace").count("launch_slot_")


def test_the_demo_stopped_when_settled_decides_before_the_end_and_counts_what_was_not_sent(qwen, tmp_path, capsys):
    """Issue 50 on the real servers: Qwen's verdict settles before the 64th task, the runs stop
    there, and every request the audit ledger holds is one the servers served."""
    from compare_tui.store import Store

    store_path = tmp_path / "runs.sqlite"
    served_before = {name: _completions_served(qwen, name) for name in ("smollm2-135m", QWEN)}
    code = main(
        [
            "run",
            str(DEMO_SET),
            "--baseline",
            "smollm2-135m",
            "--model",
            QWEN,
            "--stop-when-settled",
            "--json",
            "--models",
            str(qwen.catalogue_path),
            "--store",
            str(store_path),
        ]
    )
    captured = capsys.readouterr()
    assert captured.out, captured.err
    summary = json.loads(captured.out)
    assert code == 0, summary
    assert [r["status"] for r in summary["runs"]] == ["settled", "settled"], summary
    assert summary["decision"].startswith(
        f"Switch to candidate {QWEN}: better than smollm2-135m (sequential, settled at task "
    )
    settled_after = int(summary["sequential"].split("settled after ")[1].split(" of 64")[0])
    assert settled_after < 64
    served = sum(_completions_served(qwen, name) - served_before[name] for name in served_before)
    with Store.open(store_path) as store:
        audit = [row for run in summary["runs"] for row in store.audit_for_run(run["id"])]
    assert len(audit) == served  # every audited request reached a server, and no other did
    not_sent = sum(r["not_sent"] for r in summary["runs"])
    assert not_sent > 0 and all(r["pass"] + r["fail"] + r["error"] + r["not_sent"] == 64 for r in summary["runs"])
    assert f"{not_sent} requests not sent" in summary["sequential"]
    print(f"sequential demo: {summary['sequential']}; {served} requests served; {summary['decision']}", file=sys.stderr)
