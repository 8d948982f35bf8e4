"""What a new user hit in the TUI at 80 columns (issue 55, items 15–18), with real-length texts:
New run's focus, Home's Sets tab, the report's pass-rate table and the tool-call run list. Each
Pilot test reproduces the report's keys first, then checks what the screen does now; the
snapshots show the same screens at 80×24 and, where the layout changes, 120×40."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.widgets import DataTable, Static

from compare_tui.store import Store
from compare_tui.tui.app import create_app
from compare_tui.tui.screens.toolcall import ToolcallScreen
from tests.support.home_app import SIZE, settle
from tests.support.long_texts import (
    INTERRUPTED_AFTER,
    LONG_MODEL,
    LONG_SET_NAME,
    TOOLCALL_RUN_IDS,
    store_toolcall_runs,
    write_long_set,
)
from tests.support.screen_host import ScreenHost
from tests.tui.test_tui_data import build_store, fixed_probe, write_catalogue

WIDE = (120, 40)
SIZES = {"80x24": SIZE, "120x40": WIDE}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "tui.md"


@pytest.fixture
def make_app(tmp_path):
    """The Pilot tests' store with a set named as long as a team's (command-scored tasks among
    others) and a tool-call run interrupted after 19 of 28 scenarios."""
    store, sets = build_store(tmp_path)
    write_long_set(sets / "order-extraction")
    store_toolcall_runs(store)
    catalogue = write_catalogue(tmp_path / "models.toml")
    yield lambda: create_app(store=store, catalogue_path=catalogue, sets_dir=sets, reviewer="tester", probe=fixed_probe)
    store.close()


def widths(table: DataTable) -> int:
    return sum(column.get_render_width(table) for column in table.columns.values())


def labels(table: DataTable) -> list[str]:
    """Each column's header on one line (a header may wrap)."""
    return [" ".join(str(column.label).split()) for column in table.columns.values()]


def row(table: DataTable, key: str) -> dict[str, str]:
    return dict(zip(labels(table), (str(cell) for cell in table.get_row(key)), strict=True))


# ------------------------------------------------------------------ 15. New run: where focus is


async def test_new_run_rings_the_field_with_focus_and_space_acts_on_it(make_app):
    """Focus was on the model list with nothing to show it; Tab then Space opened a menu and
    picked no model. The focused field now wears a heavy ring (shape, not only colour), the
    footer says what Space does on the model list, and the docs say where focus starts."""
    from textual.widgets import Select, SelectionList

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        models = screen.query_one("#model-list", SelectionList)
        baseline = screen.query_one("#baseline-select", Select)
        ring = lambda widget: widget.styles.border_top[0]  # noqa: E731
        current = lambda select: select.query_one("SelectCurrent")  # noqa: E731
        assert app.focused is models
        assert ring(models) == "heavy" and ring(current(baseline)) != "heavy"
        assert models.styles.border_top[1] == Color.parse(app.theme_variables["accent"])  # the theme's, no hex
        footer = {binding.key: binding.description for binding in _shown_bindings(app)}
        assert footer.get("space") == "Toggle model"

        await pilot.press("tab")  # the report's keys, Tab then Space: the ring moves, Space acts there
        await settle(pilot)
        assert app.focused is baseline and ring(current(baseline)) == "heavy" and ring(models) != "heavy"
        assert "space" not in {binding.key for binding in _shown_bindings(app)}
        await pilot.press("space")
        await settle(pilot)
        assert baseline.expanded and not models.selected
        await pilot.press("escape", "shift+tab", "space")
        await settle(pilot)
        assert app.focused is models and models.selected == ["fake-a"]

    section = DOCS.read_text(encoding="utf-8").split("### New run", 1)[1].split("###", 1)[0]
    assert "Focus starts on the model list" in section and "Tab" in section and "shift+Tab" in section


def _shown_bindings(app):
    return [active.binding for active in app.screen.active_bindings.values() if active.binding.show]


# ------------------------------------------------------------------ 16. Home, Sets tab


async def test_home_sets_tab_keeps_the_scorers_whole_with_a_long_set_name(make_app):
    """A 42-character set name pushed the scorers column past the edge: `comman`."""
    from compare_tui.tui.set_cells import SCORERS_WIDTH, fit_list

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        table = app.screen.query_one("#sets-table", DataTable)
        assert widths(table) <= SIZE[0]
        key = next(str(k.value) for k in table.rows if str(k.value).endswith("order-extraction"))
        cells = row(table, key)
        assert cells["scorers"] == fit_list("command×3, exact×2, regex×1", SCORERS_WIDTH) == "command×3 +2 more"
        assert cells["status"] == "✓ valid" and cells["tasks"] == "6"
        assert cells["set"].endswith("…") and LONG_SET_NAME.startswith(cells["set"][:-1])
        table.move_cursor(row=table.get_row_index(key))
        await settle(pilot)
        detail = str(app.screen.query_one("#set-detail", Static).render())
        assert f"{LONG_SET_NAME} 1.0.0" in detail and "sha256:" in detail  # what the table left out, whole

        await pilot.resize_terminal(*WIDE)
        await settle(pilot)
        cells = row(table, key)
        assert cells["set"] == LONG_SET_NAME and cells["digest"].startswith("sha256:")
        assert widths(table) <= WIDE[0]


# ------------------------------------------------------------------ 17. Report: the pass-rate table


async def test_report_pass_rates_keep_pass_beside_fail_at_80_columns(make_app):
    """At 80 columns `✓ pass` was left out while `✗ fail` stayed; the headers wrap instead."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter", "2")
        await settle(pilot)
        table = app.screen.query_one("#pass-table", DataTable)
        shown = labels(table)
        assert {"✓ pass", "✗ fail", "! error"} <= set(shown), shown
        assert widths(table) <= SIZE[0] and table.header_height == 2
        for index in range(table.row_count):
            cells = dict(zip(shown, (str(cell) for cell in table.get_row_at(index)), strict=True))
            assert int(cells["✓ pass"]) + int(cells["✗ fail"]) + int(cells["! error"]) == 10  # the scored tasks
        notes = str(app.screen.query_one("#pass-notes").render())
        assert "✓ pass" not in notes.split("pass rate =")[0]  # not named as left out


# ------------------------------------------------------------------ 18. Tool-call screen: a partial run


async def test_toolcall_run_list_shows_an_interrupted_run_as_partial_at_80_columns(tmp_path):
    """The run list was cut after the endpoint (`end…`): the status of a run stopped after 19 of
    28 scenarios was off the screen."""
    with Store.open(tmp_path / "runs.sqlite") as store:
        store_toolcall_runs(store)
        async with ScreenHost(store, ToolcallScreen).run_test(size=SIZE) as pilot:
            await settle(pilot)
            table = pilot.app.screen.query_one("#toolcall-runs", DataTable)
            assert widths(table) + 1 <= SIZE[0]  # and the focus bar on its left edge
            interrupted, finished = (row(table, run_id) for run_id in reversed(TOOLCALL_RUN_IDS))
            assert interrupted["status"] == f"interrupted {INTERRUPTED_AFTER}/28"
            assert finished["status"] == "finished"
            assert interrupted["model"] == LONG_MODEL and interrupted["outcomes"] == "✓14 ✗5 ⊘0 !0"

            await pilot.resize_terminal(*WIDE)
            await settle(pilot)
            assert labels(table)[-2:] == ["date", "suite"]  # whole again where they fit


def test_how_far_a_run_got_is_told_only_where_it_can_be(tmp_path):
    from dataclasses import replace

    from compare_tui.tui.screens.toolcall import planned_scenarios, status_text

    with Store.open(tmp_path / "runs.sqlite") as store:
        store_toolcall_runs(store)
        from compare_tui.toolcall import ToolcallStore

        run = ToolcallStore(store).get(TOOLCALL_RUN_IDS[1])
    assert planned_scenarios(run) == 28 and status_text(run, 28) == "interrupted 19/28"
    assert planned_scenarios(replace(run, settings={"scenarios": ["S0[1-3]"]})) == 3
    assert planned_scenarios(replace(run, tools_file={"path": "tools.json"})) is None  # its own scenarios
    assert planned_scenarios(replace(run, suite_digest="sha256:" + "0" * 64)) is None  # another suite
    assert status_text(run, None) == "interrupted (19 run)"


# ------------------------------------------------------------------ snapshots


def keys(*presses: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in presses:
            await pilot.press(key)
            await settle(pilot, rounds=2)

    return run_before


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_snapshot_home_sets_with_a_long_name(make_app, snap_compare, size):
    assert snap_compare(make_app(), terminal_size=SIZES[size], run_before=keys("1", "down"))


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_snapshot_toolcall_with_an_interrupted_run(make_app, snap_compare, size):
    assert snap_compare(make_app(), terminal_size=SIZES[size], run_before=keys("t"))


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_snapshot_report_pass_rates(make_app, snap_compare, size):
    assert snap_compare(make_app(), terminal_size=SIZES[size], run_before=keys("enter", "2"))


def test_snapshot_new_run_focus_on_opening(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("n"))


def test_snapshot_new_run_focus_after_tab(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=keys("n", "tab"))


def test_wrapped_headers_take_the_fewest_lines_the_room_allows():
    from compare_tui.report import fit
    from compare_tui.tui.widgets.report_tables import WRAPPED_HEADERS, header_widths, wrap_header

    columns = [
        fit.Column("model", ("meta-llama/Llama-3.1-70B-Instruct-Turbo",), "label"),
        fit.Column("pass rate", ("80.0% (8/10)",)),
        fit.Column("95% CI", ("44.4–97.5%",), drop_rank=5),
        fit.Column("✓ pass", ("8",), drop_rank=1),
        fit.Column("✗ fail", ("2",), drop_rank=3),
        fit.Column("! error", ("0",), drop_rank=4),
        fit.Column("human ✓/✗/?", ("0/0/2",), drop_rank=2),
        fit.Column("· not done", ("0",), drop_rank=0),
    ]
    assert fit.fit_table(columns, 80, fit.DATA_TABLE).dropped  # one-line headers leave columns out
    wrapped = fit.fit_table(columns, 80, WRAPPED_HEADERS)
    assert not wrapped.dropped
    assert max(len(wrap_header(c.header, w)) for c, w in zip(wrapped.columns, wrapped.widths)) == 3  # `·`,`not`,`done`
    widths = header_widths(wrapped, WRAPPED_HEADERS)
    assert max(len(wrap_header(c.header, w)) for c, w in zip(wrapped.columns, widths)) == 2
    assert sum(w + 2 for w in widths) + 2 <= 80 and widths[0] >= fit.LABEL_MIN  # the name gave the room
