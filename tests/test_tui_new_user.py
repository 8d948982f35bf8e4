"""Pilot tests for what a new user hit in the TUI (issue 38): each reproduces the key sequence
of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual import events

from compare_tui.tui.screens.home import HomeScreen
from tests.test_tui_rough_edges import SIZE, app, settle

__all__ = ["app"]

HOME_KEYS = sorted(b.key for b in HomeScreen.BINDINGS if len(b.key) == 1)


@pytest.mark.parametrize("key", HOME_KEYS)
async def test_a_key_typed_right_after_q_never_crashes_the_quit(app, key):
    # `tmux send-keys -l "qe"`: both keys arrive before the app has torn down.
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.post_message(events.Key("q", "q"))
        app.post_message(events.Key(key, key))
        await pilot.pause()
        await pilot.pause()
    assert app.return_code == 0
