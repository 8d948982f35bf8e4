"""Whole-run replay in the TUI: the report screen's run strips and a step in its run's context,
over a hand-built store (fixed ids and outcomes) on the committed agent log, sampled whole.
Snapshots at 80×24 and 120×40; Pilot checks of what the screens say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare_tui.goldset import load_golden_set
from compare_tui.sampling import SampleOptions, sample_runs, write_sampled_set
from compare_tui.store import AttemptRecord, ComparisonRecord, Store
from compare_tui.tui.app import create_app
from tests.support.home_app import settle
from tests.tui.test_tui_data import _run, fixed_probe, write_catalogue
from tests.tui.test_tui_snapshots import keys

LOG = Path(__file__).resolve().parents[2] / "bench" / "agent_replay" / "agent-log.jsonl"
RUN_IDS = {"smollm2-135m": "d4d4d4d4d4d4d4d4", "gemma3-270m": "e5e5e5e5e5e5e5e5"}
COMPARISON = "cmp00000000000r1"
SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


def _outcomes(model: str, tasks) -> dict[str, str]:
    """smollm2 loses step 2 of the first 3-step run; gemma3 errors on step 1 of the first run
    (that run not decided) and loses the last run's final answer."""
    traced = sorted(tasks, key=lambda t: (t.trace.run, t.trace.step))
    outcomes = {t.id: "pass" for t in traced}
    runs = sorted({t.trace.run for t in traced})
    if model == "smollm2-135m":
        first_long = next(t for t in traced if t.trace.of == 3 and t.trace.step == 2)
        outcomes[first_long.id] = "fail"
    else:
        outcomes[next(t for t in traced if t.trace.run == runs[0] and t.trace.step == 1).id] = "error"
        outcomes[next(t for t in traced if t.trace.run == runs[-1] and t.trace.step == t.trace.of).id] = "fail"
    return outcomes


def _attempt(run_id: str, task, outcome: str) -> AttemptRecord:
    expected = task.expected
    wrong = outcome == "fail"
    calls, text = [], ""
    if expected.tool_call is not None:
        arguments = {"city": "Atlantis"} if wrong else expected.tool_call.arguments
        calls = [{"id": "call_0", "name": expected.tool_call.name, "arguments": json.dumps(arguments)}]
    else:
        text = "I do not know." if wrong else expected.text or ""
    return AttemptRecord(
        run_id=run_id,
        task_id=task.id,
        attempt=1,
        outcome=outcome,
        answer_text="" if outcome == "error" else text,
        tool_calls=[] if outcome == "error" else calls,
        score_detail={"pass": "matched the recorded action", "fail": "differs from the recorded action", "error": ""}[
            outcome
        ],
        error_class="stream_error" if outcome == "error" else None,
        error="the server reported an error inside the stream: slot unavailable" if outcome == "error" else None,
        ttft_ms=None if outcome == "error" else 50.0,
        e2e_ms=None if outcome == "error" else 400.0,
        prompt_tokens=None if outcome == "error" else 120,
        completion_tokens=None if outcome == "error" else 9,
        started_at="2026-01-05T10:00:01Z",
        finished_at="2026-01-05T10:00:02Z",
        finish_reason="stop",
    )


@pytest.fixture
def make_replay_app(tmp_path):
    sets = tmp_path / "sets"
    write_sampled_set(
        sample_runs([LOG], SampleOptions(samples=20, text_scorer="exact", workload_id="agent-replay")),
        sets / "agent-replay",
    )
    goldset = load_golden_set(sets / "agent-replay")
    store = Store.open(tmp_path / "runs.sqlite")
    for model, run_id in RUN_IDS.items():
        run = _run(model, run_id, goldset).model_copy(update={"comparison_id": COMPARISON})
        store.create_run(run)
        outcomes = _outcomes(model, goldset.tasks)
        store.record_attempts([_attempt(run_id, t, outcomes[t.id]) for t in goldset.tasks])
    store.create_comparison(
        ComparisonRecord(
            id=COMPARISON,
            name="agent replay 2026-01-05",
            created_at="2026-01-05T10:00:00Z",
            run_ids=list(RUN_IDS.values()),
        )
    )
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_report_summary_shows_the_run_strips(make_replay_app, snap_compare, size):
    assert snap_compare(
        make_replay_app(),
        terminal_size=SIZES[size],
        run_before=keys("enter", "down", "down", "down", "down", "down", "down"),
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_task_detail_shows_the_step_in_its_run(make_replay_app, snap_compare, size):
    # The grid's second task is step 2 of the first run (tasks sort by run, then step).
    assert snap_compare(make_replay_app(), terminal_size=SIZES[size], run_before=keys("enter", "3", "right", "enter"))


async def test_the_strips_say_driven_lost_and_not_decided_in_words(make_replay_app):
    app = make_replay_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        text = str(app.screen.query_one("#runs").render())
        assert "smollm2-135m" in text and "gemma3-270m" in text
        assert "runs driven without losing a step: 5 of 6 runs" in text
        assert "runs driven without losing a step: 4 of 5 runs" in text and "1 not decided" in text
        assert "lost at step 2" in text and "not decided (step 1 not measured)" in text
        await pilot.press("3", "right", "enter")
        await settle(pilot)
        context = str(app.screen.query_one("#run-context").render())
        assert context.startswith("step 2 of ") and "step 1: [tool call] get_weather(" in context
        assert app.screen.query_one("#step-actions").display
