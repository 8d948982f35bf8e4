"""The tool-call scenario table screen driven through Pilot over a store made by the real CLI
against scripted servers: runs side by side, symbols and words in every cell, the detail
view of a cell, choosing the columns, and the app's way in."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from compare_tui.store import Store
from compare_tui.toolcall import ToolcallStore
from compare_tui.tui.screens.toolcall import ToolcallScreen, default_selection
from tests.core.toolcall.test_toolcall_cli import PARIS, toolcall
from tests.support.fake_openai import FakeServer, http_error
from tests.support.home_app import settle
from tests.support.screen_host import ScreenHost


def Host(store: Store) -> ScreenHost:  # noqa: N802 - reads as the app it builds
    return ScreenHost(store, ToolcallScreen)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """alpha answers every scenario with get_weather(Paris); beta's server refuses tools (no Jinja)."""
    tmp = tmp_path_factory.mktemp("toolcall-tui")

    class Capture:  # the CLI helper wants capsys; these runs' output is not under test here
        def readouterr(self):
            class Out:
                out = err = ""

            return Out()

    with (
        FakeServer(default=PARIS) as good,
        FakeServer(default=http_error(500, "tools param requires --jinja flag")) as bad,
    ):
        toolcall(tmp, good.url, "--scenario", "S0[1-3]", capsys=Capture(), name="alpha")
        toolcall(tmp, bad.url, "--scenario", "S0[12]", capsys=Capture(), name="beta")
    return tmp / "runs.sqlite"


def row_text(table: DataTable, row: int) -> list[str]:
    return [str(cell) for cell in table.get_row_at(row)]


def detail(screen) -> str:
    return str(screen.query_one("#cell-detail", Static).render())


async def test_runs_side_by_side_with_symbols_and_a_detail_per_cell(store_path):
    with Store.open(store_path) as store:
        newest, older = ToolcallStore(store).list_runs()
        async with Host(store).run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ToolcallScreen)
            runs = screen.query_one("#toolcall-runs", DataTable)
            assert runs.row_count == 2 and screen.selected == [newest.id, older.id]
            assert row_text(runs, 0)[:4] == ["● shown", newest.id[:8], "finished", "beta"]
            assert row_text(runs, 0)[4] == "✓0 ✗0 ⊘2 !0"
            grid = screen.query_one("#scenario-table", DataTable)
            assert [str(c.label) for c in grid.columns.values()] == [
                "scenario",
                f"beta {newest.id[:6]}",
                f"alpha {older.id[:6]}",
            ]
            assert [row_text(grid, r)[0] for r in range(grid.row_count)] == [
                "S01 simple.basic",
                "S02 simple.enum",
                "S03 simple.types",
            ]
            # Symbol and word in every cell; a scenario one run never reached reads "not run".
            assert row_text(grid, 0)[1:] == ["⊘ unsupported", "✓ pass"]
            assert row_text(grid, 2)[1] == "· not run"
            legend = str(screen.query_one("#toolcall-legend", Static).render())
            assert "⊘ unsupported" in legend and "not the model" in legend

            # The cursor starts on the first run's first cell, and its detail is shown.
            text = detail(screen)
            assert text.startswith("S01 simple.basic") and "⊘ unsupported" in text
            assert "tools param requires --jinja flag" in text or "--jinja" in text
            await pilot.press("right")
            text = detail(screen)
            assert "✓ pass" in text and f"run {older.id}" in text and "call get_weather" in text
            await pilot.press("down", "down", "left")
            assert "not run by beta" in detail(screen)
            await pilot.press("left")  # the scenario's own column: every run's outcome
            assert f"beta {newest.id[:6]}: · not run" in detail(screen)


async def test_space_chooses_the_columns_and_refresh_keeps_the_choice(store_path):
    with Store.open(store_path) as store:
        newest, older = ToolcallStore(store).list_runs()
        async with Host(store).run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            screen.query_one("#toolcall-runs", DataTable).focus()
            await pilot.press("space")  # hide beta (the highlighted, newest run)
            grid = screen.query_one("#scenario-table", DataTable)
            assert screen.selected == [older.id] and len(grid.columns) == 2
            assert row_text(screen.query_one("#toolcall-runs", DataTable), 0)[0] == "○"
            await pilot.press("g")
            await settle(pilot)
            assert screen.selected == [older.id]
            await pilot.press("down", "space")  # hide alpha too: nothing shown, the screen says what to do
            assert screen.selected == [] and "pick runs" in detail(screen)
            await pilot.press("escape")
            assert not isinstance(pilot.app.screen, ToolcallScreen)


async def test_an_empty_store_says_how_to_make_a_run(tmp_path):
    with Store.open(tmp_path / "empty.sqlite") as store:
        async with Host(store).run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            empty = pilot.app.screen.query_one("#toolcall-empty", Static)
            assert empty.display and "compare-tui toolcall --model" in str(empty.render())


def test_default_columns_are_the_newest_run_of_each_model_and_endpoint():
    class Run:
        def __init__(self, id, model, endpoint):
            self.id, self.model_name, self.endpoint = id, model, endpoint

    runs = [
        Run("r5", "a", "u1"),
        Run("r4", "a", "u1"),
        Run("r3", "a", "u2"),
        Run("r2", "b", "u1"),
        Run("r1", "c", "u1"),
        Run("r0", "d", "u1"),
    ]
    assert default_selection(runs) == ["r5", "r3", "r2", "r1"]
    assert default_selection(runs, most=2) == ["r5", "r3"]


async def test_tab_goes_straight_between_table_and_list_and_space_acts_only_in_the_list(store_path):
    # Tab ×3 (detail, legend, then the list) reached the run list; space toggled the first run
    # from the scenario table, where nothing showed which run was highlighted.
    with Store.open(store_path) as store:
        async with Host(store).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert screen.focused is screen.query_one("#scenario-table", DataTable)
            before = list(screen.selected)
            await pilot.press("space")
            assert screen.selected == before
            await pilot.press("tab")
            assert screen.focused is screen.query_one("#toolcall-runs", DataTable)
            await pilot.press("tab")
            assert screen.focused is screen.query_one("#scenario-table", DataTable)


def test_a_run_of_your_own_tools_does_not_hide_the_official_suite_run():
    class Run:
        def __init__(self, id, tools_file=None):
            self.id, self.model_name, self.endpoint, self.tools_file = id, "a", "u1", tools_file

    runs = [Run("mcp", {"path": "tools.json"}), Run("official")]
    assert default_selection(runs) == ["mcp", "official"]


def test_a_long_tool_name_is_cut_in_the_scenario_column():
    from compare_tui.tui.screens.toolcall import SCENARIO_WIDTH, _cut

    name = "U01 " + "x" * 100
    assert len(_cut(name, SCENARIO_WIDTH)) == SCENARIO_WIDTH and _cut(name, SCENARIO_WIDTH).endswith("…")
