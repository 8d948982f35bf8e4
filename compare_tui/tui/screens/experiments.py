"""Experiments: every saved experiment with its arms, run counts, pass-rate intervals, flaky
tasks and confound banners.

Read in a worker from `compare_tui.experiment` (the one place experiment figures are
computed, from the runs, each time): this screen only lays `ExperimentFigures` out, so it
shows the numbers `compare-tui experiment show` prints. Self-contained: it takes the store,
so the app wires it with one line and a test can host it alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.experiment import ExperimentFigures
from compare_tui.experiment.render import banner_lines, controls_text, interval_text, ms, percent
from compare_tui.store import Store
from compare_tui.tui.screens.store_reader import StoreReaderScreen


@dataclass(frozen=True, slots=True)
class Unreadable:
    """An experiment whose figures could not be computed, and why."""

    name: str
    reason: str


def read_experiments(store: Store) -> list[ExperimentFigures | Unreadable]:
    """Every experiment's figures, newest first (runs in a worker thread: it reads the store)."""
    from compare_tui.experiment import ExperimentConfigError, experiment_figures, load_experiment
    from compare_tui.store import StoreError

    out: list[ExperimentFigures | Unreadable] = []
    for record in store.list_experiments():
        try:
            out.append(experiment_figures(load_experiment(store, record.name)))
        except (StoreError, ExperimentConfigError) as exc:
            out.append(Unreadable(record.name, str(exc)))
    return out


class ExperimentsScreen(StoreReaderScreen):
    """The list of experiments (top) and the selected one's arms, flaky tasks and confounds."""

    CSS_PATH = "experiments.tcss"
    LOADING_ID = "experiments-table"
    WHAT = "experiments"

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.experiments: list[ExperimentFigures | Unreadable] = []
        """What was read last, newest first (the table's rows, in order)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="experiments-empty", markup=False)
        yield DataTable(id="experiments-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="experiment-detail"):
            yield Static("", id="experiment-banner", markup=False)
            yield Static("", id="experiment-title", markup=False)
            yield Static("", id="experiment-controls", markup=False)
            yield DataTable(id="arms-table", cursor_type="none", show_cursor=False)
            yield Static("", id="experiment-tasks", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Experiments"
        self.query_one("#experiments-table", DataTable).add_columns(
            "experiment", "set", "arms × N", "runs", "state", "confounds")
        self.query_one("#experiment-banner", Static).display = False
        self.action_refresh()

    def read_store(self) -> list[ExperimentFigures | Unreadable]:
        return read_experiments(self.store)

    def show_read(self, data: list[ExperimentFigures | Unreadable]) -> None:
        self.experiments = data
        table = self.query_one("#experiments-table", DataTable)
        table.clear()
        for item in self.experiments:
            table.add_row(*self._row(item))
        empty = self.query_one("#experiments-empty", Static)
        empty.update("No experiments yet: make one with `compare-tui experiment new NAME SET --arm A --arm B`.")
        empty.display = not self.experiments
        if self.experiments:
            self._show(self.experiments[0])

    @staticmethod
    def _row(item: ExperimentFigures | Unreadable) -> list[Text]:
        if isinstance(item, Unreadable):
            return [Text(item.name), Text("—"), Text("—"), Text("—"), Text("✗ unreadable"), Text("—")]
        held = sum(a.observed for a in item.arms)
        wanted = sum(a.desired for a in item.arms)
        state = "✓ complete" if item.complete else f"… {item.to_launch} to launch"
        confounds = f"⚠ {len(item.confounds)}" if item.confounds else "none"
        return [Text(item.name), Text(f"{item.goldset['workload_id']} {item.goldset['version']}"),
                Text(f"{len(item.arms)} × {item.repeats}"), Text(f"{held}/{wanted}"), Text(state), Text(confounds)]

    @on(DataTable.RowHighlighted, "#experiments-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.experiments):
            self._show(self.experiments[event.cursor_row])

    def _show(self, item: ExperimentFigures | Unreadable) -> None:
        banner = self.query_one("#experiment-banner", Static)
        arms = self.query_one("#arms-table", DataTable)
        arms.clear(columns=True)
        if isinstance(item, Unreadable):
            banner.display = False
            self.query_one("#experiment-title", Static).update(f"✗ {item.name}: {item.reason}")
            self.query_one("#experiment-controls", Static).update("")
            self.query_one("#experiment-tasks", Static).update("")
            return
        lines = banner_lines(item)
        banner.update("\n".join(lines))
        banner.display = bool(lines)
        g = item.goldset
        self.query_one("#experiment-title", Static).update(
            f"{item.name}: {g['name'] or g['workload_id']} {g['version']} ({g['digest'][:19]}…)")
        self.query_one("#experiment-controls", Static).update(f"controls: {controls_text(item)}")
        arms.add_columns("arm", "runs", "in flight", "pass rate (mean)", "95% CI", "flaky", "latency p50 (median)")
        for arm in item.arms:
            arms.add_row(Text(arm.label), Text(f"{arm.observed}/{arm.desired}"), Text(str(len(arm.in_flight))),
                         Text(percent(arm.pass_rate)), Text(interval_text(arm)),
                         Text(str(len(arm.flaky))), Text(ms(arm.latency_p50_ms.median)))
        self.query_one("#experiment-tasks", Static).update("\n".join(self._task_lines(item)))

    @staticmethod
    def _task_lines(item: ExperimentFigures) -> list[str]:
        lines = []
        for arm in item.arms:
            flaky = ", ".join(f"{t.task_id} ({t.passed}/{t.conclusive})" for t in arm.tasks if t.state == "flaky")
            lines.append(f"{arm.label}: flaky tasks: {flaky or 'none'} · excluded: {arm.human_tasks} scored by a "
                         f"person, {arm.inconclusive} inconclusive")
        lines += [f"note: {note}" for note in item.notes]
        return lines
