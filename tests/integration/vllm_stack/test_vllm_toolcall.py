"""The tool-call suite and a judge through a real vLLM server: Qwen2.5-Coder-0.5B-Instruct with
`--enable-auto-tool-choice --tool-call-parser hermes` (Qwen writes `<tool_call>` blocks).

What vLLM's parser does with this model, measured: `tool_choice: "required"` and a named function
come back as parsed `tool_calls` (named: `finish_reason` "stop", not "tool_calls"); with "auto"
the model writes its call as a fenced JSON block in the content, which no parser reads, so the
suite says **fail (text)**: the serving stack did not turn the text into a call. Nothing is
unsupported or an error. This module sorts after the SmolLM2 ones: its server replaces theirs.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from compare_tui.catalogue import load_catalogue
from compare_tui.cli import main
from compare_tui.toolcall import RunRequest, RunSettings, ToolcallOutcome, execute, official_suite
from tests.goldset_factory import make_set, manifest_data, task_data
from tests.support.vllm_server import QWEN, VllmServer

pytestmark = pytest.mark.integration

SUITE = official_suite()


@pytest.fixture
def catalogue(qwen_tools: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "models.toml"
    code = main(
        ["models", "add", "qwen-vllm", "--endpoint", qwen_tools.url, "--model", QWEN]
        + ["--weights-dir", str(qwen_tools.folder), "--revision", "converted", "--usd-per-hour", "0.1"]
        + ["--note", "tool_parser=hermes", "--models", str(path)]
    )
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    return path


async def test_the_tool_call_suite_through_the_hermes_parser(catalogue: Path):
    entry = load_catalogue(catalogue).get("qwen-vllm")
    settings = RunSettings(max_tokens=96, timeout_s=600, concurrency=4)
    run = await execute(RunRequest(entry, SUITE, SUITE.scenarios, settings, {"server": "vLLM hermes"}))
    results = {r.scenario_id: r for r in run.results}
    table = {k: (r.outcome.value + (" (text)" if r.written_as_text else "")) for k, r in results.items()}
    print(json.dumps(table), file=sys.stderr)  # the table, for the record (pytest -s)
    assert set(results) == {s.id for s in SUITE.scenarios}
    assert not {ToolcallOutcome.ERROR, ToolcallOutcome.UNSUPPORTED} & {r.outcome for r in results.values()}, {
        k: r.reason for k, r in results.items()
    }
    # tool_choice "required" and a named function: parsed calls, whatever the prompt says.
    for scenario in ("S15", "S16"):
        assert results[scenario].calls, results[scenario].reason
    assert results["S16"].calls[0].name == "get_time" and results["S16"].finish_reason == "stop"
    # "auto": the call the model meant stays text in the content (hermes reads <tool_call> only).
    assert results["S01"].outcome == ToolcallOutcome.FAIL and results["S01"].written_as_text
    assert results["S19"].outcome == ToolcallOutcome.PASS  # no tool fits: a text answer


def test_a_judge_and_a_grade_through_vllm(catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # Three tasks (a judge's prompt is long: each call costs seconds on a 2-core CPU), answered
    # twice by Qwen (two answer lengths), judged pairwise and graded 1-5 by Qwen, all through vLLM.
    labels = {"refund-please": "billing", "app-crashes": "bug", "reset-password": "account"}
    tasks = {
        f"{task_id}.toml": task_data(
            task_id,
            input={"system": "Label the ticket: billing, bug or account.", "prompt": task_id},
            expected={"text": label},
        )
        for task_id, label in labels.items()
    }
    goldset = make_set(tmp_path / "set", manifest=manifest_data(run={"attempts": 1, "temperature": 0.0}), tasks=tasks)
    store = tmp_path / "runs.sqlite"
    base = ["--models", str(catalogue), "--store", str(store)]
    runs = []
    for cap in ("8", "24"):
        assert main(["run", str(goldset), "--model", "qwen-vllm", "--json", "--max-tokens", cap, *base]) in (0, 1)
        [run] = json.loads(capsys.readouterr().out)["runs"]
        assert (run["status"], run["not_done"]) == ("completed", 0)
        runs.append(run["id"])
    audit = sqlite3.connect(store)
    judge_rows = "SELECT COUNT(*), SUM(status = 200) FROM audit WHERE run_id IS NULL"

    code = main(["judge", *runs, "--judge", "qwen-vllm", "--max-tokens", "16", "--json", *base])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    asked, answered = audit.execute(judge_rows).fetchone()
    assert asked >= 2 * len(labels) and answered == asked  # both orders of every pair, each a 200

    code = main(["grade", *runs, "--judge", "qwen-vllm", "--max-tokens", "48", "--format", "json", *base])
    graded = json.loads(capsys.readouterr().out)
    assert code in (0, 1), graded
    assert graded["judge"]["model"] == "qwen-vllm" and graded["judge"]["provenance"] == "verified"
    for run in graded["runs"]:
        f = run["figures"]
        assert f["graded"] + f["failed"] + f["not_graded"] == len(labels)
    assert sum(r["figures"]["graded"] for r in graded["runs"]) >= len(labels)  # most answers get a grade
    assert graded["judge_usage"]["calls"] == 2 * len(labels) and graded["judge_usage"]["prompt_tokens"] > 0
    assert audit.execute(judge_rows).fetchone()[0] >= asked + 2 * len(labels)


MCP_TOOLS = {
    "tools": [
        {
            "name": "create_ticket",
            "description": "Open a support ticket for a customer's problem.",
            "inputSchema": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "high"]}},
                "required": ["title"],
            },
        }
    ]
}


def test_user_tools_on_hermes_are_tested_with_auto_too_and_the_run_names_its_stack(
    catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """`toolcall --tools <an MCP tools/list file>` on vLLM+hermes: the forced call passes (and
    ends `stop`, flagged), the auto call is the stack's weak spot, and the run says the tools
    reached the prompt (vLLM /tokenize) and which parser was stated."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(MCP_TOOLS))
    args = ["toolcall", "--model", "qwen-vllm", "--models", str(catalogue), "--store", str(tmp_path / "runs.sqlite")]
    code = main([*args, "--tools", str(tools), "--scenario", "T*", "--max-tokens", "96"])
    out = capsys.readouterr().out
    assert code == 0, out
    flat = " ".join(out.split())
    assert "user.named:create_ticket" in out and "user.auto:create_ticket" in out
    assert "tools reach the prompt: yes (vLLM POST /tokenize:" in flat
    assert "parser not stated (the server does not report its tool-call parser)" in flat or "hermes" in flat
    assert 'finish_reason "stop"' in flat  # the named call, parsed, ended stop
    assert "tested with forced calls only" not in flat
    print(out, file=sys.stderr)  # the table, for the record (pytest -s)
