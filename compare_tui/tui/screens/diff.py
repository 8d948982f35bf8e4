"""A/B diff of two retained runs: base run A against compared run B. The flips table (both pass,
only A, only B, both fail) with the McNemar test and the paired interval from the report;
latency, token and cost deltas; and every task that changed outcome, each opening both answers
side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from compare_tui.diff import RunPairDiff, read_run_pair
from compare_tui.report import ReportNotFoundError
from compare_tui.report import formatting as fmt
from compare_tui.store import StoreError
from compare_tui.tui import messages
from compare_tui.tui.plain_text import plain_row
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.widgets.changed_tasks import ChangedTasks

if TYPE_CHECKING:
    from textual.worker import Worker


class DiffScreen(CompareScreen):
    CSS_PATH = "diff.tcss"
    BINDINGS = [
        Binding("1", "tab('flips')", "Flips", show=False),
        Binding("2", "tab('changed')", "Changed tasks", show=False),
        Binding("x", "swap", "Swap A/B"),
        Binding("c", "choose", "Other runs"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_a: str, run_b: str) -> None:
        super().__init__()
        self.run_a, self.run_b = run_a, run_b
        self.diff: RunPairDiff | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="diff-problems", classes="warning-line", markup=False)
        yield Static("", id="diff-title", markup=False)
        with TabbedContent(initial="flips", id="diff-tabs"):
            with TabPane("Flips and deltas [1]", id="flips"):
                with VerticalScroll(id="flips-scroll"):
                    yield DataTable(id="flips-table", cursor_type="none", show_cursor=False)
                    yield Static("", id="flips-sentence", markup=False)
                    yield Static("Latency, tokens and cost (B − A)", classes="section-title")
                    yield DataTable(id="deltas-table", cursor_type="row")
            with TabPane("Changed tasks [2]", id="changed"):
                yield ChangedTasks(id="changed-list")
                yield Static("Enter shows both answers side by side", classes="status-line")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "A/B diff"
        # The pane scrolls from the keyboard at once (↓, PageDown, End): the deltas below the
        # flips can be below the fold at 80×24.
        self.query_one("#flips-scroll", VerticalScroll).focus()
        self.rebuild()

    def rebuild(self) -> None:
        # A line of text, not a loading overlay (which re-lays the whole screen out twice).
        self.query_one("#diff-title", Static).update(f"Building the A/B diff of {self.run_a[:8]} and {self.run_b[:8]}…")
        self.build(self.run_a, self.run_b)

    @work(thread=True, exit_on_error=False, group="diff", exclusive=True, description="building the A/B diff")
    def build(self, run_a: str, run_b: str) -> None:
        try:
            diff = read_run_pair(self.workspace.store, run_a, run_b)
        except (ReportNotFoundError, StoreError) as exc:
            self.post_message(messages.ReportFailed(str(exc)))
            return
        self.post_message(messages.DiffBuilt(diff))

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.query_one("#diff-title", Static).update("✗ the A/B diff could not be built (see the notification)")

    def on_report_failed(self, message: messages.ReportFailed) -> None:
        self.query_one("#diff-problems", Static).update(f"✗ {message.reason}")

    def on_diff_built(self, message: messages.DiffBuilt) -> None:
        diff = self.diff = message.diff
        problems = self.query_one("#diff-problems", Static)
        problems.update("\n".join(f"⚠ {p}" for p in diff.problems))
        problems.display = bool(diff.problems)
        a, b = diff.a, diff.b
        ids = diff.report.run_ids
        side_a = f"A: {a.label if a else ids[0][:8]} (run {ids[0][:8]})"
        side_b = f"B: {b.label if b else ids[1][:8]} (run {ids[1][:8]})"
        if diff.same_set:
            title = f"{side_a}   vs   {side_b}\nboth on set {diff.sets[0] or diff.report.goldset.workload_id}"
        else:  # each side under its own set's name
            title = f"{side_a} · set {diff.sets[0]}\n{side_b} · set {diff.sets[1]}"
        self.query_one("#diff-title", Static).update(title)
        self._fill_flips(diff)
        deltas = self.query_one("#deltas-table", DataTable)
        deltas.clear(columns=True)
        deltas.add_columns("figure", "A", "B", "B − A")
        for d in diff.deltas:
            # One part a line (`p50 −1.1 s` over `p95 −9.2 s`): a DataTable does not wrap a cell,
            # and a four-column row of whole phrases is wider than 80 columns.
            deltas.add_row(
                *plain_row(*(str(v).replace(", ", "\n") for v in (d.figure, d.a, d.b, d.delta))), height=None
            )
        self.query_one(ChangedTasks).set_tasks(diff.changed)
        tab = self.query_one(TabbedContent).get_tab("changed")
        tab.label = f"Changed tasks ({len(diff.changed):,}) [2]"

    def _fill_flips(self, diff: RunPairDiff) -> None:
        table = self.query_one("#flips-table", DataTable)
        table.clear(columns=True)
        sentence = self.query_one("#flips-sentence", Static)
        p = diff.paired
        table.display = p is not None
        if p is None:
            sentence.update(
                "No flips and no paired verdict: A and B ran different golden sets (see above)."
                if not diff.same_set
                else "No flips: a run's row is not shown (see above)."
            )
            return
        table.add_columns("on the tasks both scored", "tasks")
        for label, value in (
            ("✓✓ both pass", p.both),
            ("✓✗ only A passes", p.only_a),
            ("✗✓ only B passes", p.only_b),
            ("✗✗ both fail", p.neither),
            ("total", p.tasks),
        ):
            table.add_row(label, str(value))
        p_value = fmt.DASH if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}"
        ci = (
            fmt.DASH
            if p.interval is None
            else f"{fmt.bound(p.interval.low * 100)} to {fmt.bound(p.interval.high * 100)} points"
        )
        sentence.update(f"McNemar exact p = {p_value} · 95% paired CI of A − B: {ci}\n{p.sentence}")

    @on(ChangedTasks.Chosen)
    def _changed_chosen(self, event: ChangedTasks.Chosen) -> None:
        if self.diff is not None:
            ids = tuple(c.task_id for c in self.diff.changed)
            self.nav.open_task((self.run_a, self.run_b), event.task.task_id, ids)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "changed":
            self.query_one(ChangedTasks).focus()

    def action_swap(self) -> None:
        self.run_a, self.run_b = self.run_b, self.run_a
        self.rebuild()

    def action_choose(self) -> None:
        self.app.pop_screen()
        self.nav.open_diff(self.run_a)

    def action_back(self) -> None:
        self.app.pop_screen()
