"""The Experiments screen driven through Pilot over a store made by the real CLI against fake
servers: the list, an arm's counts and both intervals (this set under re-running, tasks like
these), flaky tasks, the confound banner, keys; snapshots at 80×24 and 120×40 with real-length
model names."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from compare_tui.experiment import experiment_figures, load_experiment
from compare_tui.experiment.render import (
    TOO_FEW_TASKS,
    arm_lines,
    interval_cell,
    ms,
    percent,
    tasks_interval_cell,
    tasks_interval_text,
)
from compare_tui.store import Store
from compare_tui.tui.screens.experiments import ExperimentsScreen
from tests.core.experiment.test_experiment_helpers import (
    OTHER_MODEL,
    catalogue,
    cli,
    entry,
    six_task_experiment,
    three_task_set,
)
from tests.support.fake_openai import FakeServer, text
from tests.support.home_app import settle
from tests.support.long_texts import LONG_MODEL
from tests.support.screen_host import ScreenHost


def Host(store: Store) -> ScreenHost:  # noqa: N802 - reads as the app it builds
    return ScreenHost(store, ExperimentsScreen)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """Two experiments: `steady` (no confound) and `drifting` (beta's server rebuilt midway)."""
    tmp = tmp_path_factory.mktemp("experiments-tui")
    alpha_plan = {"t1": text("ok"), "t2": [text("ok"), text("no")], "t3": text("no")}
    with FakeServer(alpha_plan) as alpha, FakeServer({"t1": text("ok"), "t2": text("ok"), "t3": text("ok")}) as beta:
        models = str(catalogue(tmp / "models.toml", entry(alpha.url, "alpha"), entry(beta.url, "beta")))
        goldset = str(three_task_set(tmp / "set"))
        store = str(tmp / "runs.sqlite")
        common = ("--models", models, "--store", store)
        assert (
            cli(
                "experiment", "new", "steady", goldset, "--arm", "alpha", "--arm", "beta", "--repeats", "2", *common
            ).code
            == 0
        )
        assert cli("experiment", "run", "steady", "--json", *common).code == 0
        beta.props = {**beta.props, "build_info": "b2-rebuilt"}
        assert (
            cli(
                "experiment", "new", "drifting", goldset, "--arm", "alpha", "--arm", "beta", "--repeats", "3", *common
            ).code
            == 0
        )
        assert cli("experiment", "run", "drifting", "--json", *common).code == 0
    return store


def cell_text(table: DataTable, row: int, column: int) -> str:
    return str(table.get_row_at(row)[column])


async def test_the_screen_lists_experiments_with_counts_intervals_flaky_tasks_and_confounds(store_path):
    with Store.open(store_path) as store:
        expected = experiment_figures(load_experiment(store, "drifting"))
        async with Host(store).run_test(size=(130, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExperimentsScreen)
            table = screen.query_one("#experiments-table", DataTable)
            assert table.row_count == 2
            # Newest first: `drifting` is shown, with its confound banner.
            assert [cell_text(table, 0, c) for c in range(6)] == [
                "drifting",
                "engine-test 1.0.0",
                "2 × 3",
                "6/6",
                "✓ complete",
                "⚠ 1",
            ]
            banner = screen.query_one("#experiment-banner", Static)
            assert banner.display and "CONFOUND" in str(banner.render()) and "b2-rebuilt" in str(banner.render())
            arms = screen.query_one("#arms-table", DataTable)
            alpha = expected.arms[0]
            assert [cell_text(arms, 0, c) for c in range(7)] == [
                "alpha",
                "3/3",
                "0",
                percent(alpha.pass_rate),
                interval_cell(alpha),
                "– (<5 tasks)",
                ms(alpha.latency_p50_ms.median),
            ]
            tasks = str(screen.query_one("#experiment-tasks", Static).render())
            assert "alpha: flaky tasks: t2 (" in tasks and "beta: flaky tasks: none" in tasks
            # Three tasks: no "tasks like these" interval, said in the CLI's words.
            assert f"alpha: {TOO_FEW_TASKS}" in tasks and TOO_FEW_TASKS in "\n".join(arm_lines(alpha))

            await pilot.press("down")  # the older experiment: no confound, no banner
            await pilot.pause()
            assert not banner.display
            assert "steady" in str(screen.query_one("#experiment-title", Static).render())

            await pilot.press("g")  # refresh reads the store again, same figures
            await settle(pilot)
            assert table.row_count == 2 and cell_text(table, 0, 0) == "drifting"

            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(pilot.app.screen, ExperimentsScreen)


async def test_an_empty_store_says_how_to_make_an_experiment(tmp_path):
    with Store.open(tmp_path / "empty.sqlite") as store:
        async with Host(store).run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            empty = pilot.app.screen.query_one("#experiments-empty", Static)
            assert empty.display and "experiment new" in str(empty.render())


async def test_L_launches_the_missing_runs_in_a_worker_after_asking(tmp_path):  # noqa: N802 - the key is L
    from compare_tui.tui.screens.confirm import ConfirmScreen

    with FakeServer({"t1": text("ok"), "t2": text("ok"), "t3": text("no")}) as server:
        models = catalogue(tmp_path / "models.toml", entry(server.url, "alpha"), entry(server.url, "beta"))
        goldset = str(three_task_set(tmp_path / "set"))
        store_file = tmp_path / "runs.sqlite"
        assert (
            cli(
                "experiment",
                "new",
                "pending",
                goldset,
                "--arm",
                "alpha",
                "--arm",
                "beta",
                "--repeats",
                "1",
                "--models",
                str(models),
                "--store",
                str(store_file),
            ).code
            == 0
        )
        with Store.open(store_file) as store:
            host = ScreenHost(store, ExperimentsScreen, catalogue_path=models)
            async with host.run_test(size=(100, 30)) as pilot:
                await settle(pilot)
                screen = pilot.app.screen
                table = screen.query_one("#experiments-table", DataTable)
                assert cell_text(table, 0, 4) == "… 2 to launch (L)"
                await pilot.press("L")
                await pilot.pause()
                assert isinstance(pilot.app.screen, ConfirmScreen)
                await pilot.press("escape")  # asked, declined: nothing launched
                await settle(pilot)
                assert pilot.app.screen is screen and store.list_runs() == []
                await pilot.press("L", "y")
                await settle(pilot)
                await settle(pilot)  # the worker ends, then the figures are read again
                assert screen.launching is None
                assert cell_text(table, 0, 3) == "2/2" and cell_text(table, 0, 4) == "✓ complete"
                assert len(store.list_runs()) == 2


# ------------------------------------------------------------------ both intervals, real-length names


@pytest.fixture(scope="module")
def six_task_store(tmp_path_factory):
    return six_task_experiment(tmp_path_factory.mktemp("experiments-six"))


async def test_each_arm_shows_both_intervals_the_cli_prints_under_headers_naming_their_rate(six_task_store):
    with Store.open(six_task_store) as store:
        figures = experiment_figures(load_experiment(store, "helpdesk"))
        async with Host(store).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            arms = screen.query_one("#arms-table", DataTable)
            headers = [" ".join(str(c.label).split()) for c in arms.columns.values()]
            assert "95% CI this set" in headers and "95% CI tasks like these" in headers
            this_set, like = headers.index("95% CI this set"), headers.index("95% CI tasks like these")
            shown = cli("experiment", "show", "helpdesk", "--store", six_task_store).out
            for row, arm in enumerate(figures.arms):
                assert arm.tasks_interval is not None and arm.interval is not None
                # The same figures as `experiment show`: one computation, spelled by render.
                assert cell_text(arms, row, this_set) == interval_cell(arm)
                assert cell_text(arms, row, like) == tasks_interval_cell(arm)
                assert tasks_interval_cell(arm) in tasks_interval_text(arm)
                assert tasks_interval_text(arm) in shown and interval_cell(arm) in shown
            # Nothing left out, nothing wider than the screen.
            assert len(headers) == 7
            assert sum(c.get_render_width(arms) for c in arms.columns.values()) <= 80 - 2
            notes = str(screen.query_one("#experiment-tasks", Static).render())
            assert "95% CI this set: of this set's mean pass rate under re-running" in notes
            assert "95% CI tasks like these: of the rate on tasks like these" in notes
            assert TOO_FEW_TASKS not in notes


async def snapshot_keys(pilot) -> None:
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot_experiment_with_both_intervals(six_task_store, snap_compare, size):
    with Store.open(six_task_store) as store:
        assert snap_compare(Host(store), terminal_size=size, run_before=snapshot_keys)


@pytest.fixture(scope="module")
def two_run_store(tmp_path_factory):
    """`tiny`: real-length model names, two runs over three tasks: the widest cells (`range
    100.0–100.0 %`, `– (<5 tasks)`)."""
    tmp = tmp_path_factory.mktemp("experiments-two")
    with FakeServer({"t1": text("ok"), "t2": [text("ok"), text("no")], "t3": text("no")}) as a, FakeServer({}) as b:
        models = str(catalogue(tmp / "models.toml", entry(a.url, LONG_MODEL), entry(b.url, OTHER_MODEL)))
        common = ("--models", models, "--store", str(tmp / "runs.sqlite"))
        new = ("experiment", "new", "tiny", str(three_task_set(tmp / "set")), "--arm", LONG_MODEL, "--arm", OTHER_MODEL)
        assert cli(*new, "--repeats", "2", *common).code == 0
        assert cli("experiment", "run", "tiny", "--json", *common).code == 0
    return str(tmp / "runs.sqlite")


async def test_at_80_columns_the_widest_cells_fit_and_a_column_left_out_names_experiment_show(two_run_store):
    # One-line headers overflowed 80 columns even with latency left out (a cut `95% CI tas`).
    with Store.open(two_run_store) as store:
        async with Host(store).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            arms = screen.query_one("#arms-table", DataTable)
            headers = [" ".join(str(c.label).split()) for c in arms.columns.values()]
            assert headers[-2:] == ["95% CI this set", "95% CI tasks like these"]
            assert sum(c.get_render_width(arms) for c in arms.columns.values()) <= 80 - 2
            assert cell_text(arms, 0, 5) == "– (<5 tasks)" and cell_text(arms, 0, 4).startswith("range ")
            notes = str(screen.query_one("#experiment-tasks", Static).render())
            assert "Not shown at 80 columns: latency p50" in notes and "`compare-tui experiment show tiny`" in notes
            assert f"{LONG_MODEL}: {TOO_FEW_TASKS}" in notes


def test_snapshot_experiment_with_two_runs_and_three_tasks_at_80x24(two_run_store, snap_compare):
    with Store.open(two_run_store) as store:
        assert snap_compare(Host(store), terminal_size=(80, 24), run_before=snapshot_keys)
