"""A judge's calibration and its corrected rates in words and as JSON-ready data: computed once
(`load.JudgeCalibration`), shown by the grade report's text, Markdown, JSON, the TUI, the
published page and the CI gate alike."""

from __future__ import annotations

from typing import TypedDict

from compare_tui.judge.calibration.figures import ASSUMPTION, METHOD, Calibration, CorrectedRate
from compare_tui.judge.calibration.load import JudgeCalibration
from compare_tui.judge.calibration.paired import CorrectedDifference
from compare_tui.report.formatting import number
from compare_tui.report.stats import Interval


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def pct_interval(interval: Interval | None) -> str:
    return "—" if interval is None else f"{interval.low * 100:.0f}–{interval.high * 100:.0f}%"


def calibration_sentence(jc: JudgeCalibration) -> str:
    """The agreement sentence with sensitivity and specificity and their intervals."""
    c = jc.calibration
    text = c.sentence()
    if c.counts.labelled:
        text += (
            f" (sensitivity {pct(c.sensitivity)}, 95% CI {pct_interval(c.sensitivity_interval)}; "
            f"specificity {pct(c.specificity)}, 95% CI {pct_interval(c.specificity_interval)}; "
            f"pass at grade ≥ {jc.pass_at}; {c.counts.labelled} labels on workload {jc.workload})"
        )
    return text


def rate_cells(rate: CorrectedRate | None) -> tuple[str, str]:
    """(raw, corrected) cells: `55% (45–65%)`, and `52% (15–85%) human-calibrated` or why not."""
    if rate is None or rate.raw is None:
        return "—", "—"
    raw = f"{pct(rate.raw)} ({pct_interval(rate.raw_interval)})"
    if not rate.calibrated:
        return raw, "not verified"
    return raw, f"{pct(rate.corrected)} ({pct_interval(rate.interval)}) {rate.status}"


def rate_sentence(model: str, rate: CorrectedRate | None) -> str:
    """One line per run: raw and corrected side by side with the label count, or why not."""
    if rate is None or rate.raw is None:
        return f"{model}: nothing judged"
    raw, corrected = rate_cells(rate)
    if rate.calibrated:
        return f"{model}: judge pass rate {raw} raw · {corrected}, {rate.labels} labels"
    return f"{model}: judge pass rate {raw} raw · {rate.reason}"


def difference_sentence(model: str, baseline: str, d: CorrectedDifference) -> str:
    if d.interval is None or d.corrected is None:
        return f"{model} vs {baseline}: {d.reason}"
    low, high = (_points(v) for v in (d.interval.low, d.interval.high))
    return (
        f"{model} vs {baseline}, paired over {d.tasks} tasks: corrected Δ {_points(d.corrected)} pts "
        f"(95% CI {low} to {high}) → {d.conclusion}"
    )


def _points(share: float) -> str:
    """A share as signed whole points; `0` where it rounds to nothing (an interval reaching zero)."""
    return "0" if round(share * 100) == 0 else number(share * 100, "+.0f")


def calibration_lines(jc: JudgeCalibration, runs: list[tuple[str, str]], baseline: tuple[str, str] | None) -> list[str]:
    """The calibration block of a grade report: the sentence, a line per run (`runs`: model,
    run id), the paired corrected comparison with the baseline's run, the caveats."""
    lines = [f"Judge pass rate (grade ≥ {jc.pass_at}), raw and human-calibrated:", calibration_sentence(jc)]
    lines += [rate_sentence(model, jc.rate(run_id)) for model, run_id in runs]
    if baseline is not None:
        for model, run_id in runs:
            if run_id != baseline[1] and jc.rate(run_id) is not None:
                lines.append(difference_sentence(model, baseline[0], jc.difference(run_id, baseline[1])))
    if any(rate.calibrated for rate in jc.rates.values()):
        lines.append(f"Method: {METHOD}; {ASSUMPTION}.")
    if jc.drift:
        lines.append(jc.drift)
    return lines


class CalibrationJson(TypedDict):
    """A judge's calibration against people's labels: the counts and both rates with their CIs."""

    labels: int
    right: int
    wrong: int
    right_passed: int
    wrong_failed: int
    sensitivity: float | None
    sensitivity_ci95: list[float] | None
    specificity: float | None
    specificity_ci95: list[float] | None
    min_labels_each: int
    sentence: str


class JudgeCalibrationJson(CalibrationJson):
    """`CalibrationJson` with the judge, rubric and workload it holds for."""

    judge: str
    rubric_digest: str
    pass_at: int
    workload: str
    method: str
    assumption: str
    drift: str | None


class RateJson(TypedDict):
    """A pass rate as judged and as corrected by the calibration."""

    passed: int
    judged: int
    raw: float | None
    raw_ci95: list[float] | None
    status: str
    corrected: float | None
    corrected_ci95: list[float] | None
    labels: int
    reason: str | None


class DifferenceJson(TypedDict):
    """A corrected difference between two runs' pass rates."""

    tasks: int
    only_candidate: int
    only_baseline: int
    raw: float | None
    corrected: float | None
    corrected_ci95: list[float] | None
    conclusion: str
    reason: str | None


def _interval(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def calibration_json(c: Calibration) -> CalibrationJson:
    k = c.counts
    return {
        "labels": k.labelled,
        "right": k.right,
        "wrong": k.wrong,
        "right_passed": k.right_passed,
        "wrong_failed": k.wrong_failed,
        "sensitivity": c.sensitivity,
        "sensitivity_ci95": _interval(c.sensitivity_interval),
        "specificity": c.specificity,
        "specificity_ci95": _interval(c.specificity_interval),
        "min_labels_each": c.min_each,
        "sentence": c.sentence(),
    }


def rate_json(rate: CorrectedRate | None) -> RateJson | None:
    if rate is None:
        return None
    return {
        "passed": rate.passed,
        "judged": rate.judged,
        "raw": rate.raw,
        "raw_ci95": _interval(rate.raw_interval),
        "status": rate.status,
        "corrected": rate.corrected,
        "corrected_ci95": _interval(rate.interval),
        "labels": rate.labels,
        "reason": rate.reason or None,
    }


def difference_json(d: CorrectedDifference) -> DifferenceJson:
    return {
        "tasks": d.tasks,
        "only_candidate": d.only_candidate,
        "only_baseline": d.only_baseline,
        "raw": d.raw,
        "corrected": d.corrected,
        "corrected_ci95": _interval(d.interval),
        "conclusion": d.conclusion,
        "reason": d.reason or None,
    }


def judge_calibration_json(jc: JudgeCalibration) -> JudgeCalibrationJson:
    return {
        "judge": jc.judge,
        "rubric_digest": jc.rubric_digest,
        "pass_at": jc.pass_at,
        "workload": jc.workload,
        "method": METHOD,
        "assumption": ASSUMPTION,
        "drift": jc.drift,
        **calibration_json(jc.calibration),
    }
