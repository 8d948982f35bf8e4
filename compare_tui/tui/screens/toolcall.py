"""Tool-call conformance: the scenario table (rows = scenarios, columns = runs of different
models or serving stacks side by side) and the detail view of the highlighted cell.

Read in a worker from `ToolcallStore`; the table itself is `compare_tui.toolcall.results.table`'s
`ScenarioTable` (the same model `compare-tui toolcall show` prints), so both surfaces show
the same outcomes. Every cell carries a symbol and a word (✓ pass, ✗ fail, ⊘ unsupported,
! error, · not run): colour is never the only signal. Self-contained: it takes the store,
so the app wires it with one line and a test can host it alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.store import Store
from compare_tui.toolcall.results.model import ToolcallOutcome, ToolcallRun
from compare_tui.toolcall.results.table import MISSING, ScenarioTable, build_table, detail_lines
from compare_tui.tui.screens.store_reader import StoreReaderScreen

STYLES = {
    ToolcallOutcome.PASS: "green",
    ToolcallOutcome.FAIL: "red bold",
    ToolcallOutcome.UNSUPPORTED: "yellow",
    ToolcallOutcome.ERROR: "magenta",
}
DEFAULT_COLUMNS = 4
"""At most this many runs are shown side by side when the screen opens (space adds more)."""
FIXED = 1
"""The scenario table's leading columns (the scenario's id and name) before the runs."""


def read_toolcall_runs(store: Store, limit: int = 50) -> list[ToolcallRun]:
    """The newest `limit` tool-call runs with their results (runs in a worker thread)."""
    from compare_tui.toolcall.results.storage import ToolcallStore

    tool_runs = ToolcallStore(store)
    return [tool_runs.get(header.id) for header in tool_runs.list_runs(limit=limit)]


def default_selection(runs: Sequence[ToolcallRun], most: int = DEFAULT_COLUMNS) -> list[str]:
    """The newest run of each distinct (model, endpoint, suite) — the official suite and a run
    with your own tools count apart, so a newer run of your tools never hides the official one —
    newest first, at most `most`."""
    seen: set[tuple[str, str, bool]] = set()
    chosen: list[str] = []
    for run in runs:
        key = (run.model_name, run.endpoint, bool(getattr(run, "tools_file", None)))
        if key not in seen and len(chosen) < most:
            seen.add(key)
            chosen.append(run.id)
    return chosen


SCENARIO_WIDTH = 32
"""The scenario column's widest cell: its id and name, cut with "…" past this."""


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tally_text(run: ToolcallRun) -> str:
    counts = run.counts()
    return f"✓{counts['pass']} ✗{counts['fail']} ⊘{counts['unsupported']} !{counts['error']}"


class ToolcallScreen(StoreReaderScreen[list[ToolcallRun]]):
    """Runs (top: space picks the columns), the scenario table, and the highlighted cell."""

    CSS_PATH = "toolcall.tcss"
    BINDINGS = [Binding("space", "toggle_run", "Show/hide run")]  # with the base's g and Esc
    LOADING_ID = "toolcall-runs"
    WHAT = "tool-call runs"

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[ToolcallRun] = []
        """Newest first: the run list's rows, in order."""
        self.selected: list[str] = []
        """Run ids shown as columns, in run-list order."""
        self.table: ScenarioTable | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="toolcall-empty", markup=False)
        yield DataTable(id="toolcall-runs", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="scenario-table", cursor_type="cell", zebra_stripes=True)
        # The panes under the table scroll with the mouse but take no focus: Tab goes between
        # the run list and the scenario table, as docs/tui.md says.
        with VerticalScroll(id="cell-detail-box", can_focus=False):
            yield Static("", id="cell-detail", markup=False)
        with VerticalScroll(id="toolcall-legend-box", can_focus=False):
            yield Static("", id="toolcall-legend", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Tool-call conformance"
        self.query_one("#toolcall-runs", DataTable).add_columns(
            "shown", "run", "model", "outcomes", "date", "endpoint", "suite", "status"
        )
        self.action_refresh()

    def read_store(self) -> list[ToolcallRun]:
        return read_toolcall_runs(self.store)

    def show_read(self, data: list[ToolcallRun]) -> None:
        self.runs = data
        ids = {run.id for run in self.runs}
        kept = [i for i in self.selected if i in ids]
        self.selected = kept or default_selection(self.runs)
        runs_table = self.query_one("#toolcall-runs", DataTable)
        empty = self.query_one("#toolcall-empty", Static)
        empty.update("No tool-call runs yet: run one with `compare-tui toolcall --model NAME`.")
        empty.display = not self.runs
        first_read = not runs_table.row_count
        self._fill_runs()
        self._fill_scenarios()
        if first_read and self.runs:
            self.query_one("#scenario-table").focus()  # the table is what one came for; Tab reaches the list

    def _fill_runs(self) -> None:
        runs_table = self.query_one("#toolcall-runs", DataTable)
        cursor = runs_table.cursor_row
        runs_table.clear()
        for run in self.runs:
            shown = "● shown" if run.id in self.selected else "○"
            runs_table.add_row(
                Text(shown),
                Text(run.id[:12]),
                Text(run.model_name),
                Text(tally_text(run)),
                Text(run.created_at[:16].replace("T", " ")),
                Text(run.endpoint),
                Text(run.suite_version),
                Text(run.status),
                key=run.id,
            )
        if self.runs:
            runs_table.move_cursor(row=min(cursor, len(self.runs) - 1))

    def _fill_scenarios(self) -> None:
        by_id = {run.id: run for run in self.runs}
        shown = [by_id[i] for i in self.selected if i in by_id]
        table = build_table(shown)
        self.table = table
        grid = self.query_one("#scenario-table", DataTable)
        grid.clear(columns=True)
        grid.add_columns("scenario", *(column.label for column in table.columns))
        for row in table.rows:
            cells = [
                Text(MISSING + " not run", style="dim") if cell is None else Text(cell.text, style=STYLES[cell.outcome])
                for cell in row.cells
            ]
            # A tool name of your own may be 100 characters: cut here (the detail pane has it
            # whole) so the runs' columns stay on screen at 80 columns.
            grid.add_row(Text(_cut(f"{row.scenario_id} {row.name}", SCENARIO_WIDTH)), *cells)
        legend = [table.legend, *(f"• {caveat}" for caveat in table.caveats)] if shown else []
        self.query_one("#toolcall-legend", Static).update("\n".join(legend))
        if table.rows and table.columns:
            grid.move_cursor(row=0, column=FIXED)
        self._show_cell(0, FIXED)

    def action_toggle_run(self) -> None:
        runs_table = self.query_one("#toolcall-runs", DataTable)
        if not self.runs or not 0 <= runs_table.cursor_row < len(self.runs):
            return
        if self.focused is not runs_table:
            # Space acts on the run highlighted in the list; from the table it would toggle a
            # run the user cannot see is highlighted.
            self.notify("Space shows or hides the run highlighted in the run list: Tab to the list first.")
            return
        run_id = self.runs[runs_table.cursor_row].id
        if run_id in self.selected:
            self.selected.remove(run_id)
        else:
            self.selected.append(run_id)
        order = {run.id: n for n, run in enumerate(self.runs)}
        self.selected.sort(key=order.__getitem__)
        self._fill_runs()
        self._fill_scenarios()

    @on(DataTable.CellHighlighted, "#scenario-table")
    def _highlighted(self, event: DataTable.CellHighlighted) -> None:
        self._show_cell(event.coordinate.row, event.coordinate.column)

    def _show_cell(self, row: int, column: int) -> None:
        self.query_one("#cell-detail", Static).update("\n".join(self.cell_lines(row, column)))

    def cell_lines(self, row: int, column: int) -> list[str]:
        """The detail view of one cell of the scenario table (what the pane below it shows)."""
        table = self.table
        if table is None or not table.columns:
            return ["No run is shown: pick runs in the list above with space."] if self.runs else []
        if not 0 <= row < len(table.rows):
            return []
        scenario = table.rows[row]
        if column < FIXED:
            heads = [f"{scenario.scenario_id} {scenario.name}: {scenario.title}"]
            return heads + [
                f"  {c.label}: {cell.text if cell else MISSING + ' not run'}"
                for c, cell in zip(table.columns, scenario.cells)
            ]
        head = table.columns[column - FIXED]
        cell = table.cell(row, column - FIXED)
        if cell is None:
            return [
                f"{scenario.scenario_id} {scenario.name}: {scenario.title}",
                f"{MISSING} not run by {head.label} (the run did not reach it, or used another suite)",
            ]
        lines = detail_lines(cell.result, head)
        if head.server_notes:
            lines.append("server said: " + "; ".join(head.server_notes))
        if head.user_notes:
            lines.append(
                "serving notes (stated, not verified): " + ", ".join(f"{k}={v}" for k, v in head.user_notes.items())
            )
        return lines
