"""The report for the terminal, as Rich renderables. Formatting only.

The one module of `compare_tui.report` that imports Rich. Every block has a mark of its own
shape (✓ ✗ ? ! ·); colour repeats the mark and is never the only signal (a monochrome
terminal, a colour-blind reader, a log file all read the same).
"""

from __future__ import annotations

from itertools import groupby

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

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


def _model_column(table: Table, report: Report) -> None:
    width = min(30, max((len(row.label) for row in report.models), default=5) + 2)
    table.add_column("model", min_width=width, no_wrap=True)


def figures_table(report: Report) -> Table:
    table = Table(title="Pass rate (human tasks excluded; errors count as not passed)", box=box.SIMPLE_HEAVY,
                  title_justify="left")
    _model_column(table, report)
    for header in ("pass rate", "95% CI", "✓ pass", "✗ fail", "? person", "! error"):
        table.add_column(header, justify="right", no_wrap=True)
    winner = report.recommendation.winner
    for row in report.models:
        c = row.counts
        name = Text(row.label, style="bold" if row.label == winner else "")
        if row.label == winner:
            name.append(" ★")
        table.add_row(name, fmt.pass_rate(row.pass_rate), fmt.interval(row.pass_rate.interval), str(c.passed),
                      str(c.failed), str(c.review), str(c.errored))
    return table


def latency_table(report: Report) -> Table:
    table = Table(title="Latency (one value per completed task) and tokens", box=box.SIMPLE, title_justify="left")
    _model_column(table, report)
    for header in ("TTFT p50/p95/p99", "E2E p50/p95/p99", "tokens/task"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in report.models:
        table.add_row(row.label, fmt.latency(row.latency.ttft_ms), fmt.latency(row.latency.e2e_ms),
                      fmt.tokens(row.tokens))
    table.caption = "tokens/task = prompt + completion per completed task, summed over every attempt"
    return table


def cost_table(report: Report) -> Table:
    table = Table(title="Provenance, GPU memory and cost", box=box.SIMPLE, title_justify="left")
    _model_column(table, report)
    table.add_column("provenance", ratio=2)
    table.add_column("GPU peak", ratio=1)
    table.add_column("cost basis", ratio=2)
    table.add_column("run total", justify="right", no_wrap=True)
    table.add_column("per completed task", justify="right", no_wrap=True)
    for row in report.models:
        cost = row.cost
        table.add_row(row.label, row.provenance, fmt.gpu(row.gpu), fmt.cost_basis(cost),
                      fmt.money(cost.total, cost.currency), fmt.cost_per_task(cost))
    return table


def utilisation_table(report: Report) -> Table | None:
    """Hardware cost per completed task if the hardware were busy only part of the time."""
    rows = [row for row in report.models if row.cost.utilisation]
    if not rows:
        return None
    table = Table(title="Hardware cost per completed task by utilisation", box=box.SIMPLE, title_justify="left")
    _model_column(table, report)
    for point in rows[0].cost.utilisation:
        table.add_column(f"{point.utilisation * 100:.0f}%", justify="right", no_wrap=True)
    for row in rows:
        table.add_row(row.label, *(fmt.money(p.per_task, row.cost.currency) for p in row.cost.utilisation))
    return table


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
    table = Table(title="Is the lead larger than noise? (paired, on tasks both scored)", box=box.SIMPLE,
                  title_justify="left")
    for header in ("A", "B", "tasks", "both pass", "only A", "only B", "neither", "McNemar p"):
        table.add_column(header, justify="left" if header in ("A", "B") else "right")
    for p in report.paired:
        p_value = fmt.DASH if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}"
        table.add_row(p.model_a, p.model_b, str(p.tasks), str(p.both), str(p.only_a), str(p.only_b),
                      str(p.neither), p_value)
    return Group(table, *(Text(p.sentence) for p in report.paired))


def caveat_list(report: Report) -> Group:
    lines = [Text("Caveats (what this report could not establish)", style="bold")]
    lines += [Text(f"  • {c.text}") for c in report.caveats]
    return Group(*lines)
