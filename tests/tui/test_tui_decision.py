"""The TUI's decision: the report leads with the versus-baseline verdicts; `P` promotes after a
confirmation that shows what will be recorded, or says why not; Home shows a set's baseline."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from compare_tui.tui.app import create_app
from compare_tui.tui.screens.confirm import ConfirmScreen
from compare_tui.tui.screens.refusal import RefusalScreen
from compare_tui.tui.screens.report import ReportScreen
from tests.support.home_app import settle
from tests.tui.test_tui_data import COMPARISON_ID, build_store, fixed_probe, write_catalogue


def app_for(tmp_path, baseline: str | None = None):
    store, sets = build_store(tmp_path)
    if baseline:
        store.set_comparison_baseline(COMPARISON_ID, baseline)
    catalogue = write_catalogue(tmp_path / "models.toml")
    return store, create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)


async def open_report(pilot):
    await settle(pilot)
    pilot.app.open_report(COMPARISON_ID)
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReportScreen)
    return pilot.app.screen


async def test_the_report_leads_with_the_decision_and_p_refuses_an_inconclusive_candidate(tmp_path):
    store, app = app_for(tmp_path, baseline="smollm2-135m")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_report(pilot)
        decision = screen.query_one("#decision", Static)
        assert decision.display and str(decision.render()).startswith("Keep smollm2-135m")
        table = screen.query_one("#versus-table", DataTable)
        assert table.row_count == 1 and "inconclusive" in str(table.get_row_at(0))
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(pilot.app.screen, RefusalScreen)
        assert "refused: gemma3-270m is inconclusive against smollm2-135m" in pilot.app.screen.reason
        assert "--force --reason" in pilot.app.screen.reason
        await pilot.press("enter")
        assert store.baseline_history("support-mini") == []
    store.close()


async def test_p_sets_a_first_baseline_after_confirmation_and_home_shows_it(tmp_path):
    store, app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_report(pilot)
        assert not screen.query_one("#decision", Static).display  # no baseline: as before
        await pilot.press("P")
        await settle(pilot)
        confirm = pilot.app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert "gemma3-270m becomes workload support-mini's first baseline (initial" in confirm.body
        assert "Will record: workload support-mini → gemma3-270m (initial)" in confirm.body
        await pilot.press("escape")  # cancel: nothing written
        await settle(pilot)
        assert store.baseline_history("support-mini") == []
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        [decision] = store.baseline_history("support-mini")
        assert (decision.model, decision.kind, decision.decided_by) == ("gemma3-270m", "initial", "tester")
        # The report rebuilt against the new baseline: gemma3-270m is now the one judged against.
        assert str(screen.query_one("#decision", Static).render()).startswith("Keep gemma3-270m")
        pilot.app.pop_screen()
        await settle(pilot)
        home = pilot.app.screen
        home.action_refresh()
        await settle(pilot)
        home.action_tab("sets")
        sets = home.query_one("#sets-table", DataTable)
        sets.move_cursor(row=[key.value for key in sets.rows].index(str(tmp_path / "sets" / "support-mini")))
        await settle(pilot)
        detail = str(pilot.app.screen.query_one("#set-detail", Static).render())
        assert "baseline: gemma3-270m (initial" in detail and "by tester" in detail
    store.close()


async def test_the_summary_shows_stored_grades_only_when_there_are_some(tmp_path):
    from tests.tui.test_tui_snapshots import store_grades

    store, app = app_for(tmp_path, baseline="smollm2-135m")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_report(pilot)
        assert not screen.query_one("#grades").display and not screen.query_one("#grades-title").display
        store_grades(store)
        await pilot.press("g")  # rebuild: grades are read from the store with the report
        await settle(pilot)
        section = screen.query_one("#grades", Static)
        text = str(section.render())
        assert section.display and "judge judge-x · rubric quality · 24 calls, 1 failed" in text
        assert "smollm2-135m  mean 3.50 (95% CI 2.59–4.18)" in text and "· 1 failed" in text
        assert "vs baseline: Δ mean +0.70 over 10 tasks (▲7 ▼1 =2); sign test p 0.070: within noise" in text
    store.close()
