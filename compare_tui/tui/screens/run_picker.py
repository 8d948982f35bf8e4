"""Pick the two runs of an A/B diff: base run A, then compared run B. Runs over the same golden
set digest as A are listed first; the others carry a warning. Dismisses with a `RunPair`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from compare_tui.store import RunRecord
from compare_tui.tui.home_data import run_date
from compare_tui.tui.plain_text import plain_row

if TYPE_CHECKING:
    from compare_tui.tui.screen_base import Navigator

LIMIT = 500


@dataclass(frozen=True, slots=True)
class RunPair:
    """Base run A and compared run B (exact ids)."""

    run_a: str
    run_b: str


class RunPickerScreen(ModalScreen[RunPair | None]):
    CSS_PATH = "run_picker.tcss"
    BINDINGS = [
        Binding("enter", "pick", "Pick", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, preselected: str | None = None) -> None:
        super().__init__()
        self.preselected = preselected
        self._picked_a_here = False
        """A was picked in this picker (Esc steps back to picking A), not handed in (Esc closes)."""
        self.runs: list[RunRecord] = []
        self.shown: list[RunRecord] = []
        self.run_a: RunRecord | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static("", id="picker-title", markup=False)
            yield DataTable(id="picker-table", cursor_type="row", zebra_stripes=True, cell_padding=1)
            yield Static("Enter picks · Esc goes back", id="picker-hint")

    def on_mount(self) -> None:
        # Model and status before the set: at 80 columns the last column is the one cut, and
        # the mark already says whether a run is on A's set.
        self.query_one(DataTable).add_columns("", "run", "date (UTC)", "model", "status", "set")
        self.load()

    @work(thread=True, exit_on_error=False, description="listing runs")
    def load(self) -> None:
        runs = cast("Navigator", self.app).workspace.store.list_runs(limit=LIMIT)
        self.app.call_from_thread(self._loaded, runs)

    def _loaded(self, runs: list[RunRecord]) -> None:
        self.runs = runs
        chosen = next((r for r in runs if r.id == self.preselected), None)
        if chosen is not None:
            self.run_a = chosen
        self._show()

    def _show(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        if self.run_a is None:
            title = "Pick base run A"
            self.shown = list(self.runs)
        else:
            a = self.run_a
            title = f"A = {a.model_name} ({a.id[:8]}, {a.goldset_id} {a.goldset_version}). Pick compared run B"
            others = [r for r in self.runs if r.id != a.id]
            self.shown = sorted(others, key=lambda r: r.goldset_digest != a.goldset_digest)
        for run in self.shown:
            mark, set_text = "", f"{run.goldset_id} {run.goldset_version}"
            if self.run_a is not None:
                same = run.goldset_digest == self.run_a.goldset_digest
                mark, set_text = ("✓ same", "A's set") if same else ("⚠ other", set_text)
            table.add_row(
                *plain_row(mark, run.id[:8], run_date(run.created_at), run.model_name, run.status, set_text), key=run.id
            )
        if not self.shown:
            title += " (no runs to pick: start one with n on Home)"
        self.query_one("#picker-title", Static).update(title)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_pick()

    def action_pick(self) -> None:
        table = self.query_one(DataTable)
        if not self.shown or not 0 <= table.cursor_row < len(self.shown):
            return
        run = self.shown[table.cursor_row]
        if self.run_a is None:
            self.run_a, self._picked_a_here = run, True
            self._show()
        else:
            self.dismiss(RunPair(self.run_a.id, run.id))

    def action_back(self) -> None:
        if self.run_a is not None and self._picked_a_here:
            self.run_a, self._picked_a_here = None, False
            self._show()
        else:
            self.dismiss(None)
