"""Pilot tests for rough edges a new user hit (issue 22): New run: money spelled one way, refusal
words, the model checkbox. Each reproduces the key sequence of the report first, then checks
what the screen does now."""

from __future__ import annotations

import pytest

from tests.support.home_app import SIZE, home_app, settle
from tests.tui.test_tui_data import write_catalogue


@pytest.fixture
def app(tmp_path):
    yield from home_app(tmp_path)


# ------------------------------------------------------------------ New run: money, refusal words, checkbox


def test_new_run_preview_spells_money_one_way_adds_up_and_names_no_flag(tmp_path):
    from compare_tui.catalogue import load_catalogue
    from compare_tui.engine import RunOverrides
    from compare_tui.goldset import load_golden_set
    from compare_tui.tui.screens.new_run import _preview_lines
    from compare_tui.tui.spend_preview import preview
    from tests.tui.test_tui_data import write_mini_set

    goldset = load_golden_set(write_mini_set(tmp_path / "set"))
    catalogue = load_catalogue(write_catalogue(tmp_path / "models.toml"))
    entries = [catalogue.get("fake-a"), catalogue.get("fake-b")]
    capped = preview(goldset, entries, RunOverrides(attempts=3), max_cost=0.00001)
    text = "\n".join(_preview_lines(capped, 0.00001)) + "\n".join(r for m in capped.models for r in m.refusals)
    assert "e-0" not in text and "--" not in text, text
    assert "$0.0000100" in text or "$0.00001" in text
    amounts = [float(m.estimate.split("$")[1].split(" ")[0]) for m in capped.models]
    assert round(sum(amounts), capped.decimals) == capped.total_usd  # the lines add up to the total
    assert f"≤ ${capped.total_usd:.{capped.decimals}f}" in text
    assert all("lower attempts or max tokens, or raise the spend cap" in m.refusals[-1] for m in capped.models)


async def test_the_model_checkbox_is_empty_until_picked(app):
    from compare_tui.tui.widgets.model_choices import ModelChoices

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1", "down", "n")
        await settle(pilot)
        choices = app.screen.query_one(ModelChoices)
        line = lambda n: choices.render_line(n).text  # noqa: E731
        assert "X" not in line(0)[:4] and "X" not in line(1)[:4]
        await pilot.press("space")
        await settle(pilot)
        assert "X" in line(0)[:4] and "X" not in line(1)[:4]


# ------------------------------------------------------------------ New run: why ctrl+s started nothing


async def test_ctrl_s_with_no_model_says_why_in_a_toast_and_the_status_line(app):
    from compare_tui.tui.screens.new_run import NewRunScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        status = lambda: str(screen.query_one("#start-status").render())  # noqa: E731
        assert status() == "✗ Not ready: choose at least one model (space ticks the highlighted one)"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is screen and isinstance(screen, NewRunScreen)  # nothing started
        messages = [n.message for n in app._notifications]
        assert messages == ["Nothing started: choose at least one model (space ticks the highlighted one)."]
        # The status line sits above the footer, on screen at 80x24 without scrolling.
        region = screen.query_one("#start-status").region
        assert region.height >= 1 and region.bottom <= SIZE[1] - 1
        await pilot.press("space")
        await settle(pilot)
        assert status() == "Ready: ctrl+s starts 1 model"


async def test_ctrl_s_with_no_valid_golden_set_names_the_folder(tmp_path):
    from compare_tui.tui.app import create_app
    from tests.tui.test_tui_data import build_store, fixed_probe

    store, _ = build_store(tmp_path)
    empty = tmp_path / "no-sets"
    empty.mkdir()
    app = create_app(
        store=store,
        catalogue_path=write_catalogue(tmp_path / "models.toml"),
        sets_dir=empty,
        reviewer="tester",
        probe=fixed_probe,
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.open_new_run(None)
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            [message] = [n.message for n in app._notifications]
            assert (
                message == f"Nothing started: no valid golden set under {empty} (Home's Sets tab lists the problems)."
            )
    finally:
        store.close()
