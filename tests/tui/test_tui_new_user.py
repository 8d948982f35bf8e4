"""Pilot tests for what a new user hit in the TUI (issue 38): each reproduces the key sequence
of the report first, then checks what the screen does now."""

from __future__ import annotations

import pytest
from textual import events

from compare_tui.tui.app import create_app
from compare_tui.tui.screens.home import HomeScreen
from tests.support.home_app import SIZE, home_app, settle
from tests.tui.test_tui_data import COMPARISON_ID


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


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

    from tests.tui.test_tui_decision import app_for, open_report

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
    from tests.tui.test_tui_decision import app_for, open_report

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


async def test_new_run_preselects_the_promoted_baseline_and_runs_it_first(tmp_path):
    # As `compare-tui run` does: the workload's promoted baseline, when picked, is the baseline
    # (the drop-down said "none"), and the baseline runs first (it ran in list order).
    from textual.widgets import Select

    from compare_tui.store import DecisionRecord
    from compare_tui.tui.screens.new_run import NewRunScreen
    from tests.tui.test_tui_data import SET_NAME, build_store, fixed_probe, write_catalogue

    store, sets = build_store(tmp_path)
    store.record_decision(DecisionRecord(workload_id="support-mini", model="fake-b", kind="initial"))
    catalogue = write_catalogue(tmp_path / "models.toml")
    app = create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    plans = []
    app.open_live = plans.append  # capture the plan instead of starting a run
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_new_run(str(sets / SET_NAME))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NewRunScreen)
        # The promoted baseline comes pre-selected (the recommended set always holds it).
        assert screen.query_one("#model-list").selected == ["fake-b"]
        await pilot.press("space")  # fake-a, the first in the list
        await settle(pilot)
        assert screen.query_one("#baseline-select", Select).value == "fake-b"
        await pilot.press("ctrl+s")
        await settle(pilot)
    [plan] = plans
    assert plan.baseline == "fake-b" and plan.model_names == ("fake-b", "fake-a")
    store.close()


def test_the_eta_says_estimating_until_a_third_of_the_tasks_have_finished():
    # 3 of 11 done in 3 s said "ETA 3 s"; the run took about 60 s (the quick tasks end first).
    from compare_tui.engine.events import AttemptFinished, RunStarted
    from compare_tui.tui.live_tally import LiveTally
    from compare_tui.tui.widgets.model_progress import figures

    now = [0.0]
    tally = LiveTally([("a", 0, "")], clock=lambda: now[0])
    tally.on_event(RunStarted("r1", "a", "set", 11, 0, "verified", "≤ $0.01"))
    for n in range(3):
        now[0] += 1.0
        tally.on_event(AttemptFinished("r1", "a", f"t{n}", 1, "pass", True, 10.0, 100.0, 5, 5))
    [a] = tally.snapshot()
    assert a.eta_s is None and "ETA estimating" in figures(a)
    now[0] += 30.0
    tally.on_event(AttemptFinished("r1", "a", "t3", 1, "pass", True, 10.0, 100.0, 5, 40))
    [a] = tally.snapshot()
    assert a.eta_s == 7 * 33.0 / 4
