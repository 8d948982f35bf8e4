"""Pilot tests for rough edges a new user hit (issue 22): Home at 80x24: the filter and its escape,
the keys in the footer, the runs list, a fast burst of keys, an invalid set. Each reproduces the
key sequence of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from compare_tui.tui.screens.help import HelpScreen
from compare_tui.tui.screens.home import HomeScreen
from tests.support.home_app import SIZE, home_app, settle


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


async def test_escape_leaves_the_filter_and_the_shortcuts_work_again(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "slash")
        assert isinstance(app.focused, Input)
        await pilot.press("b", "escape")
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert isinstance(app.focused, DataTable) and app.focused.id == "runs-table"
        filter_box = home.query_one("#run-filter", Input)
        assert filter_box.value == "b"  # Esc keeps what was typed: the list stays filtered
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert filter_box.value == "b"  # the key went to the app, not into the filter


async def test_arrows_move_the_list_after_escape_from_the_filter(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "slash", "escape", "down")
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.cursor_row == 1
        assert app.screen.query_one("#run-filter", Input).value == ""


# ------------------------------------------------------------------ Home at 80 columns


async def test_home_footer_shows_every_home_key_at_80_columns(app):
    from textual.widgets._footer import FooterKey

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = {key.key_display or key.key for key in app.screen.query(FooterKey)}
        assert {"n", "d", "v", "e", "t", "j", "/", "s", "?", "q"} <= keys
        right_edge = max(key.region.right for key in app.screen.query(FooterKey))
        assert right_edge <= SIZE[0]


async def test_runs_list_leads_with_the_run_id_and_the_date(app):
    """At 80 columns the year every run shares is left to the line under the table."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers[:2] == ["run", "date (UTC)"]
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == "b2b2b2b2" and first[1] == "01-05 10:00"
        assert "2026-01-05 10:00:00 UTC" in str(app.screen.query_one("#run-detail").render())
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths[:2]) <= SIZE[0]  # both on screen without scrolling


# ------------------------------------------------------------------ a fast burst of keys, the run picker


async def test_a_fast_burst_of_keys_ends_on_home(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "escape", "n", "escape", "o", "escape", "d", "escape", "n", "escape", "d", "escape")
        await settle(pilot, rounds=5)
        assert isinstance(app.screen, HomeScreen), app.screen_stack


# ------------------------------------------------------------------ Enter on an invalid set


async def test_enter_on_an_invalid_set_shows_its_problems_not_new_run(app):
    from compare_tui.tui.screens.new_run import NewRunScreen
    from compare_tui.tui.screens.refusal import RefusalScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1")  # the broken set sorts first
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RefusalScreen), app.screen_stack
        text = str(app.screen.query_one("#refusal-reason").render())
        assert "✗" in text and "sets validate" in text
        assert "broken-set cannot run" in str(app.screen.query_one("#refusal-title").render())
        await pilot.press("escape", "down", "enter")  # the valid set opens New run on that set
        await settle(pilot)
        assert isinstance(app.screen, NewRunScreen)


async def test_a_rescored_run_is_marked_under_the_runs_list(app):
    # Issue 48, item 7: a rescored run read as one more run, unmarked.
    app.workspace.store.update_run("b2b2b2b2b2b2b2b2", rescore={"source_run": "a1a1a1a1a1a1a1a1", "changed": []})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = str(app.screen.query_one("#run-detail").render())
        assert "↻ rescore of run a1a1a1a1a1a1a1a1: its answers scored again, not a repeat" in detail
