"""Report: the decision against the baseline (when there is one) leading, then the
recommendation, confidence and caveats; the per-model figures; the grid of task
blocks with keyboard navigation; the hardware-cost utilisation view; the insights (why answers
failed, `compare_tui.insights`: Enter on a failure group opens its tasks).

Built in a worker from `compare_tui.report` (the one place figures are computed); this screen
only lays the `Report` out.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from compare_tui.assembly import assemble_report, view_insights
from compare_tui.insights import Insights
from compare_tui.report import (
    DecisionAction,
    Report,
    ReportNotFoundError,
    columns,
    load_report_inputs,
    serving,
)
from compare_tui.store import StoreError
from compare_tui.tui import messages
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.shown_path import fit_path, home_relative, toast_text_width
from compare_tui.tui.widgets import report_tables as tables
from compare_tui.tui.widgets.insights_pane import GroupChosen, InsightsPane
from compare_tui.tui.widgets.latency_histogram import LatencyHistogram
from compare_tui.tui.widgets.task_grid import GridRow, TaskGrid, describe

if TYPE_CHECKING:
    from textual.worker import Worker


def _figure_table(table_id: str) -> DataTable[Any]:
    """A table that shows figures, not a list to pick from: no cursor, no focus (the scrolling
    container around it takes the keys)."""
    table: DataTable[Any] = DataTable(id=table_id, cursor_type="none", show_cursor=False, zebra_stripes=True)
    table.can_focus = False
    return table


class ReportScreen(CompareScreen):
    CSS_PATH = "report.tcss"
    BINDINGS = [
        Binding("1", "tab('summary')", "Summary", show=False),
        Binding("2", "tab('figures')", "Figures", show=False),
        Binding("3", "tab('tasks')", "Tasks", show=False),
        Binding("4", "tab('insights')", "Insights", show=False),
        Binding("v", "review", "Review"),
        Binding("f", "flag", "Flag"),
        Binding("d", "diff", "A/B diff"),
        Binding("P", "promote", "Promote"),
        Binding("b", "publish", "Publish"),
        Binding("g", "rebuild", "Rebuild"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, ref: str) -> None:
        super().__init__()
        self.ref = ref
        self.report: Report | None = None
        self.insights: Insights | None = None
        self.build_seconds: float | None = None
        self._built_at_edit = -1

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="summary", id="report-tabs"):
            with TabPane("Summary [1]", id="summary"):
                with VerticalScroll(id="summary-scroll"):
                    yield Static("", id="decision", markup=False)
                    yield Static(columns.TITLES["versus"], id="versus-title", classes="section-title")
                    yield _figure_table("versus-table")
                    yield Static("", id="versus-notes", classes="muted notes", markup=False)
                    yield Static("", id="recommendation", markup=False)
                    yield Static("", id="refused", classes="error-line", markup=False)
                    yield Static(
                        "Agent runs (whole-run replay: a run is driven when no step is lost)",
                        id="runs-title",
                        classes="section-title",
                    )
                    yield Static("", id="runs", markup=False)
                    yield Static(
                        "Rubric grades (1–5, each answer alone; `compare-tui grade`)",
                        id="grades-title",
                        classes="section-title",
                    )
                    yield Static("", id="grades", markup=False)
                    yield Static(columns.TITLES["paired"], id="paired-title", classes="section-title")
                    yield _figure_table("paired-table")
                    yield Static("", id="paired-notes", classes="muted notes", markup=False)
                    yield Static("", id="paired-sentences", markup=False)
                    yield Static("Caveats (what this report could not establish)", classes="section-title")
                    yield Static("", id="caveats", markup=False)
            with TabPane("Figures [2]", id="figures"):
                with VerticalScroll(id="figures-scroll"):
                    for name in ("pass", "latency", "cost", "utilisation"):
                        yield Static(columns.TITLES[name], classes="section-title")
                        yield _figure_table(f"{name}-table")
                        yield Static("", id=f"{name}-notes", classes="muted notes", markup=False)
                        if name == "latency":
                            yield LatencyHistogram("", id="latency-histogram", markup=False)
                    yield Static(serving.SECTION_TITLE, id="serving-title", classes="section-title")
                    yield Static("", id="serving", markup=False)
            with TabPane("Tasks [3]", id="tasks"):
                yield TaskGrid(id="task-grid")
                yield Static("", id="block-line", classes="status-line", markup=False)
                yield Static(tables.legend(), id="legend", classes="muted")
            with TabPane("Insights [4]", id="insights"):
                yield InsightsPane(id="insights-pane")
        yield Footer(compact=True, show_command_palette=False)  # every key fits at 80 columns

    def on_mount(self) -> None:
        self.sub_title = f"report {self.ref}"
        self._focus_tab("summary")
        self.action_rebuild()

    def on_screen_resume(self) -> None:
        if self.report is not None and self.workspace.edits != self._built_at_edit:
            self.action_rebuild()  # a verdict was saved: the report moves with it
        elif self.report is not None:
            self._lay_out_tables()
            self._lay_out_insights()  # the terminal may have changed size while another screen showed
        self._focus_tab(self.query_one(TabbedContent).active)

    def on_resize(self) -> None:
        if self.report is not None:
            self._lay_out_tables()
        self._lay_out_insights()

    def _lay_out_tables(self) -> None:
        """Fill the figure tables fitted to the screen's width now (`report.fit`): numbers whole
        or their column left out with a note, long texts as footnotes under the table."""
        report = self.report
        if report is None:
            return
        width = self.size.width or self.app.size.width

        def show(name: str, notes: tuple[str, ...]) -> None:
            box = self.query_one(f"#{name}-notes", Static)
            box.update("\n".join(notes))
            box.display = bool(notes)
            self.query_one(f"#{name}-table", DataTable).set_class(bool(notes), "-noted")

        versus = tables.fill_versus(self.query_one("#versus-table", DataTable), report, width)
        notes = (*versus, *columns.versus_notes(report))
        show("versus", notes)
        for name in ("#versus-title", "#versus-table"):
            self.query_one(name).display = report.decision is not None and bool(report.decision.versus)
        self.query_one("#paired-title", Static).update(columns.paired_title(report))
        show("paired", tables.fill_paired(self.query_one("#paired-table", DataTable), report, width))
        show("pass", tables.fill_pass_rates(self.query_one("#pass-table", DataTable), report, width))
        show("latency", tables.fill_latency(self.query_one("#latency-table", DataTable), report, width))
        show("cost", tables.fill_cost(self.query_one("#cost-table", DataTable), report, width))
        utilisation = tables.fill_utilisation(self.query_one("#utilisation-table", DataTable), report, width)
        self.query_one("#utilisation-table", DataTable).display = utilisation is not None
        show(
            "utilisation",
            (
                "If the hardware were busy only this share of the time, each completed task would cost this much.",
                *utilisation,
            )
            if utilisation is not None
            else ("No model here is on a hardware cost basis.",),
        )

    # ------------------------------------------------------------------ building

    def action_rebuild(self) -> None:
        # A line of text, not a loading overlay: mounting and removing the overlay re-lays the
        # whole screen out, which costs as much as a third of the report's own build.
        self.query_one("#recommendation", Static).update(f"Building the report of {self.ref}…")
        self._built_at_edit = self.workspace.edits
        self.build(self.ref)

    @work(thread=True, exit_on_error=False, group="report", exclusive=True, description="building the report")
    def build(self, ref: str) -> None:
        started = time.perf_counter()
        try:
            view = assemble_report(self.workspace.store, ref)
        except (ReportNotFoundError, StoreError) as exc:
            self.post_message(messages.ReportFailed(str(exc)))
            return
        self.post_message(messages.ReportBuilt(view.report, time.perf_counter() - started, view.grades))
        # After the report, so its figures show while the failures are read (a second on 2 × 10,000).
        self.post_message(messages.InsightsBuilt(view_insights(self.workspace.store, view)))

    def worker_failed(self, worker: Worker[Any]) -> None:
        if worker.group == "publish":
            return  # the notification says why; the report on screen is still right
        self.query_one("#recommendation", Static).update("✗ the report could not be built (see the notification)")

    def on_report_failed(self, message: messages.ReportFailed) -> None:
        self.query_one("#recommendation", Static).update(f"✗ {message.reason}")
        self.notify(message.reason, title="No report", severity="error", timeout=10)

    def on_report_built(self, message: messages.ReportBuilt) -> None:
        report = self.report = message.report
        self.build_seconds = message.seconds
        self.sub_title = f"report · {report.title}"
        decision = self.query_one("#decision", Static)
        decision.update(tables.decision_text(report))
        decision.display = bool(tables.decision_text(report))
        decision.set_class(report.decision is not None and report.decision.action is DecisionAction.KEEP, "-keep")
        banner = self.query_one("#recommendation", Static)
        banner.update(tables.recommendation_text(report))
        for level in ("high", "medium", "low", "none"):
            banner.set_class((report.recommendation.confidence or "none") == level, f"-{level}")
        refused = self.query_one("#refused", Static)
        refused.update(tables.refused_text(report))
        refused.display = bool(report.refused)
        sentences = "\n".join(p.sentence for p in report.paired) or "Only one model: nothing to pair."
        self.query_one("#paired-sentences", Static).update(sentences)
        self.query_one("#caveats", Static).update(tables.caveats_text(report))
        self.query_one("#runs", Static).update(tables.runs_text(report) if report.trajectories else "")
        for name in ("#runs-title", "#runs"):
            self.query_one(name).display = bool(report.trajectories)
        self.query_one("#grades", Static).update(tables.grades_text(message.grades))
        for name in ("#grades-title", "#grades"):
            self.query_one(name).display = bool(message.grades)
        self.query_one(LatencyHistogram).show(report)
        self.query_one("#serving", Static).update("\n".join(serving.serving_lines(report.serving)))
        for name in ("#serving-title", "#serving"):
            self.query_one(name).display = any(s.block for s in report.serving)
        self._lay_out_tables()
        grid = self.query_one(TaskGrid)
        grid.set_rows([GridRow(row.label, row.run_id, row.blocks) for row in report.models])

    def on_insights_built(self, message: messages.InsightsBuilt) -> None:
        self.insights = message.insights
        self._lay_out_insights()
        if self.query_one(TabbedContent).active == "insights":
            self._focus_tab("insights")  # the table may have been hidden until now

    def _lay_out_insights(self) -> None:
        if self.insights is not None:
            self.query_one(InsightsPane).show(self.insights, self.size.width or self.app.size.width)

    @on(GroupChosen)
    def _group_chosen(self, event: GroupChosen) -> None:
        """Enter on a failure group: its tasks in the task detail, n / p moving between them."""
        if self.report is not None:
            tasks = tuple(dict.fromkeys(m.failed.task_id for m in event.group.members))
            self.nav.open_task(tuple(row.run_id for row in self.report.models), tasks[0], tasks)

    # ------------------------------------------------------------------ the grid

    @on(TaskGrid.BlockHighlighted)
    def _block_highlighted(self, event: TaskGrid.BlockHighlighted) -> None:
        flagged = " · flagged for review" if (event.row.run_id, event.block.task_id) in self.workspace.flagged else ""
        self.query_one("#block-line", Static).update(describe(event.row, event.block) + flagged + " · Enter opens")

    @on(TaskGrid.BlockChosen)
    def _block_chosen(self, event: TaskGrid.BlockChosen) -> None:
        if self.report is not None:
            run_ids = tuple(row.run_id for row in self.report.models)
            self.nav.open_task(run_ids, event.block.task_id, self.report.task_ids)

    # ------------------------------------------------------------------ actions

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._focus_tab(event.pane.id or "")

    def _focus_tab(self, tab: str) -> None:
        # The scrollable container (not a table) takes focus, so PageDown and the arrows
        # scroll from the first key.
        target = {
            "summary": "#summary-scroll",
            "figures": "#figures-scroll",
            "tasks": "#task-grid",
            "insights": "#insight-groups",
        }.get(tab)
        if tab == "insights" and not self.query_one("#insight-groups").display:
            target = "#insight-more"  # no failure group: the tags and suspect tasks take the keys
        if target:
            self.query_one(target).focus()

    def action_flag(self) -> None:
        current = self.query_one(TaskGrid).current()
        if current is None:
            self.notify("Open the Tasks tab (3) and move to a task to flag it.", severity="warning")
            return
        row, block = current
        key = (row.run_id, block.task_id)
        if key in self.workspace.flagged:
            self.workspace.flagged.discard(key)
            self.notify(f"{block.task_id} ({row.label}) is no longer flagged for review.")
        else:
            self.workspace.flagged.add(key)
            self.notify(f"{block.task_id} ({row.label}) flagged: it is in the review queue (v).")
        self.query_one(TaskGrid).post_message(TaskGrid.BlockHighlighted(self.query_one(TaskGrid), row, block))

    def action_review(self) -> None:
        self.nav.open_review(self.ref)

    def action_diff(self) -> None:
        runs = self.report.run_ids if self.report else ()
        if len(runs) >= 2:
            self.nav.open_diff(runs[0], runs[1])
        else:
            self.nav.open_diff(runs[0] if runs else None)

    def action_promote(self) -> None:
        """Promote the decision's best candidate (or, without a baseline, set the recommended
        model as the workload's first): show the verdict and what will be recorded, then ask."""
        from compare_tui.promote import PromotionRefused, plan_promotion, promotion_offer
        from compare_tui.promote.offer import NOT_A_COMPARISON
        from compare_tui.tui.screens.confirm import ConfirmScreen
        from compare_tui.tui.screens.refusal import RefusalScreen

        report = self.report
        if report is None:
            self.notify(NOT_A_COMPARISON, severity="warning")
            return
        store = self.workspace.store
        current = store.current_baseline(report.goldset.workload_id)
        offer = promotion_offer(report, current.model if current else None)
        model = offer.model
        if model is None or report.comparison_id is None:
            self.notify(offer.note, severity="warning")
            return
        inputs = load_report_inputs(store, report.comparison_id)
        initial = offer.initial
        try:
            plan = plan_promotion(
                inputs,
                model,
                current_baseline=current.model if current else None,
                initial=initial,
                decided_by=self.workspace.reviewer,
            )
        except PromotionRefused as exc:
            self.app.push_screen(
                RefusalScreen(
                    f"Not promoted: {model}",
                    f"{exc}\n\nFrom the command line: "
                    f"compare-tui promote {report.comparison_id} --model {model} "
                    '--force --reason "…" records a forced promotion.',
                )
            )
            return
        record = plan.record
        body = (
            f"{plan.summary}\n\nWill record: workload {record.workload_id} → {record.model} ({record.kind}), "
            f"comparison {record.comparison_id}, set digest {record.goldset_digest[:19]}…, the models' pins "
            f"and these figures, by {record.decided_by or 'unknown'}."
        )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                store.record_decision(record)
                self.notify(f"{record.model} is now the baseline of {record.workload_id}.", title="Promoted")
                self.action_rebuild()

        self.app.push_screen(ConfirmScreen(f"Promote {model}?", body, "Promote"), done)

    def action_publish(self) -> None:
        """Write the report's bundle (`compare-tui publish`) under the bundles folder, in a worker."""
        report = self.report
        if report is None or not report.run_ids:
            self.notify("The report is not built yet.", severity="warning")
            return
        ref = report.comparison_id or report.run_ids[0]
        self.notify(f"Publishing {ref}…")
        self.publish(ref)

    @work(thread=True, exit_on_error=False, group="publish", exclusive=True, description="publishing the bundle")
    def publish(self, ref: str) -> None:
        from compare_tui.paths import bundles_dir
        from compare_tui.publish import PublishError, publish_report

        try:
            published = publish_report(self.workspace.store, ref, bundles_dir() / ref)
        except (PublishError, ReportNotFoundError, StoreError) as exc:
            self.post_message(messages.PublishFailed(str(exc)))
            return
        self.post_message(messages.BundlePublished(published.index, published.record.sha256))

    def on_bundle_published(self, message: messages.BundlePublished) -> None:
        shown = fit_path(message.index, toast_text_width(self.app.size.width))
        whole = "" if shown == home_relative(message.index) else " The whole path: `compare-tui publish --list`."
        self.notify(
            f"{shown}\nOpen it in a browser (file://); report.json is beside it.{whole}",
            title="Published",
            timeout=15,
        )

    def on_publish_failed(self, message: messages.PublishFailed) -> None:
        self.notify(message.reason, title="Not published", severity="error", timeout=10)

    def action_back(self) -> None:
        self.app.pop_screen()
