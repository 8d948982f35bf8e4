"""Pilot tests for rough edges a new user hit (issue 22): cells and footers that fit at 80 columns
(Home, experiments, task detail). Each reproduces the key sequence of the report first, then
checks what the screen does now."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.support.home_app import SIZE, home_app, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ cells that fit at 80 columns


def test_home_cells_are_short_and_the_detail_line_says_it_whole():
    from compare_tui.tui.screens.home import fit_list, short_cost, short_health, short_provenance

    many = "command×2, exact×10, human×2, json×3, tool_call×4"
    assert fit_list("exact×10, human×2", 22) == "exact×10, human×2"
    assert fit_list(many, 22) == "command×2 +4 more" and len(fit_list(many, 22)) <= 22
    assert short_health("unreachable: Connection refused") == "✗ unreachable" and short_health("healthy") == "✓ healthy"
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
