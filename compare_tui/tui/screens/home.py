"""Home: the golden sets under the sets folder, the catalogue's models, and the retained runs.

Everything is read in a thread worker; the endpoints' health arrives one model at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input, Static, TabbedContent, TabPane
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowDoesNotExist

from compare_tui.report import formatting as fmt
from compare_tui.tui import messages
from compare_tui.tui.health import CHECKING, Health, health_for
from compare_tui.tui.home_data import (
    RUN_SORTS,
    HomeData,
    RunRate,
    RunRow,
    filter_runs,
    read_home,
    report_pass_rate,
    sort_runs,
)
from compare_tui.tui.plain_text import plain, plain_row
from compare_tui.tui.run_cells import HEADERS, RATE, fit_runs, rate_room
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.set_cells import fit_sets

if TYPE_CHECKING:
    from textual.worker import Worker

RESUMABLE = {"interrupted", "pending", "running"}


class HomeScreen(CompareScreen):
    CSS_PATH = "home.tcss"
    # Short footer words, so that every action fits the footer at 80 columns; Help reads the
    # tooltip. Report and Resume stay off the footer: the run's detail line names them
    # (Enter, R) when they apply.
    BINDINGS = [
        Binding("n", "new_run", "New", tooltip="New run"),
        Binding("o", "open", "Report", show=False),
        Binding("d", "diff", "Diff", tooltip="A/B diff"),
        Binding("v", "review", "Review"),
        Binding("R", "resume", "Resume", show=False),
        Binding("e", "experiments", "Exp", tooltip="Experiments"),
        Binding("t", "toolcall", "Tools", tooltip="Tool-call table"),
        Binding("w", "live_switches", "Switches", show=False, tooltip="Live switches: canaries at the gateway"),
        Binding("j", "triage", "Triage", tooltip="Judge triage"),
        Binding("m", "models", "Models", show=False, tooltip="Models: readiness, verify weights"),
        Binding("slash", "filter", "Filter", tooltip="Filter runs"),
        # Escape is a binding of the screen, so it reaches us while the filter has focus (an
        # Input consumes printable keys, and with them every shortcut the footer shows).
        Binding("escape", "leave_filter", "Leave the filter (keeps it)", show=False),
        Binding("s", "sort", "Sort", tooltip="Sort runs"),
        Binding("g", "refresh", "Refresh", show=False),
        Binding("1", "tab('sets')", "Sets", show=False),
        Binding("2", "tab('models')", "Models", show=False),
        Binding("3", "tab('runs')", "Runs", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.data: HomeData | None = None
        self.run_sort: str = RUN_SORTS[0]
        """How the runs table is sorted (never `sort_order`: Textual orders widgets by that)."""
        self.shown_runs: list[RunRow] = []
        self.health: dict[str, Health] = {}
        self.rates: dict[str, RunRate] = {}
        self._loaded_at_edit = -1

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="runs", id="home-tabs"):
            with TabPane("Sets [1]", id="sets"):
                yield DataTable(id="sets-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="set-detail", classes="detail", markup=False)
            with TabPane("Models [2]", id="models"):
                yield DataTable(id="models-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="model-detail", classes="detail", markup=False)
            with TabPane("Runs [3]", id="runs"):
                with Horizontal(id="run-tools"):
                    yield Input(placeholder="filter: set, model, status or id  (/)", id="run-filter")
                    yield Static("", id="run-sort", markup=False)
                yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="run-detail", classes="detail", markup=False)
        # ctrl+p is named in Help and its intro; its footer corner would push keys off at 80.
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "home"
        models = self.query_one("#models-table", DataTable)
        models.add_columns("model", "kind")
        models.add_column("health", key="health")
        models.add_columns("provenance", "cost basis", "endpoint")
        runs = self.query_one("#runs-table", DataTable)
        # The run id and the date first: a set's runs look alike without them.
        for index, header in enumerate(HEADERS):
            runs.add_column(header, key="rate" if index == RATE else None)
        self.action_refresh()

    # ------------------------------------------------------------------ loading

    def action_refresh(self) -> None:
        self.rates.clear()  # verdicts and resumed runs move pass rates
        self._loaded_at_edit = self.workspace.edits
        self.query_one("#home-tabs").loading = True
        self.load()

    @work(thread=True, exit_on_error=False, group="home", exclusive=True, description="reading sets, models and runs")
    def load(self) -> None:
        self.post_message(messages.HomeLoaded(read_home(self.workspace)))

    def on_home_loaded(self, message: messages.HomeLoaded) -> None:
        self.data = message.data
        self.query_one("#home-tabs").loading = False
        self._fill_sets()
        self._fill_models()
        self._fill_runs()
        self.action_tab(self._active_tab() if self.data.runs else "sets")
        for row in self.data.models:
            self.check_endpoint(row.name, row.endpoint, row.has_key)
        self.rate_runs([row.run.id for row in self.data.runs if row.run.id not in self.rates])

    @work(thread=True, exit_on_error=False, group="rates", exclusive=True, description="reading pass rates")
    def rate_runs(self, run_ids: list[str]) -> None:
        for run_id in run_ids:
            self.post_message(messages.RunRated(report_pass_rate(self.workspace.store, run_id)))

    def on_run_rated(self, message: messages.RunRated) -> None:
        rate = message.rate
        self.rates[rate.run_id] = rate
        table = self.query_one("#runs-table", DataTable)
        if rate.run_id in table.rows:
            if all(row.run.id in self.rates for row in self.shown_runs):
                self._fill_runs()  # every rate known: the room kept for the rest is given back
                return
            _fit_rate_column(table, [rate.text])  # drawn so at once; the scroll width follows
            table.update_cell(rate.run_id, "rate", plain(rate.text), update_width=True)

    @work(thread=True, exit_on_error=False, group="health", description="checking an endpoint")
    def check_endpoint(self, name: str, endpoint: str, has_key: bool) -> None:
        self.post_message(messages.EndpointChecked(name, health_for(self.workspace.probe(endpoint), has_key)))

    def on_endpoint_checked(self, message: messages.EndpointChecked) -> None:
        self.health[message.model_name] = message.health
        table = self.query_one("#models-table", DataTable)
        if message.model_name in table.rows:
            table.update_cell(message.model_name, "health", plain(short_health(message.health)), update_width=True)
            if _cursor_key(table) == message.model_name:  # the line under the table says "checking…" no longer
                self._show_model(message.model_name)

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.query_one("#home-tabs").loading = False

    # ------------------------------------------------------------------ tables

    def _fill_sets(self) -> None:
        if self.data is None:
            return
        table = self.query_one("#sets-table", DataTable)
        kept = _cursor_key(table)
        headers, rows, widths = fit_sets(
            self.data.sets, table_room(self.app.size.width, len(self.data.sets), table.size.height)
        )
        if tuple(str(c.label) for c in table.columns.values()) != headers:
            table.clear(columns=True)
            table.add_columns(*headers)  # status early: never cut at 80
        else:
            table.clear()
        # Widths are set, not measured: a measured column only ever widens (see `_fill_runs`).
        for column, width in zip(table.columns.values(), widths, strict=True):
            column.auto_width, column.width = False, width
        for row, cells in zip(self.data.sets, rows, strict=True):
            table.add_row(*plain_row(*cells), key=str(row.path))
        if not self.data.sets:
            self.query_one("#set-detail", Static).update(
                f"No golden sets in {self.workspace.sets_dir} (a set is a folder with golden.toml and tasks/); "
                "pass --sets DIR to look elsewhere."
            )
        _restore_cursor(table, kept)

    def _fill_models(self) -> None:
        if self.data is None:
            return
        table = self.query_one("#models-table", DataTable)
        kept = _cursor_key(table)
        table.clear()
        for row in self.data.models:
            provenance = f"✗ {row.provenance}" if row.refusals else row.provenance
            health = self.health.get(row.name, CHECKING)
            table.add_row(
                *plain_row(
                    row.name,
                    row.kind,
                    short_health(health),
                    short_provenance(row.provenance, provenance),
                    short_cost(row.cost_basis),
                    row.endpoint,
                ),
                key=row.name,
            )
        _restore_cursor(table, kept)
        if self.data.catalogue_problem:
            self.query_one("#model-detail", Static).update(f"✗ {self.data.catalogue_problem}")

    def _fill_runs(self) -> None:
        if self.data is None:
            return
        text = self.query_one("#run-filter", Input).value
        self.shown_runs = sort_runs(filter_runs(self.data.runs, text), self.run_sort, self.rates)
        table = self.query_one("#runs-table", DataTable)
        kept = _cursor_key(table)
        table.clear()
        known = [self.rates.get(row.run.id) for row in self.shown_runs]
        # A run whose rate is still being read keeps room for the widest rate it can have.
        rows, widths = fit_runs(
            [row.run for row in self.shown_runs],
            [rate.text if rate else "…" for rate in known],
            [rate_room(row.summary.tasks_planned) for row, rate in zip(self.shown_runs, known) if rate is None],
            table_room(self.app.size.width, len(self.shown_runs), table.size.height),
        )
        # Widths are set, not measured: a DataTable only ever widens a measured column, and
        # narrower cells (a narrower screen) would leave the table as wide as before.
        for column, width in zip(table.columns.values(), widths):
            column.auto_width, column.width = False, width
        for row, cells in zip(self.shown_runs, rows):
            table.add_row(*plain_row(*cells), key=row.run.id)
        _restore_cursor(table, kept)
        shown = len(self.shown_runs)
        total = len(self.data.runs)
        self.query_one("#run-sort", Static).update(f"sort: {self.run_sort} · {shown} of {total}")
        if not total:
            self.query_one("#run-detail", Static).update("No runs yet: press n to start one.")

    @on(DataTable.RowHighlighted, "#sets-table")
    def _set_highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = next((s for s in self.data.sets if str(s.path) == event.row_key.value), None) if self.data else None
        if row is None:
            return
        text = (
            "\n".join(f"✗ {p}" for p in row.problems)
            if row.problems
            # The whole of what the table may cut or leave out at 80 columns: name, version, digest.
            else f"{row.name} {row.version} · {row.folder}/ · {row.digest} · scorers {row.scorers} · "
            "Enter or n starts a new run on this set"
        )
        if row.baseline:
            text += f"\nbaseline: {row.baseline}"
        self.query_one("#set-detail", Static).update(text)

    @on(DataTable.RowHighlighted, "#models-table")
    def _model_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_model(event.row_key.value)

    def _show_model(self, name: str | None) -> None:
        """The line under the Models table: the highlighted model whole, its health as known now."""
        row = next((m for m in self.data.models if m.name == name), None) if self.data else None
        if row is None:
            return
        health = self.health.get(row.name, CHECKING)
        lines = [f"✗ refused: {r}" for r in row.refusals] + (
            [f"{row.endpoint} · cost basis {row.cost_basis}"] if row.refusals else []
        ) or [
            f"{row.name} at {row.endpoint} ({health}): {row.provenance}; cost basis {row.cost_basis} · "
            "Enter: Models (verify)"
        ]
        self.query_one("#model-detail", Static).update("\n".join(lines))

    @on(DataTable.RowHighlighted, "#runs-table")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = self._selected_run()
        if row is None:
            return
        run, s = row.run, row.summary
        tally = fmt.tally_marks(s)
        if row.running is not None:  # a live process executes it: no resume advice
            hint = f"{row.running}; Enter opens its report so far"
        else:
            hint = "R resumes it" if run.status in RESUMABLE else "Enter opens its report"
        error = f"\n{run.error}" if run.error else ""
        source = (run.rescore or {}).get("source_run")
        rescored = f"\n↻ rescore of run {source}: its answers scored again, not a repeat" if source else ""
        self.query_one("#run-detail", Static).update(
            f"run {run.id} · {run.model_name} · {run.goldset_id} {run.goldset_version} · "
            f"{run.created_at[:19].replace('T', ' ')} UTC · "
            f"{tally} · {hint}{rescored}{error}"
        )

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    @on(Input.Changed, "#run-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill_runs()

    @on(Input.Submitted, "#run-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.query_one("#runs-table").focus()

    # ------------------------------------------------------------------ actions

    def _active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    def _selected_run(self) -> RunRow | None:
        table = self.query_one("#runs-table", DataTable)
        if not self.shown_runs or table.cursor_row < 0 or table.cursor_row >= len(self.shown_runs):
            return None
        return self.shown_runs[table.cursor_row]

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.query_one(f"#{tab}-table").focus()

    def action_filter(self) -> None:
        self.action_tab("runs")
        self.query_one("#run-filter").focus()

    def action_leave_filter(self) -> None:
        """Focus back on the runs list, the filter text kept (so is the filtered list)."""
        if isinstance(self.focused, Input):
            self.query_one("#runs-table").focus()

    def action_sort(self) -> None:
        self.run_sort = RUN_SORTS[(RUN_SORTS.index(self.run_sort) + 1) % len(RUN_SORTS)]
        self._fill_runs()

    def action_new_run(self) -> None:
        path = None
        if self._active_tab() == "sets" and self.data and self.data.sets:
            table = self.query_one("#sets-table", DataTable)
            row = self.data.sets[max(0, table.cursor_row)]
            if row.problems:
                # New run cannot run this set: say why, rather than open it on another set.
                from compare_tui.tui.screens.refusal import RefusalScreen

                count = len(row.problems)
                self.app.push_screen(
                    RefusalScreen(
                        f"{row.folder} cannot run: {count} problem{'s' if count != 1 else ''}",
                        "\n".join(f"✗ {p}" for p in row.problems)
                        + f"\n\nFix the set, then g here reads it again (`compare-tui sets validate {row.path}` "
                        "lists the same problems). n on the Runs tab starts a run on another set.",
                    )
                )
                return
            path = str(row.path)
        self.nav.open_new_run(path)

    def action_open(self) -> None:
        tab = self._active_tab()
        if tab == "sets":
            self.action_new_run()
        elif tab == "models":
            self.action_models()
        elif tab == "runs":
            row = self._selected_run()
            if row is None:
                self.notify("No run selected.", severity="warning")
            else:
                self.nav.open_report(row.run.comparison_id or row.run.id)

    def action_experiments(self) -> None:
        self.nav.open_experiments()

    def action_live_switches(self) -> None:
        self.nav.open_live_switches()

    def action_toolcall(self) -> None:
        self.nav.open_toolcall()

    def action_models(self) -> None:
        table = self.query_one("#models-table", DataTable)
        rows = self.data.models if self.data else []
        chosen = (
            rows[table.cursor_row].name
            if self._active_tab() == "models" and 0 <= table.cursor_row < len(rows)
            else None
        )
        self.nav.open_models(chosen)

    def action_triage(self) -> None:
        self.nav.open_triage("latest")

    def action_diff(self) -> None:
        row = self._selected_run() if self._active_tab() == "runs" else None
        self.nav.open_diff(row.run.id if row else None)

    def action_review(self) -> None:
        row = self._selected_run()
        if row is None:
            self.notify("Pick a run in the Runs tab to review its tasks.", severity="warning")
            return
        self.nav.open_review(row.run.comparison_id or row.run.id)

    def action_resume(self) -> None:
        from compare_tui.tui.engine_bridge import ResumePlan

        row = self._selected_run()
        if row is None or row.run.status not in RESUMABLE:
            self.notify("Pick an interrupted run in the Runs tab to resume it.", severity="warning")
            return
        self.nav.open_live(ResumePlan((row.run.id,)))

    def on_resize(self) -> None:
        # Cells are cut to the width: a wider screen shows them whole.
        self._fill_sets()
        self._fill_runs()

    def on_screen_resume(self) -> None:
        # Back from a run or a review, runs and pass rates have moved; back from only reading
        # a report, nothing has, and re-reading every run's report would be wasted work.
        if self.data is not None and self.workspace.edits != self._loaded_at_edit:
            self.action_refresh()


# ------------------------------------------------------------------ cells that fit at 80 columns
# Each table cell is short; the line under the table (the highlighted row's detail) says it whole.


def short_health(health: Health) -> str:
    """`✓ healthy`, `✓ up`, `✗ unreachable`, `✗ wants a key`, `checking…`: the reason is in the
    detail line."""
    if health.ok is None:
        return health.word
    return ("✓ " if health.ok else "✗ ") + health.word


def short_provenance(provenance: str, shown: str) -> str:
    """`verified at run`, `host attested`, or the refusal mark."""
    if shown.startswith("✗"):
        return shown
    if provenance.startswith("pinned"):
        return "pinned (hashed at run)"
    return "host attested" if "host attestation" in provenance else provenance


def short_cost(cost: str) -> str:
    """The cost basis without a token price's capture date (the detail line has it)."""
    if cost.startswith("none"):
        return "✗ none"
    return cost.split(" (", 1)[0] if cost.startswith("token ") else cost


def _cursor_key(table: DataTable[Any]) -> str | None:
    """The key of the row under the cursor, to put the cursor back on it once the table is
    filled again (back from a review, the runs are re-read: the cursor stays on its run)."""
    if not 0 <= table.cursor_row < table.row_count:
        return None
    try:
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    except CellDoesNotExist:
        return None


def _restore_cursor(table: DataTable[Any], key: str | None) -> None:
    if key is None:
        return
    try:
        table.move_cursor(row=table.get_row_index(key))
    except RowDoesNotExist:
        pass  # that row is gone (filtered out, or deleted): the cursor stays at the top


def _fit_rate_column(table: DataTable[Any], texts: list[str]) -> None:
    """Widen the pass-rate column to `texts` (never narrower than its header). Its width is
    set, not measured: rates arrive one by one after the rows, and a width measured from each
    arrival waits for the table's next idle moment (under load the column stayed at its
    header's width, cutting every rate short)."""
    column = table.columns[ColumnKey("rate")]
    column.auto_width = False
    column.width = max([column.width, cell_len("pass rate"), *(cell_len(text) for text in texts)])


def table_room(screen_width: int, rows: int, table_height: int) -> int:
    """Cells a table of Home may fill: the screen, less a vertical scroll bar's two when the rows
    may not all fit under the header (or the table has not been laid out yet)."""
    return screen_width - (2 if rows >= table_height - 1 else 0)
