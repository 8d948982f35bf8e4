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

from compare_tui.report import fit
from compare_tui.report import formatting as fmt
from compare_tui.report.figures import ModelFigures
from compare_tui.report.model import Report

STATUS_STYLES = {"pass": "green", "fail": "red", "review": "grey50", "error": "magenta", "missing": "dim"}
CONFIDENCE_STYLES = {"high": "green", "medium": "yellow", "low": "red", None: "grey50"}


def render_text(report: Report) -> Group:
    """The whole report: banner, figures, costs, blocks, paired statistics, refusals, caveats."""
    parts: list[RenderableType] = [recommendation_banner(report)]
    if report.models:
        parts += [figures_table(report), latency_table(report), cost_table(report)]
        utilisation = utilisation_table(report)
        if utilisation is not None:
            parts.append(utilisation)
        parts.append(block_grid(report))
    if report.refused:
        parts.append(refused_list(report))
    if report.paired:
        parts.append(paired_table(report))
    if report.caveats:
        parts.append(caveat_list(report))
    return Group(*parts)


def recommendation_banner(report: Report) -> Panel:
    rec = report.recommendation
    body = Text()
    body.append(rec.summary, style="bold")
    confidence = (rec.confidence or "none").upper()
    body.append(f"\nconfidence: {confidence}", style=f"bold {CONFIDENCE_STYLES[rec.confidence]}")
    for reason in rec.reasons:
        body.append(f"\n  • {reason}")
    body.append(f"\n{rec.label}", style="italic dim")
    return Panel(body, title=f"{report.title}", subtitle=f"{report.goldset.workload_id} {report.goldset.version}",
                 border_style=CONFIDENCE_STYLES[rec.confidence], box=box.HEAVY)


class FittedTable:
    """A report table that fits the console it is printed to (`report.fit`): numbers whole or
    their column dropped with a note, long texts in footnotes under the table."""

    def __init__(self, title: str, columns: list[fit.Column], caption: str | None = None,
                 styles: dict[int, str] | None = None) -> None:
        self.title, self.columns, self.caption = title, columns, caption
        self.styles = styles or {}
        """Row index -> Rich style of that row's label (the winner in bold)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        fitted = fit.fit_table(self.columns, options.max_width, fit.RICH_SIMPLE)
        table = Table(title=self.title, box=box.SIMPLE, title_justify="left", caption=self.caption,
                      caption_justify="left")
        for column, width in zip(fitted.columns, fitted.widths, strict=True):
            # A width per column and no no_wrap: cells fit by construction, headers may wrap.
            table.add_column(column.header, width=width, justify="left" if column.kind != "number" else "right",
                             overflow="fold")
        rows = len(fitted.columns[0].cells) if fitted.columns else 0
        for n in range(rows):
            cells = [Text(c.cells[n], style=self.styles.get(n, "") if c.kind == "label" else "")
                     for c in fitted.columns]
            table.add_row(*cells)
        yield table
        for note in fitted.notes():
            yield Text(note, style="dim")


def _labels(report: Report) -> tuple[str, ...]:
    winner = report.recommendation.winner
    return tuple(row.label + (" ★" if row.label == winner else "") for row in report.models)


def _label_column(report: Report) -> fit.Column:
    return fit.Column("model", _labels(report), "label")


def _number(header: str, cells, drop_rank: int | None = None) -> fit.Column:
    return fit.Column(header, tuple(cells), "number", drop_rank)


def figures_table(report: Report) -> FittedTable:
    rows = report.models
    columns = [
        _label_column(report),
        _number("pass rate", (fmt.pass_rate(r.pass_rate) for r in rows)),
        _number("95% CI", (fmt.interval(r.pass_rate.interval) for r in rows), 4),
        _number("✓ pass", (str(r.counts.passed) for r in rows), 1),
        _number("✗ fail", (str(r.counts.failed) for r in rows), 2),
        _number("? person", (str(r.counts.review) for r in rows), 0),
        _number("! error", (str(r.counts.errored) for r in rows), 3),
    ]
    winner = report.recommendation.winner
    styles = {n: "bold" for n, r in enumerate(rows) if r.label == winner}
    return FittedTable("Pass rate (human tasks excluded; errors count as not passed)", columns, styles=styles)


def latency_table(report: Report) -> FittedTable:
    rows = report.models
    columns = [
        _label_column(report),
        _number("TTFT p50/p95/p99", (fmt.latency(r.latency.ttft_ms) for r in rows), 1),
        _number("E2E p50/p95/p99", (fmt.latency(r.latency.e2e_ms) for r in rows)),
        _number("tokens/task", (fmt.tokens(r.tokens) for r in rows), 0),
    ]
    return FittedTable("Latency (one value per completed task) and tokens", columns,
                       caption="tokens/task = prompt + completion per completed task, summed over every attempt")


def cost_table(report: Report) -> FittedTable:
    rows = report.models
    columns = [
        _label_column(report),
        fit.Column("provenance", tuple(r.provenance for r in rows), "text"),
        fit.Column("GPU peak", tuple(fmt.gpu(r.gpu) for r in rows), "text"),
        fit.Column("cost basis", tuple(fmt.cost_basis(r.cost, r.gpu) for r in rows), "text"),
        _number("run total", (fmt.money(r.cost.total, r.cost.currency) for r in rows), 0),
        _number("per completed task", (fmt.cost_per_task(r.cost) for r in rows)),
    ]
    return FittedTable("Provenance, GPU memory and cost", columns)


def utilisation_table(report: Report) -> FittedTable | None:
    """Hardware cost per completed task if the hardware were busy only part of the time."""
    rows = [row for row in report.models if row.cost.utilisation]
    if not rows:
        return None
    winner = report.recommendation.winner
    labels = tuple(row.label + (" ★" if row.label == winner else "") for row in rows)
    columns = [fit.Column("model", labels, "label")]
    for index, point in enumerate(rows[0].cost.utilisation):
        columns.append(_number(f"{point.utilisation * 100:.0f}%",
                               (fmt.money(r.cost.utilisation[index].per_task, r.cost.currency) for r in rows),
                               UTILISATION_DROP_RANKS.get(point.utilisation)))
    return FittedTable("Hardware cost per completed task by utilisation", columns)


UTILISATION_DROP_RANKS = {0.10: 0, 0.75: 1, 0.25: 2, 0.50: 3}
"""At a narrow width the extremes' neighbours go first; full utilisation is always shown."""


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


def refused_list(report: Report) -> Group:
    lines = [Text("Not shown", style="bold red")]
    lines += [Text(f"  ✗ {r.label} (run {r.run_id}): {r.reason}") for r in report.refused]
    return Group(*lines)


def paired_table(report: Report) -> Group:
    pairs = report.paired
    columns = [
        fit.Column("A", tuple(p.model_a for p in pairs), "label"),
        fit.Column("B", tuple(p.model_b for p in pairs), "label"),
        _number("tasks", (str(p.tasks) for p in pairs)),
        _number("both pass", (str(p.both) for p in pairs), 1),
        _number("only A", (str(p.only_a) for p in pairs)),
        _number("only B", (str(p.only_b) for p in pairs)),
        _number("neither", (str(p.neither) for p in pairs), 0),
        _number("McNemar p", (fmt.DASH if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}" for p in pairs), 2),
    ]
    table = FittedTable("Is the lead larger than noise? (paired, on tasks both scored)", columns)
    return Group(table, *(Text(p.sentence) for p in pairs))


def caveat_list(report: Report) -> Group:
    lines = [Text("Caveats (what this report could not establish)", style="bold")]
    lines += [Text(f"  • {c.text}") for c in report.caveats]
    return Group(*lines)
