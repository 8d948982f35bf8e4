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
        parts += [figures_table(report), cost_table(report), block_grid(report)]
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


def figures_table(report: Report) -> Table:
    table = Table(title="Figures", box=box.SIMPLE_HEAVY, title_justify="left")
    for header, justify in (("model", "left"), ("provenance", "left"), ("pass rate", "right"),
                            ("95% CI", "right"), ("✓", "right"), ("✗", "right"), ("?", "right"),
                            ("!", "right"), ("TTFT p50/p95/p99", "right"), ("E2E p50/p95/p99", "right"),
                            ("tokens/task", "right"), ("GPU peak", "right"), ("cost/task", "right")):
        table.add_column(header, justify=justify)
    winner = report.recommendation.winner
    for row in report.models:
        c = row.counts
        name = Text(row.label, style="bold" if row.label == winner else "")
        if row.label == winner:
            name.append(" ★")
        table.add_row(
            name, row.provenance, fmt.pass_rate(row.pass_rate), fmt.interval(row.pass_rate.interval),
            str(c.passed), str(c.failed), str(c.review), str(c.errored), fmt.latency(row.latency.ttft_ms),
            fmt.latency(row.latency.e2e_ms), fmt.tokens(row.tokens), fmt.gpu(row.gpu),
            fmt.cost_per_task(row.cost),
        )
    table.caption = "tokens/task = prompt + completion per completed task, over every attempt"
    return table


def cost_table(report: Report) -> Table:
    table = Table(title="Cost", box=box.SIMPLE, title_justify="left")
    levels = next((r.cost.utilisation for r in report.models if r.cost.utilisation), ())
    table.add_column("model")
    table.add_column("basis")
    table.add_column("run total", justify="right")
    table.add_column("per completed task", justify="right")
    for point in levels:
        table.add_column(f"at {point.utilisation * 100:.0f}% use", justify="right")
    for row in report.models:
        cost = row.cost
        cells = [row.label, fmt.cost_basis(cost), fmt.money(cost.total, cost.currency), fmt.cost_per_task(cost)]
        by_level = {p.utilisation: fmt.money(p.per_task, cost.currency) for p in cost.utilisation}
        cells += [by_level.get(point.utilisation, fmt.DASH) for point in levels]
        table.add_row(*cells)
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
