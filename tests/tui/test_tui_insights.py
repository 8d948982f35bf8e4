"""Pilot tests of the report's Insights tab (`compare-tui insights` on screen): the failure
groups with their counts per model, the highlighted group spelt out, Enter opening a group's
tasks in the task detail (n / p within the group), and the tab at 80 columns."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from compare_tui.tui.screens.report import ReportScreen
from compare_tui.tui.screens.task_detail import TaskDetailScreen
from tests.support.home_app import SIZE, home_app, open_report, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


async def test_the_insights_tab_lists_groups_and_enter_opens_a_groups_tasks(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        report = await open_report(pilot)
        await pilot.press("4")
        await settle(pilot)
        table = report.query_one("#insight-groups", DataTable)
        assert app.focused is table
        rows = [[str(cell) for cell in table.get_row(key)] for key in table.rows]
        # The tickets' stored fails read "expected 'billing', got 'bug'" (no label data): one
        # group of 2 + 1 fails; one answer ended in a stream error.
        # At 80 columns the cause is cut (with …); the line under the table has it whole.
        assert rows[0][:4] == ["1", "other: expected 'billing', …", "2 (67%)", "2 (100%)"]
        assert rows[1][:4] == ["2", "request error: stream_error", "1 (33%)", "0 (0%)"]
        assert all(len(cell) <= column.width for row in rows for cell, column in zip(row, table.columns.values()))
        line = str(report.query_one("#insight-line", Static).render())
        assert "1. other: expected 'billing', got 'bug'\n" in line
        assert "smollm2-135m 2 (67%) · gemma3-270m 2 (100%)" in line and "Enter opens its 3 tasks" in line
        suspects = str(report.query_one("#insight-suspects", Static).render())
        assert "ticket-06: every model fails it the same way" in suspects
        await pilot.press("enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, TaskDetailScreen)
        assert detail.task_ids == ("ticket-03", "ticket-06", "ticket-08") and detail.task_id == "ticket-03"
        await pilot.press("n")
        await settle(pilot)
        assert detail.task_id == "ticket-06" and detail.sub_title.endswith("2 of 3")
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ReportScreen) and app.focused is table
        await pilot.press("down")
        await settle(pilot)
        assert "2. request error: stream_error" in str(report.query_one("#insight-line", Static).render())
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert table.cursor_row == 1  # laid out again for the width, the cursor kept
        assert str(table.get_row_at(0)[1]) == "other: expected 'billing', got 'bug'"
