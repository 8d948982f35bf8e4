"""Experiments: every saved experiment with its arms, run counts, pass-rate intervals, flaky
tasks and confound banners.

Read in a worker from `compare_tui.experiment` (the one place experiment figures are
computed, from the runs, each time): this screen only lays `ExperimentFigures` out, so it
shows the numbers `compare-tui experiment show` prints. Self-contained: it takes the store,
so the app wires it with one line and a test can host it alone.

`L` launches the highlighted experiment's missing runs after a confirmation: a worker runs
`compare-tui experiment run NAME` in a child process (the same engine and rules as the command;
a process of its own keeps the UI responsive), then the figures are read again.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.experiment import ExperimentFigures
from compare_tui.experiment.render import (
    INTERVAL_NOTE,
    TASKS_INTERVAL_NOTE,
    banner_lines,
    controls_text,
    interval_cell,
    ms,
    percent,
    sequence_lines,
    tasks_interval_cell,
    tasks_interval_text,
)
from compare_tui.report import fit
from compare_tui.store import Store
from compare_tui.tui.screens.confirm import ConfirmScreen
from compare_tui.tui.screens.store_reader import StoreReaderScreen
from compare_tui.tui.widgets.report_tables import fill
from compare_tui.vocabulary import Consistency

Launcher = Callable[[list[str]], tuple[int, str]]
"""Runs a command line to its end: (exit code, its last lines of output)."""


def run_command(argv: list[str]) -> tuple[int, str]:
    """The default `Launcher`: a child process, its stderr kept for the result line."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
    return done.returncode, lines[-1].removeprefix("compare-tui: ") if lines else ""


@dataclass
class ExperimentLaunched(Message):
    """`compare-tui experiment run NAME` ended."""

    name: str
    code: int
    last_line: str


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


class ExperimentsScreen(StoreReaderScreen[list[ExperimentFigures | Unreadable]]):
    """The list of experiments (top) and the selected one's arms, flaky tasks and confounds."""

    CSS_PATH = "experiments.tcss"
    LOADING_ID = "experiments-table"
    WHAT = "experiments"

    BINDINGS = [Binding("L", "launch", "Launch runs", tooltip="Launch the missing runs")]

    def __init__(self, launcher: Launcher = run_command) -> None:
        """Launched runs use the workspace's store and catalogue."""
        super().__init__()
        self.launcher = launcher
        self.experiments: list[ExperimentFigures | Unreadable] = []
        """What was read last, newest first (the table's rows, in order)."""
        self.launching: str | None = None
        """The experiment whose runs are being launched now."""

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
            "experiment", "set", "arms × N", "runs", "state", "confounds"
        )
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
        state = "✓ complete" if item.complete else f"… {item.to_launch} to launch (L)"
        confounds = f"⚠ {len(item.confounds)}" if item.confounds else "none"
        return [
            Text(item.name),
            Text(f"{item.goldset['workload_id']} {item.goldset['version']}"),
            Text(f"{len(item.arms)} × {item.repeats}"),
            Text(f"{held}/{wanted}"),
            Text(state),
            Text(confounds),
        ]

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
            f"{item.name}: {g['name'] or g['workload_id']} {g['version']} ({g['digest'][:19]}…)"
        )
        self.query_one("#experiment-controls", Static).update(f"controls: {controls_text(item)}")
        # Short cells fitted to the width (`report_tables.fill`: headers wrap, a long arm name
        # wraps, a column left out is named); the notes under the table say what each cell is,
        # and the lines under them name each arm's flaky tasks (so no column counts them).
        width = self.size.width or self.app.size.width
        notes = fill(arms, self.arm_columns(item), width, f"`compare-tui experiment show {item.name}`")
        self.query_one("#experiment-tasks", Static).update("\n".join([*notes, *self._task_lines(item)]))

    @staticmethod
    def arm_columns(item: ExperimentFigures) -> list[fit.Column]:
        """The arms table: both intervals, each under a header naming its rate."""
        arms = item.arms
        return [
            fit.Column("arm", tuple(a.label for a in arms), "label"),
            fit.Column("runs", tuple(f"{a.observed}/{a.desired}" for a in arms)),
            fit.Column("running", tuple(str(len(a.in_flight)) for a in arms)),
            fit.Column("pass (mean)", tuple(percent(a.pass_rate) for a in arms)),
            fit.Column("95% CI this set", tuple(interval_cell(a) for a in arms)),
            fit.Column("95% CI tasks like these", tuple(tasks_interval_cell(a) for a in arms)),
            fit.Column("latency p50", tuple(ms(a.latency_p50_ms.median) for a in arms), drop_rank=0),
        ]

    def on_resize(self) -> None:
        item = self._selected()
        if item is not None:
            self._show(item)

    # ------------------------------------------------------------------ launching

    def _selected(self) -> ExperimentFigures | Unreadable | None:
        table = self.query_one("#experiments-table", DataTable)
        return self.experiments[table.cursor_row] if 0 <= table.cursor_row < len(self.experiments) else None

    def action_launch(self) -> None:
        item = self._selected()
        if self.launching is not None:
            self.notify(f"Still launching the runs of {self.launching}.", severity="warning")
            return
        if item is None or isinstance(item, Unreadable):
            self.notify("Pick a readable experiment to launch its runs.", severity="warning")
            return
        if item.to_launch == 0:
            self.notify(f"{item.name}: nothing to launch (every arm holds or is running its runs).")
            return
        arms = ", ".join(f"{a.label} ×{a.to_launch}" for a in item.arms if a.to_launch)
        body = (
            f"Launch {item.to_launch} run{'s' if item.to_launch != 1 else ''} of {item.name} ({arms}), one "
            "at a time, as `compare-tui experiment run` does: requests go to each arm's endpoint and cost "
            "what New run would estimate. The figures here update when they end; an interrupted run is "
            "resumable (Home, R)."
        )

        def answered(go: bool | None) -> None:
            if go:
                self.launching = item.name
                self.query_one("#experiments-empty", Static).update(
                    f"Launching the runs of {item.name}… (this takes as long as the runs do)"
                )
                self.query_one("#experiments-empty", Static).display = True
                self._launch(item.name)

        self.app.push_screen(ConfirmScreen(f"Launch the runs {item.name} lacks?", body, "Launch"), answered)

    def launch_argv(self, name: str) -> list[str]:
        argv = [
            sys.executable,
            "-m",
            "compare_tui",
            "experiment",
            "run",
            name,
            "--json",
            "--store",
            str(self.store.path),
            "--models",
            str(self.workspace.catalogue_path),
        ]
        return argv

    @work(thread=True, exit_on_error=False, group="experiment-launch", description="launching experiment runs")
    def _launch(self, name: str) -> None:
        code, last = self.launcher(self.launch_argv(name))
        self.post_message(ExperimentLaunched(name, code, last))

    def on_experiment_launched(self, message: ExperimentLaunched) -> None:
        self.launching = None
        self.query_one("#experiments-empty", Static).display = False
        ok = message.code == 0
        self.notify(
            f"{message.name}: {message.last_line or ('runs launched' if ok else 'the launch failed')}",
            title="Experiment runs" + ("" if ok else f" (exit {message.code})"),
            severity="information" if ok else "warning",
            timeout=12,
        )
        self.action_refresh()

    @staticmethod
    def _task_lines(item: ExperimentFigures) -> list[str]:
        lines = []
        for arm in item.arms:
            flaky = ", ".join(
                f"{t.task_id} ({t.passed}/{t.conclusive})" for t in arm.tasks if t.state == Consistency.FLAKY
            )
            lines.append(
                f"{arm.label}: flaky tasks: {flaky or 'none'} · excluded: {arm.human_tasks} scored by a "
                f"person, {arm.inconclusive} inconclusive"
            )
            if arm.tasks_interval is None:
                lines.append(f"{arm.label}: {tasks_interval_text(arm)}")
        lines += [f"note: {note}" for note in item.notes]
        return [*sequence_lines(item, method=False), INTERVAL_NOTE, TASKS_INTERVAL_NOTE, *lines]
