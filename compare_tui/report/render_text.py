"""The report for the terminal, as Rich renderables. Formatting only.

The one module of `compare_tui.report` that imports Rich. Every block has a mark of its own
shape (✓ ✗ ? ! ·); colour repeats the mark and is never the only signal (a monochrome
terminal, a colour-blind reader, a log file all read the same).
"""

from __future__ import annotations

from itertools import groupby

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from compare_tui.report import columns, fit
from compare_tui.report import formatting as fmt
from compare_tui.report.decision import DecisionAction
from compare_tui.report.figures import ModelFigures
from compare_tui.report.model import Report
from compare_tui.report.sequential_replay import sequential_replays
from compare_tui.report.serving import SECTION_TITLE, serving_lines

STATUS_STYLES = {"pass": "green", "fail": "red", "review": "grey50", "error": "magenta", "missing": "dim"}
CONFIDENCE_STYLES = {"high": "green", "medium": "yellow", "low": "red", None: "grey50"}


def render_text(report: Report) -> Group:
    """The whole report: banner, figures, costs, blocks, paired statistics, refusals, caveats."""
    parts: list[RenderableType] = []
    if report.decision is not None or report.decision_note:
        parts.append(decision_banner(report))
    parts.append(recommendation_banner(report))
    if report.models:
        parts += [figures_table(report), latency_table(report)]
        if report.server_latency:
            parts.append(Group(*(Text(f"  {check.line()}", style="grey50") for check in report.server_latency)))
        parts.append(cost_table(report))
        utilisation = utilisation_table(report)
        if utilisation is not None:
            parts.append(utilisation)
        parts.append(block_grid(report))
    if report.trajectories:
        parts.append(run_strips(report))
    if report.refused:
        parts.append(refused_list(report))
    if report.paired:
        parts.append(paired_table(report))
    if any(s.block for s in report.serving):
        parts.append(serving_section(report))
    if report.caveats:
        parts.append(caveat_list(report))
    return Group(*parts)


VERDICT_STYLES = {"better": "green", "no worse": "green", "worse": "red", "inconclusive": "yellow"}


def decision_banner(report: Report) -> Group:
    """The one-line decision, then each candidate against the baseline."""
    decision = report.decision
    if decision is None:
        return Group(Text(report.decision_note or "", style="bold"))
    keep = decision.action is DecisionAction.KEEP
    parts: list[RenderableType] = [
        Panel(
            Text(decision.summary, style="bold"),
            title="Decision",
            box=box.HEAVY,
            border_style="yellow" if keep else "green",
        ),
    ]
    if decision.versus:
        styles = {n: VERDICT_STYLES.get(str(v.verdict), "") for n, v in enumerate(decision.versus)}
        parts.append(FittedTable(columns.TITLES["versus"], columns.versus_columns(report), styles=styles))
    parts += [Text(line, style="dim" if n == 0 else "") for n, line in enumerate(columns.versus_notes(report))]
    replays = sequential_replays(report)
    if replays:
        parts.append(Text("Anytime-valid look back (confidence sequence; the run used every task):", style="dim"))
        parts += [Text(f"  {r.candidate} {r.words}", style="dim") for r in replays]
    return Group(*parts)


def recommendation_banner(report: Report) -> Panel:
    rec = report.recommendation
    body = Text()
    if report.rating_note:
        # First, so that the rule's line never stands beside the decision without it.
        body.append(f"⚠ {report.rating_note}\n", style="bold")
    body.append(rec.summary, style="bold")
    body.append(f"\nconfidence: {fmt.confidence(rec.confidence)}", style=f"bold {CONFIDENCE_STYLES[rec.confidence]}")
    for reason in rec.reasons:
        body.append(f"\n  • {reason}")
    body.append(f"\n{rec.label}", style="italic dim")
    return Panel(
        body,
        title=f"{report.title}",
        subtitle=f"{report.goldset.workload_id} {report.goldset.version}",
        border_style=CONFIDENCE_STYLES[rec.confidence],
        box=box.HEAVY,
    )


class FittedTable:
    """A report table that fits the console it is printed to (`report.fit`): numbers whole or
    their column dropped with a note, long texts in footnotes under the table."""

    def __init__(
        self,
        title: str,
        table_columns: list[fit.Column],
        caption: str | None = None,
        styles: dict[int, str] | None = None,
    ) -> None:
        self.title, self.columns, self.caption = title, table_columns, caption
        self.styles = styles or {}
        """Row index -> Rich style of that row's label (the winner in bold)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        fitted = fit.fit_table(self.columns, options.max_width, fit.RICH_SIMPLE)
        table = Table(
            title=self.title, box=box.SIMPLE, title_justify="left", caption=self.caption, caption_justify="left"
        )
        for column, width in zip(fitted.columns, fitted.widths, strict=True):
            # A width per column and no no_wrap: cells fit by construction, headers may wrap.
            table.add_column(
                column.header, width=width, justify="left" if column.kind != "number" else "right", overflow="fold"
            )
        rows = len(fitted.columns[0].cells) if fitted.columns else 0
        for n in range(rows):
            cells = [
                Text(c.cells[n], style=self.styles.get(n, "") if c.kind == "label" else "") for c in fitted.columns
            ]
            table.add_row(*cells)
        yield table
        for note in fitted.notes():
            yield Text(note, style="dim")


def figures_table(report: Report) -> FittedTable:
    winner = report.recommendation.winner
    styles = {n: "bold" for n, r in enumerate(report.models) if r.label == winner}
    return FittedTable(
        columns.TITLES["pass"], columns.pass_rate_columns(report), styles=styles, caption=columns.PASS_RATE_CAPTION
    )


def latency_table(report: Report) -> FittedTable:
    return FittedTable(columns.TITLES["latency"], columns.latency_columns(report), caption=columns.LATENCY_CAPTION)


def cost_table(report: Report) -> FittedTable:
    return FittedTable(columns.TITLES["cost"], columns.cost_columns(report))


def utilisation_table(report: Report) -> FittedTable | None:
    """Hardware cost per completed task if the hardware were busy only part of the time."""
    found = columns.utilisation_columns(report)
    return FittedTable(columns.TITLES["utilisation"], found) if found else None


def block_line(row: ModelFigures) -> Text:
    """One model's blocks as marks; runs of one status share a span (10,000 tasks stay fast)."""
    text = Text(overflow="fold")
    for status, group in groupby(row.blocks, key=lambda b: b.status):
        text.append(fmt.MARKS[status] * sum(1 for _ in group), style=STATUS_STYLES[status])
    return text


def block_grid(report: Report) -> Group:
    parts: list[RenderableType] = [Text("Tasks", style="italic")]
    for row in report.models:
        parts += [Text(row.label, style="bold"), block_line(row)]
    legend = Text()
    for status, words in fmt.MARK_WORDS.items():
        legend.append(f"{fmt.MARKS[status]} ", style=STATUS_STYLES[status])
        legend.append(f"{words}   ")
    parts.append(legend)
    return Group(*parts)


def run_strips(report: Report) -> Group:
    """Whole-run replay: per model, runs driven without losing a step, then one strip per run."""
    parts: list[RenderableType] = [
        Text("Agent runs (whole-run replay: a run is driven when no step is lost)", style="italic")
    ]
    if report.step_grading is not None and report.step_grading.calibration:
        parts.append(Text(f"{report.step_grading.judge}'s grades: {report.step_grading.calibration}"))
    for fig in report.trajectories:
        parts.append(Text(fig.label, style="bold"))
        parts.append(Text(f"  runs driven without losing a step: {fmt.runs_driven(fig)}"))
        parts.append(Text(f"  step pass rate: {fmt.step_rate(fig)}"))
        if report.step_grading is not None:
            parts.append(Text(f"  {fmt.steps_by_grade(report.step_grading, fig)}"))
        run_width, steps_width = fmt.strip_widths(fig)
        for strip in fig.runs:
            line = Text(f"  {strip.run:<{run_width}}  ")
            for status, group in groupby(strip.statuses):
                line.append(fmt.MARKS[status] * sum(1 for _ in group), style=STATUS_STYLES[status])
            line.append(" " * (steps_width - len(strip.statuses)) + f"  {fmt.run_verdict(strip)}")
            parts.append(line)
    return Group(*parts)


def refused_list(report: Report) -> Group:
    lines = [Text("Not shown", style="bold red")]
    lines += [Text(f"  ✗ {r.label} (run {r.run_id}): {r.reason}") for r in report.refused]
    return Group(*lines)


def paired_table(report: Report) -> Group:
    table = FittedTable(columns.paired_title(report), columns.paired_columns(report))
    return Group(table, *(Text(p.sentence) for p in report.paired))


def caveat_list(report: Report) -> Group:
    lines = [Text("Caveats (what this report could not establish)", style="bold")]
    lines += [Text(f"  • {c.text}") for c in report.caveats]
    return Group(*lines)


def serving_section(report: Report) -> Group:
    """What served each model (`report.serving`): stack, loaded weights, template, parser…"""
    lines = [Text(SECTION_TITLE, style="bold")]
    for line in serving_lines(report.serving):
        lines.append(Text(f"  {line}", style="" if line.startswith(" ") else "bold"))
    return Group(*lines)
