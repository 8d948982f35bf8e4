"""Pilot tests for the rough edges a new user hit (issue 22): each reproduces the key sequence
of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from compare_tui.tui.app import create_app
from compare_tui.tui.screens.help import HelpScreen
from compare_tui.tui.screens.home import HomeScreen
from tests.test_tui_data import build_store, fixed_probe, write_catalogue

SIZE = (80, 24)


@pytest.fixture
def app(tmp_path):
    store, sets = build_store(tmp_path)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


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
