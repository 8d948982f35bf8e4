"""Pilot tests for rough edges a new user hit (issue 22): the A/B diff: deltas in one unit, across
golden sets, and the run picker. Each reproduces the key sequence of the report first, then
checks what the screen does now."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable

from compare_tui.tui.screens.home import HomeScreen
from tests.support.home_app import SIZE, home_app, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ A/B diff deltas


def test_diff_deltas_never_print_plus_minus_and_keep_one_latency_unit():
    from compare_tui.diff import deltas
    from compare_tui.report import RunInput, build_report
    from tests.core.report.test_report import attempts, inputs, make_run

    slow = RunInput(
        make_run("run-a", "slow"), attempts("ppff", e2e_ms=25_000.0, prompt_tokens=900, completion_tokens=400)
    )
    fast = RunInput(make_run("run-b", "fast"), attempts("pppf", e2e_ms=400.0, prompt_tokens=384, completion_tokens=42))
    report = build_report(inputs(slow, fast))
    rows = {d.figure: d for d in deltas(report.models[0], report.models[1])}
    text = " ".join(d.delta for d in rows.values())
    assert "+ -" not in text and "+ +" not in text
    assert re.fullmatch(r"prompt −[\d,]+, completion −[\d,]+", rows["tokens/task"].delta), rows["tokens/task"].delta
    e2e = rows["E2E p50/p95/p99"]
    assert e2e.a.endswith(" s") and "ms" not in e2e.delta and e2e.delta.startswith("p50 −24.6 s")


# ------------------------------------------------------------------ A/B diff across golden sets


def add_run_on_another_set(store, tmp_path) -> str:
    """A run of a second set (same workload id and version, other digest): what an edited set gives."""
    from compare_tui.goldset import load_golden_set
    from tests.tui.test_tui_data import OUTCOMES, _attempts, _run, write_mini_set

    other = load_golden_set(write_mini_set(tmp_path / "other"))
    run = store.create_run(
        _run("other-model", "d4d4d4d4d4d4d4d4", other).model_copy(update={"goldset_digest": "sha256:" + "f" * 64})
    )
    store.record_attempts(_attempts(run.id, OUTCOMES["gemma3-270m"]))
    return run.id


async def test_a_diff_across_golden_sets_refuses_the_paired_verdict_and_labels_each_side(app, tmp_path):
    from compare_tui.tui.screens.diff import DiffScreen
    from tests.tui.test_tui_data import RUN_IDS

    other = add_run_on_another_set(app.workspace.store, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_diff(RUN_IDS["smollm2-135m"], other)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen) and screen.diff is not None
        assert screen.diff.paired is None
        title = str(screen.query_one("#diff-title").render())
        assert "A: smollm2-135m" in title and "B: other-model" in title
        a_line, b_line = title.splitlines()
        assert "sha256:ffffffff" in b_line and "sha256:ffffffff" not in a_line
        sentence = str(screen.query_one("#flips-sentence").render())
        assert "no paired verdict" in sentence and "noise" not in sentence
        assert "no paired verdict across sets" in str(screen.query_one("#diff-problems").render())


async def test_run_picker_esc_steps_back_only_from_a_choice_made_in_it(app):
    from compare_tui.tui.screens.run_picker import RunPickerScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_diff()  # nothing preselected: pick A, then B
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, RunPickerScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert picker.run_a is not None
        headers = [str(c.label) for c in picker.query_one("#picker-table", DataTable).columns.values()]
        assert headers[3:5] == ["model", "status"]
        await pilot.press("escape")  # back to picking A
        await settle(pilot)
        assert app.screen is picker and picker.run_a is None
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
