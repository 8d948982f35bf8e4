"""The look back of the anytime-valid test on a finished comparison (report/sequential_replay.py)."""

from __future__ import annotations

import json

from rich.console import Console

from compare_tui.report import build_report, render_json
from compare_tui.report.decision import Verdict
from compare_tui.report.render_text import render_text
from compare_tui.report.sequential import sequence
from compare_tui.report.sequential_replay import replay_order, sequential_replays
from tests.core.report.test_report import inputs, one

# The demo-sized lead: +53 points on 64 tasks (the candidate passes 36 more, the baseline 2 more).
BASELINE = "p" * 2 + "f" * 36 + "p" * 10 + "f" * 16
CANDIDATE = "f" * 2 + "p" * 36 + "p" * 10 + "f" * 16


def demo_report(**fields):
    return build_report(
        inputs(one(BASELINE, "run-a", "model-a"), one(CANDIDATE, "run-b", "model-b"), baseline="model-a", **fields)
    )


def test_the_demo_lead_would_have_settled_early_and_the_order_is_fixed_before_the_outcomes() -> None:
    report = demo_report()
    [replay] = sequential_replays(report)
    assert replay.candidate == "model-b" and replay.tasks == 64
    assert replay.settled_early and replay.look.verdict is Verdict.BETTER and replay.look.tasks < 40
    # the same look as the full sequence over the outcomes in that order
    order = replay_order(report.comparison_id or ",".join(report.run_ids), report.task_ids)
    outcomes = [int(CANDIDATE[i] == "p") - int(BASELINE[i] == "p") for i in order]
    full = sequence(outcomes, 64, margin_pp=report.decision.margin_pp)
    assert full.settled_at == replay.look
    assert replay.words.startswith(
        f"would have settled at task {replay.look.tasks} of 64: better (confidence sequence at 95%"
    )
    # the order depends on the key and the task ids only, never on the outcomes
    assert replay_order("k", ("a", "b", "c")) == replay_order("k", ("a", "b", "c"))
    assert sorted(replay_order("k", tuple("abcdefgh"))) == list(range(8))


def test_json_and_text_carry_the_look_back_labelled_as_a_confidence_sequence() -> None:
    report = demo_report()
    doc = json.loads(render_json(report))
    block = doc["sequential"]
    assert "confidence sequence" in block["kind"] and "sha256" in block["order"]
    [cand] = block["candidates"]
    assert cand["candidate"] == "model-b" and cand["verdict"] == "better" and cand["settled_early"]
    assert cand["settled_at"] < 40 and cand["cs_pp"]["low"] > 0 and cand["level"] == 0.95
    console = Console(width=160, record=True, color_system=None)
    console.print(render_text(report))
    text = console.export_text()
    assert "Anytime-valid look back (confidence sequence; the run used every task):" in text
    assert f"model-b would have settled at task {cand['settled_at']} of 64: better" in text


def test_no_look_back_without_a_decision() -> None:
    report = build_report(inputs(one(BASELINE, "run-a", "model-a"), one(CANDIDATE, "run-b", "model-b")))
    assert sequential_replays(report) == ()
    assert json.loads(render_json(report))["sequential"] is None
