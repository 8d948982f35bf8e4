"""Stored material with real-length texts for the 80-column tests: a golden set whose manifest
name is as long as a team's, scored by a `command` check among others, and a tool-call run of
the official suite interrupted after 19 of its 28 scenarios (a real model's name, fixed ids and
dates, so snapshots are the same on every machine)."""

from __future__ import annotations

import json
from pathlib import Path

from compare_tui.store import Store

LONG_SET_NAME = "Order email extraction and unit conversion"
LONG_MODEL = "qwen2.5-1.5b-instruct"
INTERRUPTED_AFTER = 19
TOOLCALL_RUN_IDS = ("7c0e5a0b9d31f4e2", "7c1e5a0b9d31f4e2")
"""The finished run, then the interrupted one (newer, so listed first)."""


def write_long_set(root: Path) -> Path:
    """Six tasks: three checked by a command, two exact, one by regex."""
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    (root / "checks").mkdir(exist_ok=True)
    (root / "checks" / "convert.py").write_text("import sys\nsys.exit(0)\n")
    (root / "golden.toml").write_text(
        f'workload_id = "order-extraction"\nname = "{LONG_SET_NAME}"\nversion = "1.0.0"\n'
        '[default_scorer]\nkind = "exact"\n'
    )
    scorers = {
        "convert-01": {"kind": "command", "run": ["python3", "checks/convert.py"]},
        "convert-02": {"kind": "command", "run": ["python3", "checks/convert.py"]},
        "convert-03": {"kind": "command", "run": ["python3", "checks/convert.py"]},
        "sku-01": {"kind": "regex", "pattern": "^SKU-[0-9]+$"},
    }
    for task_id in ("convert-01", "convert-02", "convert-03", "order-01", "order-02", "sku-01"):
        task = {"id": task_id, "input": {"prompt": f"Task {task_id}"}, "expected": {"text": "5.0"}}
        if task_id in scorers:
            task["scorer"] = scorers[task_id]
        (root / "tasks" / f"{task_id}.json").write_text(json.dumps(task))
    return root


def store_toolcall_runs(store: Store) -> None:
    """Two runs of the official suite on one model: one finished, one interrupted after 19."""
    from compare_tui.toolcall import ToolcallStore
    from compare_tui.toolcall.results.model import (
        ScenarioResult,
        ToolcallOutcome,
        ToolcallRun,
        ToolcallRunStatus,
    )
    from compare_tui.toolcall.scenarios.suite import official_suite

    suite = official_suite()
    tool_runs = ToolcallStore(store)
    plan = ((len(suite.scenarios), ToolcallRunStatus.FINISHED), (INTERRUPTED_AFTER, ToolcallRunStatus.INTERRUPTED))
    for n, (count, status) in enumerate(plan):
        run = ToolcallRun(
            id=TOOLCALL_RUN_IDS[n],
            created_at=f"2026-12-0{n + 1}T10:0{n}:00Z",
            model_name=LONG_MODEL,
            model_id="qwen2.5-1.5b",
            endpoint=f"http://127.0.0.1:808{n + 1}/v1",
            suite_name=suite.name,
            suite_version=suite.version,
            suite_digest=suite.digest,
            server_notes=("llama.cpp build b7000 (jinja)",),
            status=ToolcallRunStatus.RUNNING,
        )
        tool_runs.begin(run)
        for position, scenario in enumerate(suite.scenarios[:count]):
            outcome = ToolcallOutcome.FAIL if position % 4 == 0 else ToolcallOutcome.PASS
            result = ScenarioResult(
                scenario.id,
                scenario.name,
                scenario.category,
                scenario.title,
                outcome,
                "every check passed" if outcome is ToolcallOutcome.PASS else "failed: calls_match",
                status=200,
                duration_ms=400.0,
            )
            tool_runs.add_result(run, position, result)
        tool_runs.finish(run, status)
