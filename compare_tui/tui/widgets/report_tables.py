"""The report's tables as Textual `DataTable`s, filled from a `Report`. Formatting only: every
figure comes from the report object and is spelled by `compare_tui.report.formatting`."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from compare_tui.report import Report
from compare_tui.report import formatting as fmt
from compare_tui.tui.plain_text import plain_row


def _table(table: DataTable, *columns: str) -> DataTable:
    table.clear(columns=True)
    table.add_columns(*columns)
    return table


def fill_pass_rates(table: DataTable, report: Report) -> None:
    _table(table, "model", "pass rate", "95% CI", "✓ pass", "✗ fail", "? person", "! error", "· not run")
    winner = report.recommendation.winner
    for row in report.models:
        c = row.counts
        name = Text(row.label + (" ★" if row.label == winner else ""), style="bold" if row.label == winner else "")
        table.add_row(*plain_row(name, fmt.pass_rate(row.pass_rate), fmt.interval(row.pass_rate.interval), c.passed,
                                 c.failed, c.review, c.errored, c.missing), key=row.run_id)


def fill_latency(table: DataTable, report: Report) -> None:
    _table(table, "model", "TTFT p50/p95/p99", "E2E p50/p95/p99", "tokens/task (prompt + completion)")
    for row in report.models:
        table.add_row(*plain_row(row.label, fmt.latency(row.latency.ttft_ms), fmt.latency(row.latency.e2e_ms),
                                 fmt.tokens(row.tokens)), key=row.run_id)


def fill_cost(table: DataTable, report: Report) -> None:
    _table(table, "model", "provenance", "GPU peak", "cost basis", "run total", "per completed task")
    for row in report.models:
        cost = row.cost
        table.add_row(*plain_row(row.label, row.provenance, fmt.gpu(row.gpu), fmt.cost_basis(cost),
                                 fmt.money(cost.total, cost.currency), fmt.cost_per_task(cost)), key=row.run_id)


def fill_utilisation(table: DataTable, report: Report) -> bool:
    """The hardware cost per completed task at each utilisation level; False when no row has one."""
    rows = [row for row in report.models if row.cost.utilisation]
    if not rows:
        _table(table, "hardware cost by utilisation")
        return False
    _table(table, "model", *(f"{p.utilisation * 100:.0f}% busy" for p in rows[0].cost.utilisation))
    for row in rows:
        table.add_row(*plain_row(row.label, *(fmt.money(p.per_task, row.cost.currency) for p in row.cost.utilisation)),
                      key=row.run_id)
    return True


def fill_paired(table: DataTable, report: Report) -> None:
    _table(table, "A", "B", "tasks", "both pass", "only A", "only B", "neither", "McNemar p", "95% CI of A − B")
    for p in report.paired:
        p_value = fmt.DASH if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}"
        ci = fmt.DASH if p.interval is None else f"{p.interval.low * 100:+.1f} to {p.interval.high * 100:+.1f} pts"
        table.add_row(*plain_row(p.model_a, p.model_b, p.tasks, p.both, p.only_a, p.only_b, p.neither, p_value, ci))


def recommendation_text(report: Report) -> Text:
    rec = report.recommendation
    text = Text()
    text.append(rec.summary, style="bold")
    text.append(f"\nconfidence: {(rec.confidence or 'none').upper()}", style="bold")
    for reason in rec.reasons:
        text.append(f"\n  • {reason}")
    text.append(f"\n{rec.label}", style="italic")
    return text


def caveats_text(report: Report) -> str:
    if not report.caveats:
        return "No caveats."
    return "\n".join(f"• {c.text}" for c in report.caveats)


def refused_text(report: Report) -> str:
    return "\n".join(f"✗ {r.label} (run {r.run_id}) not shown: {r.reason}" for r in report.refused)


def legend() -> str:
    return "   ".join(f"{fmt.MARKS[s]} {w}" for s, w in fmt.MARK_WORDS.items())
