"""Pilot tests for rough edges a new user hit (issue 22): the report screen at 80 columns:
scrolling from the first key, focus, tables laid out again. Each reproduces the key sequence of
the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.support.home_app import SIZE, home_app, open_report, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ the report screen at 80 columns


def _cells_fit(screen) -> None:
    """Every cell of every figure table is no wider than its column (a DataTable would crop it
    without a mark)."""
    for table in screen.query(DataTable):
        widths = [column.width for column in table.columns.values()]
        for row_key in table.rows:
            for cell, width in zip(table.get_row(row_key), widths, strict=True):
                assert len(str(cell)) <= width, (table.id, str(cell), width)


async def test_pagedown_scrolls_the_figures_from_the_first_key(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)
        await pilot.press("2")
        await settle(pilot)
        scroll = report.query_one("#figures-scroll")
        assert app.focused is scroll
        await pilot.press("pagedown")
        await settle(pilot)
        assert scroll.scroll_y > 0


async def test_the_summary_has_focus_on_its_scroll_when_the_report_opens(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)
        assert app.focused is report.query_one("#summary-scroll")


async def test_tables_are_laid_out_again_after_a_verdict_and_after_a_resize(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)
        _cells_fit(report)
        table = report.query_one("#pass-table", DataTable)
        headers = lambda: [" ".join(str(c.label).split()) for c in table.columns.values()]  # noqa: E731
        # At 80 columns the headers wrap rather than leave a column out (issue 55).
        assert "· not done" in headers() and table.header_height == 2
        assert str(report.query_one("#pass-notes").render()).startswith("pass rate = ")  # only the rule's caption
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is report
        _cells_fit(report)
        assert table.header_height == 2
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert "· not done" in headers() and table.header_height == 1  # one line each when they fit
        assert "not done" not in str(report.query_one("#pass-notes").render())
        _cells_fit(report)
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        assert table.header_height == 2
