"""The report's tables as Textual `DataTable`s, filled from a `Report`. Formatting only: every
figure comes from the report object and is spelled by `compare_tui.report.formatting`."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from compare_tui.judge import GradeFigures, GradeReport, delta_text
from compare_tui.judge.calibration.figures import CorrectedRate
from compare_tui.judge.calibration.render import rate_cells
from compare_tui.report import Report, columns, fit
from compare_tui.report import formatting as fmt
from compare_tui.vocabulary import money


def shorten(cell: str, width: int) -> str:
    """`cell` cut to `width` with `…`, the recommended model's ★ kept: a cut name still says
    which model the rule recommends."""
    mark = columns.WINNER_MARK
    if cell.endswith(mark) and width > len(mark) + 1:
        return cell[: width - len(mark) - 1] + "…" + mark
    return cell[: max(0, width - 1)] + "…"


WRAPPED_HEADERS = replace(fit.DATA_TABLE, header_wraps=True)
"""A DataTable whose headers may take more than one line (`DataTable.header_height`)."""


def fill(
    table: DataTable[Any], table_columns: list[fit.Column], width: int, whole: str = "`compare-tui report --format md`"
) -> tuple[str, ...]:
    """Fill `table` with `table_columns` fitted to `width` (`report.fit`) and return the notes
    to show under it (footnotes, columns left out). Every column gets an explicit width that
    holds its cells whole: a DataTable crops a cell wider than its column without a mark, so
    a label (the one column allowed to shrink) is ellipsised here instead. When one-line
    headers would leave a column out, or not fit at all, the headers wrap (as the text
    report's do) if that keeps more columns (or one-line headers overflow) and moves no more
    cells to footnotes: at 80 columns the pass rates then keep `✓ pass` beside `✗ fail`.
    `whole` names the command that shows every column."""
    table.clear(columns=True)
    if not table_columns:
        return ()
    fitted = fit.fit_table(table_columns, width, fit.DATA_TABLE)
    overflows = fit.DATA_TABLE.fixed + sum(w + fit.DATA_TABLE.per_column for w in fitted.widths) > width
    if fitted.dropped or overflows:
        wrapped = fit.fit_table(table_columns, width, WRAPPED_HEADERS)
        keeps_more = len(wrapped.dropped) < len(fitted.dropped) or overflows
        if keeps_more and len(wrapped.footnotes) <= len(fitted.footnotes):
            fitted = replace(wrapped, widths=header_widths(wrapped, WRAPPED_HEADERS))
    headers = [wrap_header(column.header, w) for column, w in zip(fitted.columns, fitted.widths, strict=True)]
    table.header_height = max(len(lines) for lines in headers)
    for w, header in zip(fitted.widths, headers, strict=True):
        table.add_column("\n".join(header), width=w)
    lines = 0
    for n in range(len(fitted.columns[0].cells)):
        cells, height = [], 1
        for column, w in zip(fitted.columns, fitted.widths, strict=True):
            cell = column.cells[n]
            if len(cell) > w and column.kind == "label":
                # A model name wraps (at its hyphens where it can) rather than lose its end.
                parts = wrap_name(cell, w)
                cell, height = "\n".join(parts), max(height, len(parts))
            elif len(cell) > w:
                cell = shorten(cell, w)
            cells.append(Text(cell, justify="right" if column.kind == "number" else "left"))
        table.add_row(*cells, height=height)
        lines += height
    # An explicit height (the header and each row's lines; CSS's max-height still caps it): an
    # auto height is measured when the table next lays out, and under load a screen could be
    # drawn with the rows added but the table still one line high (a flaky report snapshot).
    table.styles.height = lines + (table.header_height if table.show_header else 0)
    return fitted.notes(whole)


def header_widths(fitted: fit.FittedTable, overhead: fit.Overhead) -> tuple[int, ...]:
    """`fitted`'s widths with the room left over, and what the model names hold above their
    least width, given to the columns whose headers wrap: the header row as few lines as that
    allows (`· not done` on two lines rather than three; a long name wraps one line more)."""
    columns, widths = fitted.columns, list(fitted.widths)
    spare = fitted.width - overhead.fixed - sum(w + overhead.per_column for w in widths)
    floors = [
        min(fit.natural_width(c, overhead), fit.LABEL_MIN) if c.kind == "label" else w
        for c, w in zip(columns, widths, strict=True)
    ]
    slack = spare + sum(w - floor for w, floor in zip(widths, floors, strict=True))
    tallest = max(len(wrap_header(c.header, w)) for c, w in zip(columns, widths, strict=True))
    for lines in range(1, tallest):
        wanted = [
            w if c.kind == "label" else _width_for(c.header, w, lines) for c, w in zip(columns, widths, strict=True)
        ]
        need = sum(wanted) - sum(widths)
        if need > slack:
            continue
        taken = max(0, need - spare)  # from the names, the widest first
        for n in sorted(range(len(columns)), key=lambda i: floors[i] - widths[i]):
            give = min(taken, wanted[n] - floors[n]) if columns[n].kind == "label" else 0
            wanted[n] -= give
            taken -= give
        return tuple(wanted)
    return tuple(widths)


def _width_for(header: str, width: int, lines: int) -> int:
    """The least width from `width` up at which `header` wraps onto at most `lines` lines."""
    while len(wrap_header(header, width)) > lines:
        width += 1
    return width


def wrap_header(header: str, width: int) -> list[str]:
    """`header` on lines of at most `width` characters, at its spaces (`✓ pass` → `✓`, `pass`)."""
    return textwrap.wrap(header, max(1, width), break_long_words=False) or [header]


def wrap_name(name: str, width: int) -> list[str]:
    """`name` on lines of at most `width` characters: at hyphens and spaces where it can."""
    return textwrap.wrap(name, max(1, width), break_on_hyphens=True, break_long_words=True) or [name]


def fill_pass_rates(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...]:
    return fill(table, columns.pass_rate_columns(report), width) + (columns.PASS_RATE_CAPTION,)


def fill_latency(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...]:
    return fill(table, columns.latency_columns(report), width) + (columns.LATENCY_CAPTION,)


def fill_cost(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...]:
    return fill(table, columns.cost_columns(report), width)


def fill_utilisation(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...] | None:
    """The hardware cost per completed task at each utilisation level; None when no row has one."""
    found = columns.utilisation_columns(report)
    if not found:
        table.clear(columns=True)
        return None
    return fill(table, found, width)


def fill_paired(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...]:
    return fill(table, columns.paired_columns(report), width)


def fill_versus(table: DataTable[Any], report: Report, width: int) -> tuple[str, ...]:
    found = columns.versus_columns(report)
    return fill(table, found, width) if found else ()


def decision_text(report: Report) -> str:
    """The decision's one line, or why there is none (empty without a baseline)."""
    if report.decision is not None:
        return report.decision.summary
    return report.decision_note or ""


def recommendation_text(report: Report) -> Text:
    rec = report.recommendation
    text = Text()
    if report.rating_note:
        text.append(f"⚠ {report.rating_note}\n", style="bold")
    text.append(rec.summary, style="bold")
    text.append(f"\nconfidence: {fmt.confidence(rec.confidence)}", style="bold")
    for reason in rec.reasons:
        text.append(f"\n  • {reason}")
    text.append(f"\n{rec.label}", style="italic")
    return text


def caveats_text(report: Report) -> str:
    if not report.caveats:
        return "No caveats."
    return "\n".join(f"• {c.text}" for c in report.caveats)


def runs_text(report: Report) -> str:
    """Whole-run replay: per model, runs driven without losing a step and the step pass rate,
    then one row per run: a mark per step (step 1 first) and the result in words."""
    lines = []
    for fig in report.trajectories:
        lines += [
            fig.label,
            f"  runs driven without losing a step: {fmt.runs_driven(fig)}",
            f"  step pass rate: {fmt.step_rate(fig)}",
        ]
        run_width, steps_width = fmt.strip_widths(fig)
        lines += [
            f"  {strip.run:<{run_width}}  {fmt.strip_marks(strip):<{steps_width}}  {fmt.run_verdict(strip)}"
            for strip in fig.runs
        ]
    lines.append(
        "✓ step kept · ✗ step lost · ? needs a person · ! error · · not done "
        "(a step not measured counts neither as lost nor as kept)"
    )
    return "\n".join(lines)


def grades_text(grades: Sequence[GradeReport]) -> str:
    """The stored rubric grades, short: per judge × rubric, the judge named with its own calls,
    failures, latency and cost (apart from the graded models'), then per graded run the mean
    with its interval, the distribution, failed calls, and Δ vs the baseline."""
    lines = []
    for g in grades:
        usage = g.usage
        latency = "" if usage.latency_ms.p50 is None else f", p50 {usage.latency_ms.p50 / 1000:.2f} s"
        cost = "" if usage.cost is None else f", {money(usage.cost, usage.currency)}"
        lines.append(f"judge {g.judge} · rubric {g.mode} · {usage.calls} calls, {usage.failed} failed{latency}{cost}")
        if g.calibration is not None:
            lines.append(f"  pass at grade ≥ {g.calibration.pass_at} · {g.calibration.calibration.sentence()}")
        for run in g.runs:
            f, d = run.figures, run.delta
            mean = "no grade" if f.mean is None else f"mean {f.mean:.2f} ({_grade_range(f)})"
            dist = " ".join(f"{n}:{count}" for n, count in zip("12345", f.distribution, strict=True))
            failed = f" · {f.failed} failed" if f.failed else ""
            lines.append(f"  {run.run.model_name}  {mean}  {dist}{failed}")
            if d is not None and d.delta is not None:
                lines.append(f"    vs baseline: {delta_text(d)}")
            if g.calibration is not None:
                lines.append(f"    {judge_rate_text(g.calibration.rate(run.run.id))}")
    lines.append("`compare-tui grade RUN --judge J` shows every grade and the judge's caveats.")
    return "\n".join(lines)


def judge_rate_text(rate: CorrectedRate | None) -> str:
    """The judge's pass rate raw beside the corrected one, or why not (fits 80 columns)."""
    raw, corrected = rate_cells(rate)
    if rate is None or rate.raw is None:
        return "judge pass: nothing judged"
    if rate.calibrated:
        return f"judge pass {raw} raw · {corrected}, {rate.labels} labels"
    return f"judge pass {raw} raw · not verified: {rate.status}"


def _grade_range(f: GradeFigures) -> str:
    if f.interval is not None:
        return f"95% CI {f.interval.low:.2f}–{f.interval.high:.2f}"
    return f"range {f.low}–{f.high}" if f.low is not None else "—"


def refused_text(report: Report) -> str:
    return "\n".join(f"✗ {r.label} (run {r.run_id}) not shown: {r.reason}" for r in report.refused)


def legend() -> str:
    """Every mark and its words on one line that fits at 80 columns (two spaces apart)."""
    words = {**fmt.MARK_WORDS, "error": "error (scorer/request failed)"}
    return "  ".join(f"{fmt.MARKS[s]} {w}" for s, w in words.items())
