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
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from compare_tui.store import Store
from compare_tui.toolcall.results.model import ToolcallOutcome, ToolcallRun, ToolcallRunStatus
from compare_tui.toolcall.results.table import MISSING, ScenarioTable, build_table, detail_lines
from compare_tui.tui.plain_text import plain_row
from compare_tui.tui.run_cells import clip
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


@dataclass(frozen=True, slots=True)
class ReadRuns:
    """What the screen shows, as read in its worker."""

    runs: list[ToolcallRun]
    """Newest first."""
    planned: dict[str, int]
    """Run id → the scenarios it set out to run, for the runs where that is known."""


def read_toolcall_runs(store: Store, limit: int = 50) -> ReadRuns:
    """The newest `limit` tool-call runs with their results (runs in a worker thread)."""
    from compare_tui.toolcall.results.storage import ToolcallStore

    tool_runs = ToolcallStore(store)
    runs = [tool_runs.get(header.id) for header in tool_runs.list_runs(limit=limit)]
    planned = {run.id: n for run in runs if (n := planned_scenarios(run)) is not None}
    return ReadRuns(runs, planned)


def planned_scenarios(run: ToolcallRun) -> int | None:
    """How many scenarios `run` set out to run: its `--scenario` patterns over the official suite
    packaged here, when the run used that very suite (same digest) and no tools of your own.
    None when that cannot be told (your tools' scenarios are not stored with the run)."""
    from compare_tui.toolcall.scenarios.suite import official_suite

    suite = official_suite()
    if run.tools_file or run.suite_digest != suite.digest:
        return None
    return len(suite.select(list(run.settings.get("scenarios") or []) or None))


def status_text(run: ToolcallRun, planned: int | None) -> str:
    """`finished`, or the status of a run that did not finish with how far it got:
    `interrupted 19/28` (results / scenarios it set out to run), `interrupted (19 run)`
    when the number it set out to run is not known."""
    if run.status == ToolcallRunStatus.FINISHED:
        return str(run.status)
    done = len(run.results)
    return f"{run.status} {done}/{planned}" if planned is not None else f"{run.status} ({done} run)"


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
RUN_HEADERS = ("shown", "run", "status", "model", "outcomes", "date", "suite", "endpoint")
"""The run list's columns. The status (with how far a run got) comes before the model so that
a partial run shows as partial at 80 columns whatever the model's name; the model is cut to
what the screen leaves (the detail pane names it whole)."""
_MODEL, _ON_SCREEN = RUN_HEADERS.index("model"), RUN_HEADERS.index("outcomes") + 1
MODEL_MIN = 12
"""A model name is never cut shorter than this."""
RUN_LIST_ROWS = 4
"""Runs the list shows before it scrolls (its max-height in toolcall.tcss, less the header)."""
_EDGES = 1
"""The focus bar on a table's left edge (toolcall.tcss)."""


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tally_text(run: ToolcallRun) -> str:
    counts = run.counts()
    return f"✓{counts['pass']} ✗{counts['fail']} ⊘{counts['unsupported']} !{counts['error']}"


def run_cells(run: ToolcallRun, shown: bool, planned: int | None) -> tuple[str, ...]:
    """One run's cells in the run list, under `RUN_HEADERS`."""
    return (
        "● shown" if shown else "○",
        run.id[:8],
        status_text(run, planned),
        run.model_name,
        tally_text(run),
        run.created_at[:16].replace("T", " "),
        run.suite_version,
        run.endpoint,
    )


def fit_run_rows(rows: list[tuple[str, ...]], width: int) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[int]]:
    """The headers to show, `rows` under them and each column's width in `width` cells: every
    column up to the outcomes, the model cut to what is left, then the date, the suite and the
    endpoint while each fits whole (the detail pane names the run's model, endpoint and date)."""
    room = width - _EDGES - (2 if len(rows) > RUN_LIST_ROWS else 0)  # and a scroll bar
    widths = _widths(RUN_HEADERS, rows)
    others = sum(w + 2 for n, w in enumerate(widths[:_ON_SCREEN]) if n != _MODEL)
    model = max(room - others - 2, min(widths[_MODEL], MODEL_MIN))
    if widths[_MODEL] > model:
        rows = [(*row[:_MODEL], clip(row[_MODEL], model), *row[_MODEL + 1 :]) for row in rows]
        widths = _widths(RUN_HEADERS, rows)
    shown = _ON_SCREEN
    while shown < len(RUN_HEADERS) and sum(w + 2 for w in widths[: shown + 1]) <= room:
        shown += 1
    return RUN_HEADERS[:shown], [row[:shown] for row in rows], widths[:shown]


def _widths(headers: Sequence[str], rows: list[tuple[str, ...]]) -> list[int]:
    return [max([cell_len(header), *(cell_len(row[n]) for row in rows)]) for n, header in enumerate(headers)]


class ToolcallScreen(StoreReaderScreen[ReadRuns]):
    """Runs (top: space picks the columns), the scenario table, and the highlighted cell."""

    CSS_PATH = "toolcall.tcss"
    BINDINGS = [Binding("space", "toggle_run", "Show/hide run")]  # with the base's g and Esc
    LOADING_ID = "toolcall-runs"
    WHAT = "tool-call runs"

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[ToolcallRun] = []
        """Newest first: the run list's rows, in order."""
        self.planned: dict[str, int] = {}
        """Run id → the scenarios it set out to run, where known (`planned_scenarios`)."""
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
        self.action_refresh()

    def read_store(self) -> ReadRuns:
        return read_toolcall_runs(self.store)

    def show_read(self, data: ReadRuns) -> None:
        self.runs, self.planned = data.runs, data.planned
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
        headers, rows, widths = fit_run_rows(
            [run_cells(run, run.id in self.selected, self.planned.get(run.id)) for run in self.runs],
            self.app.size.width,
        )
        if tuple(str(c.label) for c in runs_table.columns.values()) != headers:
            runs_table.clear(columns=True)
            runs_table.add_columns(*headers)
        # Widths are set, not measured: a measured column only ever widens, and a narrower
        # screen would keep the status off it.
        for column, width in zip(runs_table.columns.values(), widths, strict=True):
            column.auto_width, column.width = False, width
        for run, cells in zip(self.runs, rows, strict=True):
            runs_table.add_row(*plain_row(*cells), key=run.id)
        if self.runs:
            runs_table.move_cursor(row=min(cursor, len(self.runs) - 1))

    def on_resize(self) -> None:
        self._fill_runs()  # the model's cell is cut to the width: a wider screen shows it whole

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
