"""Pilot tests for what a new user hit in the TUI (issue 38): each reproduces the key sequence
of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual import events

from compare_tui.tui.screens.home import HomeScreen
from tests.test_tui_data import COMPARISON_ID
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


async def test_the_published_path_shows_whole_in_its_toast_at_80_columns(tmp_path, monkeypatch):
    # A 40-column toast cut the path `…/bund` / `les/…`: it is for copying, so it shows on one line.
    from textual.widgets._toast import Toast

    from tests.test_tui_decision import app_for, open_report

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / ".local" / "share"))
    store, app = app_for(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_report(pilot)
        await pilot.press("b")
        await settle(pilot)
        path = f"~/.local/share/compare-tui/bundles/{COMPARISON_ID}/index.html"
        await pilot.pause(0.3)
        toasts = [t for t in app.screen.query(Toast) if path in str(t.render())]
        assert toasts, "no toast names the page"
        assert toasts[0].content_region.width >= len(path)
    store.close()


async def test_p_does_not_offer_the_baseline_already_promoted(tmp_path):
    from compare_tui.cli import main
    from compare_tui.tui.screens.confirm import ConfirmScreen
    from compare_tui.tui.screens.refusal import RefusalScreen
    from tests.test_tui_decision import app_for, open_report

    store, app = app_for(tmp_path, baseline="smollm2-135m")
    forced = ["promote", COMPARISON_ID, "--model", "gemma3-270m", "--force", "--reason", "we run it"]
    assert main([*forced, "--store", str(store.path)]) == 0
    async with app.run_test(size=(80, 24)) as pilot:
        await open_report(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert not isinstance(app.screen, (ConfirmScreen, RefusalScreen))
        assert any("gemma3-270m is already the baseline" in n.message for n in app._notifications)
    assert len(store.baseline_history("support-mini")) == 1
    store.close()
