"""Pilot tests for rough edges a new user hit (issue 22): cells and footers that fit at 80 columns
(Home, experiments, task detail). Each reproduces the key sequence of the report first, then
checks what the screen does now."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.widgets import DataTable

from compare_tui.store import RunRecord, RunStatus
from tests.support.home_app import SIZE, home_app, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ cells that fit at 80 columns


def test_home_cells_are_short_and_the_detail_line_says_it_whole():
    from compare_tui.tui.screens.home import short_cost, short_health, short_provenance
    from compare_tui.tui.set_cells import fit_list

    many = "command×2, exact×10, human×2, json×3, tool_call×4"
    assert fit_list("exact×10, human×2", 22) == "exact×10, human×2"
    assert fit_list(many, 22) == "command×2 +4 more" and len(fit_list(many, 22)) <= 22
    from compare_tui.tui.health import Health

    assert short_health(Health(False, "unreachable", "unreachable: Connection refused")) == "✗ unreachable"
    assert short_health(Health(True, "healthy", "healthy")) == "✓ healthy"
    assert short_provenance("provenance by host attestation, not verified", "x") == "host attested"
    assert short_cost("token $1/$2 per Mtok (2026-12-01)") == "token $1/$2 per Mtok"
    assert short_cost("none (runs will be refused in reports)") == "✗ none"


async def test_home_models_table_fits_at_80_columns(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#models-table", DataTable)
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths[:5]) <= SIZE[0]  # model, kind, health, provenance, cost basis on screen


async def test_home_runs_table_fits_at_80_columns_with_whole_run_ids(app):
    """The last (set) column was cut at 80 columns (the table was 89 wide)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths) <= SIZE[0]
        ids = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert ids == ["b2b2b2b2", "a1a1a1a1", "c3c3c3c3"]
        assert [str(cell) for cell in table.get_row_at(0)[3:]] == ["80.0% (8/10)", "completed", "support-mini"]
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert str(table.get_row_at(0)[5]) == "support-mini 1.0.0" and str(table.get_row_at(0)[1]) == "2026-01-05 10:00"
        await pilot.resize_terminal(*SIZE)  # and narrower again: the columns shrink back
        await settle(pilot)
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= SIZE[0]
        assert str(table.get_row_at(0)[5]) == "support-mini"


def run_record(model: str, golden: str) -> RunRecord:
    return RunRecord(
        id="0123456789abcdef",
        created_at="2026-01-05T10:00:00.000000Z",
        goldset_id=golden,
        goldset_version="1.0.0",
        model_name=model,
        status=RunStatus.COMPLETED,
    )


@given(
    models=st.lists(
        st.text(st.characters(codec="utf-8", categories=("L", "N", "P")), min_size=1, max_size=40),
        min_size=1,
        max_size=5,
    ),
    golden=st.text(st.characters(codec="utf-8", categories=("L", "N", "P")), min_size=1, max_size=40),
    tasks=st.integers(0, 5000),
    width=st.integers(78, 160),
)
def test_fitted_runs_fit_the_width_and_keep_ids_rates_and_statuses_whole(models, golden, tasks, width):
    from compare_tui.tui.run_cells import HEADERS, column_widths, fit_runs, rate_room, table_width

    runs = [run_record(model, golden) for model in models]
    rates = [rate_room(tasks)] * len(runs)  # the widest rate each run can get, shown whole
    rows, widths = fit_runs(runs, rates, [rate_room(tasks)] * len(runs), width)
    # Each column is as wide as its widest fitted cell, the pass rate as wide as its room.
    assert table_width(widths) <= width and widths == column_widths(rows, cell_len(rate_room(tasks)))
    assert widths[3] >= cell_len(rate_room(tasks))
    for row, run, rate in zip(rows, runs, rates, strict=True):
        assert len(row) == len(HEADERS)
        assert row[0] == run.id[:8] and row[3] == rate and row[4] == str(run.status)
        assert row[2] == run.model_name or (row[2].endswith("…") and run.model_name.startswith(row[2][:-1]))
        golden = f"{run.goldset_id} {run.goldset_version}"  # the version is left out before a name is cut
        assert row[5] in (golden, run.goldset_id) or (row[5].endswith("…") and golden.startswith(row[5][:-1]))


def test_fitted_runs_are_whole_when_they_fit():
    from compare_tui.tui.run_cells import fit_runs

    rows, _ = fit_runs([run_record("qwen2.5-coder-0.5b", "support-mini")], ["80.0% (8/10)"], [], 120)
    assert rows[0][1] == "2026-01-05 10:00" and rows[0][2] == "qwen2.5-coder-0.5b"
    rows, _ = fit_runs([run_record("qwen2.5-coder-0.5b", "support-mini")], ["80.0% (8/10)"], [], 78)
    assert rows[0][1] == "01-05 10:00" and rows[0][2] == "qwen2.5-coder…" and rows[0][5] == "support-mini"
    older = run_record("qwen2.5-coder-0.5b", "support-mini").model_copy(
        update={"created_at": "2025-12-31T23:00:00.000000Z"}
    )
    rows, _ = fit_runs([run_record("gemma3-270m", "support-mini"), older], ["80.0% (8/10)"] * 2, [], 78)
    assert [row[1] for row in rows] == ["2026-01-05 10:00", "2025-12-31 23:00"]  # two years: the year stays


def test_experiment_arm_cells_are_short():
    from compare_tui.experiment.render import interval_cell

    class Rates:
        values, low, high = (0.5, 0.7), 0.5, 0.7

    class Arm:
        interval, rate_range = None, Rates()

    assert interval_cell(Arm()) == "range 50.0–70.0 %"
    Arm.rate_range = type("R", (), {"values": (), "low": None, "high": None})()
    assert interval_cell(Arm()) == "– (<3 runs)"


async def test_task_detail_footer_fits_at_80_columns(app):
    from textual.widgets._footer import FooterKey

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("3", "enter")
        await settle(pilot)
        keys = {key.key_display or key.key for key in app.screen.query(FooterKey)}
        assert {"n", "p", "f", "?", "q"} <= keys
        quit_key = next(k for k in app.screen.query(FooterKey) if k.key == "q")
        assert quit_key.region.x + len(" q Quit") <= SIZE[0] - len("▏^p palette")  # left of the palette key
