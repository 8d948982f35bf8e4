"""Rubric grades as plain text (fits 80 columns) and as JSON-ready data: one computation
(`report.GradeReport`), two forms."""

from __future__ import annotations

import textwrap
from typing import Any, TypedDict

from compare_tui.judge.calibration.render import (
    calibration_lines,
    difference_json,
    judge_calibration_json,
    rate_cells,
    rate_json,
)
from compare_tui.judge.grade.figures import GRADE_TEST, GradeDelta, GradeFigures
from compare_tui.judge.grade.report import GENERAL_CAVEATS, GradeReport, GradeRow, RunGrades
from compare_tui.judge.pair.render import usage_text
from compare_tui.judge.run.usage import JudgeUsage
from compare_tui.report.formatting import number
from compare_tui.report.stats import Interval
from compare_tui.store.judgements import RubricMode

WIDTH = 80
FAILED_MARK, NOT_GRADED_MARK = "!", "·"
MATRIX_RUNS = 7
"""Runs side by side in the text's task table (a task column and seven 8-wide columns fit 80)."""


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    ) or [indent]


def _ci(interval: Interval | None, figures: GradeFigures | None = None, signed: bool = False) -> str:
    if interval is not None:
        spec = "+.2f" if signed else ".2f"
        return f"{number(interval.low, spec)}–{number(interval.high, spec)}"
    if figures is not None and figures.low is not None:
        return f"range {figures.low}–{figures.high}"
    return "—"


def _mark(row: GradeRow) -> str:
    if row.grade is not None:
        return str(row.grade)
    return FAILED_MARK if row.judgement is not None and row.judgement.failed else NOT_GRADED_MARK


def usage_line(usage: JudgeUsage) -> str:
    return usage_text(usage, apart="apart from every graded model's figures")


def _p(delta: GradeDelta) -> str:
    if delta.p_value is None:
        return "—"
    return "<0.001" if delta.p_value < 0.001 else f"{delta.p_value:.3f}"


def _pts(share: float) -> str:
    """A share as signed whole points; exactly 0 as `0` (an interval that reaches zero)."""
    return "0" if share == 0 else number(share * 100, "+.0f")


def _net(delta: GradeDelta) -> str:
    """The net share of tasks graded higher with its 95% interval, in points of the tasks."""
    if delta.net_better is None or delta.interval is None:
        return "—"
    return f"{_pts(delta.net_better)} ({_pts(delta.interval.low)} to {_pts(delta.interval.high)})"


def delta_text(delta: GradeDelta) -> str:
    """One sentence of a run's paired Δ from the baseline's grades (the TUI's summary line)."""
    if delta.delta is None:
        return "no task graded on both sides"
    counts = f"▲{delta.better} ▼{delta.worse} ={delta.same}"
    if delta.p_value is None:
        return f"Δ mean {number(delta.delta, '+.2f')} over {delta.tasks} tasks ({counts}): {delta.conclusion}"
    net = ""
    if delta.net_better is not None and delta.interval is not None:
        net = (
            f" (net share of tasks higher {_pts(delta.net_better)} pts, "
            f"95% CI {_pts(delta.interval.low)} to {_pts(delta.interval.high)})"
        )
    return (
        f"Δ mean {number(delta.delta, '+.2f')} over {delta.tasks} tasks ({counts}); sign test p {_p(delta)}: "
        f"{delta.conclusion}{net}"
    )


def _delta_line(name: str, delta: GradeDelta) -> str:
    if delta.delta is None:
        return f"{name[:18]:18} no task graded on both sides"
    counts = f"▲{delta.better} ▼{delta.worse} ={delta.same}"
    return (
        f"{name[:18]:18} {number(delta.delta, '>+5.2f')} {counts:12} {_net(delta):>16} {_p(delta):>6}  "
        f"{delta.conclusion}"
    )


def _summary(report: GradeReport) -> list[str]:
    """The header, the figures table and the Δ table: what every text view of grades shows."""
    first = report.runs[0].judging
    lines = _wrap(
        f"Rubric grades (1–5, each answer alone) by judge {report.judge} ({first.provenance or 'provenance unknown'})"
    )
    lines += _wrap(f"rubric {report.mode} ({report.rubric_digest[:19]}…) · {first.reply_form} replies")
    if report.mode == RubricMode.SIMILARITY:
        ref = f"run {report.reference.id} ({report.reference.model_name})" if report.reference else "expected outcome"
        lines.append(f"reference: {ref}")
    if report.baseline is not None:
        lines.append(f"baseline: {report.baseline.model_name} (run {report.baseline.id})")
    lines += ["", f"{'model':18} {'graded':>6} {'failed':>6} {'mean':>5} {'95% CI':>12}    1   2   3   4   5"]
    for g in report.runs:
        f = g.figures
        mean = "—" if f.mean is None else f"{f.mean:.2f}"
        dist = "".join(f"{n:>4}" for n in f.distribution)
        lines.append(f"{g.run.model_name[:18]:18} {f.graded:>6} {f.failed:>6} {mean:>5} {_ci(f.interval, f):>12}{dist}")
    deltas = [(g.run.model_name, g.delta) for g in report.runs if g.delta is not None]
    if deltas:
        lines += [
            "",
            "Δ vs the baseline, paired by task: the mean Δ grade; tasks graded ▲ higher,",
            "▼ lower, = the same; the verdict is the exact sign test's (▲ against ▼, p);",
            "net = (▲ − ▼) / tasks in points, with its 95% CI (agrees with the verdict):",
            f"{'model':18} {'Δ mean':>5} {'▲ ▼ =':12} {'net (95% CI)':>16} {'p':>6}  conclusion",
        ]
        lines += [_delta_line(name, delta) for name, delta in deltas]
    lines += _calibration(report)
    return lines


def calibration_notes(report: GradeReport) -> list[str]:
    """The calibration block's lines after its heading (the published page's bullets)."""
    if report.calibration is None:
        return []
    runs = [(g.run.model_name, g.run.id) for g in report.runs]
    base = (report.baseline.model_name, report.baseline.id) if report.baseline is not None else None
    return calibration_lines(report.calibration, runs, base)[1:]


def _calibration(report: GradeReport) -> list[str]:
    """The judge pass rates, raw and corrected, wrapped to 80 columns (none when not read)."""
    if report.calibration is None:
        return []
    runs = [(g.run.model_name, g.run.id) for g in report.runs]
    base = (report.baseline.model_name, report.baseline.id) if report.baseline is not None else None
    lines = [""]
    for line in calibration_lines(report.calibration, runs, base):
        lines += _wrap(line, "" if line.endswith(":") else "  ")
    return lines


def render_grade_summary(report: GradeReport) -> str:
    """The figures without the task table (for `report`), with the caveats about the judge."""
    lines = _summary(report) + ["", *_wrap(usage_line(report.usage))]
    for caveat in report.caveats:
        if caveat not in GENERAL_CAVEATS:  # `grade` prints those
            lines += _wrap(f"- {caveat}", "  ")
    return "\n".join(lines) + "\n"


def render_grade_text(report: GradeReport, *, rationales: bool = False) -> str:
    lines = _summary(report)
    lines += ["", _matrix_header(report.runs)]
    tasks = sorted({row.task_id for g in report.runs for row in g.rows})
    by_run = [{row.task_id: row for row in g.rows} for g in report.runs]
    for task in tasks:
        marks = "".join(f"{_mark(rows[task]) if task in rows else NOT_GRADED_MARK:>8}" for rows in by_run[:MATRIX_RUNS])
        lines.append(f"{task[:24]:24}{marks}")
    lines.append(f"{FAILED_MARK} judge call failed (no grade, left out of the mean) · {NOT_GRADED_MARK} not graded")
    problems = [(g.run.model_name, row) for g in report.runs for row in g.rows if row.reason and row.answer is not None]
    for name, row in problems[:20]:
        lines += _wrap(f"{name} {row.task_id}: {row.reason}", "  ")
    if len(problems) > 20:
        lines.append(f"  … and {len(problems) - 20} more (see --format json)")
    if rationales:
        lines += ["", "Rationales:"]
        for g in report.runs:
            for row in g.rows:
                if row.grade is not None and row.judgement is not None:
                    lines += _wrap(f"{g.run.model_name} {row.task_id} [{row.grade}] {row.judgement.rationale}", "  ")
    lines += ["", *_wrap(usage_line(report.usage)), "", "Caveats:"]
    for caveat in report.caveats:
        lines += _wrap(f"- {caveat}", "  ")
    return "\n".join(lines) + "\n"


def _matrix_header(runs: tuple[RunGrades, ...]) -> str:
    names = "".join(f"{g.run.model_name[:7]:>8}" for g in runs[:MATRIX_RUNS])
    more = [f"(+{len(runs) - MATRIX_RUNS} more runs: see --format json)"] if len(runs) > MATRIX_RUNS else []
    return "\n".join([f"{'task':24}{names}", *more])


class JudgeUsageJson(TypedDict):
    """What grading cost: calls, tokens, latency and money (`run.usage.JudgeUsage`)."""

    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    usage_missing: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    cost: float | None
    currency: str
    cost_note: str


def _interval(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _usage(u: JudgeUsage) -> JudgeUsageJson:
    return {
        "calls": u.calls,
        "failed": u.failed,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "usage_missing": u.usage_missing,
        "latency_p50_ms": u.latency_ms.p50,
        "latency_p95_ms": u.latency_ms.p95,
        "cost": u.cost,
        "currency": u.currency,
        "cost_note": u.cost_note,
    }


def _run_figures_json(g: RunGrades, report: GradeReport | None = None) -> dict[str, Any]:
    f, d = g.figures, g.delta
    jc = report.calibration if report is not None else None
    calibrated: dict[str, Any] = {}
    if jc is not None:
        calibrated["judge_pass_rate"] = rate_json(jc.rate(g.run.id))
        if report is not None and report.baseline is not None and g.run.id != report.baseline.id:
            calibrated["corrected_delta_vs_baseline"] = difference_json(jc.difference(g.run.id, report.baseline.id))
    return calibrated | {
        "run": g.run.id,
        "model": g.run.model_name,
        "grading": g.judging.id,
        "figures": {
            "graded": f.graded,
            "failed": f.failed,
            "not_graded": f.not_graded,
            "mean": f.mean,
            "mean_ci95": _interval(f.interval),
            "distribution": dict(zip("12345", f.distribution, strict=True)),
        },
        "delta_vs_baseline": None
        if d is None
        else {
            "tasks": d.tasks,
            "delta": d.delta,
            "net_better": d.net_better,
            "net_better_ci95": _interval(d.interval),
            "test": GRADE_TEST,
            "p_value": d.p_value,
            "conclusion": d.conclusion,
            "better": d.better,
            "worse": d.worse,
            "same": d.same,
        },
        "judge_usage": _usage(g.usage),
        "caveats": list(g.caveats),
    }


def _run_json(g: RunGrades, report: GradeReport) -> dict[str, Any]:
    return _run_figures_json(g, report) | {
        "rows": [
            {
                "task": r.task_id,
                "attempt": r.answer.attempt if r.answer else None,
                "grade": r.grade,
                "scorer": r.answer.outcome if r.answer else None,
                "rationale": r.judgement.rationale if r.judgement else None,
                "error_class": r.judgement.error_class if r.judgement else None,
                "reason": r.reason or None,
            }
            for r in g.rows
        ],
    }


def grade_json(report: GradeReport) -> dict[str, Any]:
    """`grade --format json`: the figures and every graded answer's row."""
    return (
        {"schema": "compare-tui/grades", "schema_version": 2}
        | _header_json(report)
        | {
            "runs": [_run_json(g, report) for g in report.runs],
            "judge_usage": _usage(report.usage),
            "caveats": list(report.caveats),
        }
    )


def grade_summary_json(report: GradeReport) -> dict[str, Any]:
    """The figures without the per-task rows: one entry of the report document's `grades`."""
    return _header_json(report) | {
        "runs": [_run_figures_json(g, report) for g in report.runs],
        "judge_usage": _usage(report.usage),
        "caveats": list(report.caveats),
    }


def _header_json(report: GradeReport) -> dict[str, Any]:
    first = report.runs[0].judging
    calibration = {} if report.calibration is None else {"calibration": judge_calibration_json(report.calibration)}
    return calibration | {
        "judge": {"model": report.judge, "provenance": first.provenance, "entry": first.judge_entry},
        "rubric": {
            "mode": report.mode,
            "digest": report.rubric_digest,
            "reply_form": first.reply_form,
            "text": first.rubric,
            "scale": [1, 5],
        },
        "reference": None
        if report.reference is None
        else {"run": report.reference.id, "model": report.reference.model_name},
        "baseline": None
        if report.baseline is None
        else {"run": report.baseline.id, "model": report.baseline.model_name},
    }


def _md_ci(interval: Interval | None, figures: GradeFigures | None = None, signed: bool = False) -> str:
    return _ci(interval, figures, signed).replace("—", "–")


GRADE_HEADERS = (
    "model",
    "graded",
    "failed",
    "mean",
    "95% CI",
    "1",
    "2",
    "3",
    "4",
    "5",
    "Δ vs baseline (paired; sign test)",
    "judge pass rate (raw, 95% CI)",
    "corrected (95% CI)",
)
"""The columns of the grades table in Markdown and on a published page (`grade_rows`)."""


def grade_rows(report: GradeReport) -> list[tuple[str, ...]]:
    """One row of cells per run under `GRADE_HEADERS`: the same numbers as the text summary
    and `grade_summary_json`."""
    rows = []
    for g in report.runs:
        f, d = g.figures, g.delta
        mean = "–" if f.mean is None else f"{f.mean:.2f}"
        delta = "–" if d is None else ("no task graded on both sides" if d.delta is None else delta_text(d))
        raw, corrected = rate_cells(report.calibration.rate(g.run.id) if report.calibration is not None else None)
        rows.append(
            (
                g.run.model_name,
                str(f.graded),
                str(f.failed),
                mean,
                _md_ci(f.interval, f),
                *(str(n) for n in f.distribution),
                delta,
                raw,
                corrected,
            )
        )
    return rows


def grade_intro(report: GradeReport, *, markdown: bool = False) -> str:
    """Who graded, how, against what: the sentence above the grades table (Markdown marks the
    judge strong and the names as code)."""
    strong, code = ("**", "`") if markdown else ("", "")
    first = report.runs[0].judging
    text = (
        f"Each answer graded alone on a 1–5 scale by the judge {strong}{report.judge}{strong} "
        f"({first.provenance or 'provenance unknown'}); rubric {code}{report.mode}{code} "
        f"({code}{report.rubric_digest[:19]}…{code}), {first.reply_form} replies."
    )
    if report.mode == RubricMode.SIMILARITY:
        ref = (
            f"run {code}{report.reference.id}{code} ({report.reference.model_name})"
            if report.reference
            else "each task's expected outcome"
        )
        text += f" Reference: {ref}."
    if report.baseline is not None:
        text += f" Baseline: {report.baseline.model_name} (run {code}{report.baseline.id}{code})."
    return text


def render_grade_md(report: GradeReport) -> str:
    """The figures as a Markdown section (for `report --format md`): the same numbers as the
    text summary and `grade_summary_json`."""
    lines = [f"## Rubric grades by {report.judge}", "", grade_intro(report, markdown=True)]
    lines += [
        "",
        "| " + " | ".join(GRADE_HEADERS) + " |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in grade_rows(report)]
    if report.calibration is not None:
        runs = [(g.run.model_name, g.run.id) for g in report.runs]
        base = (report.baseline.model_name, report.baseline.id) if report.baseline is not None else None
        head, *rest = calibration_lines(report.calibration, runs, base)
        lines += ["", f"**{head}**", "", *(f"- {line}" for line in rest)]
    lines += ["", usage_line(report.usage), ""]
    lines += [f"- {caveat}" for caveat in report.caveats]
    return "\n".join(lines) + "\n"
