"""An evaluator comparison as plain text and as JSON-ready data."""

from __future__ import annotations

from typing import Any

from compare_tui.judge.calibration.load import JudgeCalibration
from compare_tui.judge.calibration.render import calibration_lines, judge_calibration_json, rate_json
from compare_tui.judge.evaluator.compare import FAILED_CALL, Decision, DecisionStatus, EvaluatorComparison
from compare_tui.judge.evaluator.load import LoadedComparison
from compare_tui.judge.pair.render import percent
from compare_tui.vocabulary import Outcome


def decision_text(decision: Decision) -> str:
    if decision.level is not None:
        return decision.level
    return "FAILED CALL" if decision.status == FAILED_CALL else decision.status


def _correctness(c: EvaluatorComparison) -> list[str]:
    if not c.enough_labels:
        return [
            f"Correctness on labelled rows: {c.labelled} row(s) labelled by a person; shown from "
            f"{c.min_labelled} (label more in the triage screen, or `--min-labelled`)."
        ]
    lines = ["Correctness on labelled rows (a person's pass/fail label is the truth here):"]
    for which, correct in (("current", c.current_correct), ("candidate", c.candidate_correct)):
        interval = c.correctness_interval(which)
        ci = "" if interval is None else f" (95% CI {percent(interval.low)}–{percent(interval.high)})"
        lines.append(f"  {which:9} {correct} of {c.labelled} correct, {percent(correct / c.labelled)}{ci}")
    return lines


def move_matrix(c: EvaluatorComparison) -> list[str]:
    """Rows: the current evaluator's level; columns: the candidate's (or a failed call)."""
    if not c.matrix:
        return []
    order: tuple[Outcome | DecisionStatus, ...] = (*Outcome, FAILED_CALL)
    currents = [level for level in Outcome if any(a == level for a, _ in c.matrix)]
    candidates = [level for level in order if any(b == level for _, b in c.matrix)]
    lines = ["Moves (rows: current, columns: candidate):", "  " + " " * 8 + "".join(f"{b:>13}" for b in candidates)]
    for a in currents:
        lines.append(f"  {a:8}" + "".join(f"{c.matrix.get((a, b), 0):>13}" for b in candidates))
    return lines


def _calibration(loaded: LoadedComparison, jc: JudgeCalibration | None) -> list[str]:
    """The candidate judge against people's labels on the whole workload (every run it judged
    with this rubric), and the run's judge pass rate raw and, with enough labels, corrected."""
    if jc is None:
        return []
    run = loaded.run
    return [
        "",
        f"Candidate judge against your labels on workload {jc.workload} (every run it judged with this rubric):",
        *(f"  {line}" for line in calibration_lines(jc, [(run.model_name, run.id)], None)[1:]),
    ]


def render_evaluator_text(loaded: LoadedComparison, calibration: JudgeCalibration | None = None) -> str:
    """The comparison; with `calibration` (the candidate's, `calibration.load_calibration`), the
    candidate's agreement with people's labels and the run's corrected judge pass rate."""
    c, run = loaded.comparison, loaded.run
    lines = [
        f"Evaluator comparison on run {run.id} ({run.model_name}, {run.goldset_name or run.goldset_id})",
        f"current   {c.current_name}",
        f"candidate {c.candidate_name} · judging {loaded.candidate.id}",
        "",
        f"{'task':24} {'current':12} {'candidate':12} {'person':8} changed",
    ]
    for row in c.rows:
        person = row.label or "—"
        mark = "yes" if row.changed else "FAILED CALL" if row.candidate.status == FAILED_CALL else ""
        lines.append(
            f"{row.task_id[:24]:24} {decision_text(row.current):12} {decision_text(row.candidate):12} {person:8} {mark}"
        )
    lines += [
        "",
        f"Agreement with the current evaluator: {c.agreed} of {c.comparable} ({percent(c.agreement)}) — a map of where "
        "they differ, not proof either is right:",
        f"  {c.agreement_map()}   (= same  ≠ changed  ! failed call  · nothing to compare)",
    ]
    lines += move_matrix(c)
    if c.moves:
        common = ", ".join(f"{a}→{b} ×{n}" for a, b, n in c.moves[:6])
        lines.append(f"Most common moves (current → candidate): {common}")
    else:
        lines.append("Most common moves: none (no decision changed)")
    lines += _correctness(c)
    lines += _calibration(loaded, calibration)
    lines += ["", f"Badge: {c.badge.name}"] + [f"  - {reason}" for reason in c.badge.reasons]
    lines.append(f"  thresholds: {c.badge.thresholds}")
    return "\n".join(lines) + "\n"


def evaluator_json(loaded: LoadedComparison, calibration: JudgeCalibration | None = None) -> dict[str, Any]:
    c = loaded.comparison
    calibrated = (
        None
        if calibration is None
        else judge_calibration_json(calibration) | {"judge_pass_rate": rate_json(calibration.rate(loaded.run.id))}
    )
    return {
        "schema": "compare-tui/evaluator-compare",
        "schema_version": 1,
        "run": loaded.run.id,
        "current": c.current_name,
        "candidate": c.candidate_name,
        "candidate_judging": loaded.candidate.id,
        "current_judging": loaded.current.id if loaded.current else None,
        "agreement": {"agreed": c.agreed, "comparable": c.comparable, "map": c.agreement_map()},
        "moves": [{"from": a, "to": b, "rows": n} for a, b, n in c.moves],
        "matrix": [{"current": a, "candidate": b, "rows": n} for (a, b), n in sorted(c.matrix.items())],
        "labelled": c.labelled,
        "min_labelled": c.min_labelled,
        "correct": {"current": c.current_correct, "candidate": c.candidate_correct} if c.enough_labels else None,
        "failed_candidate_calls": c.failed_calls,
        "unlabelled_changes": c.unlabelled_changes,
        "constant_candidate": c.constant,
        "calibration": calibrated,
        "badge": {"name": c.badge.name, "reasons": list(c.badge.reasons), "thresholds": c.badge.thresholds},
        "rows": [
            {
                "task": r.task_id,
                "current": decision_text(r.current),
                "candidate": decision_text(r.candidate),
                "candidate_rationale": r.candidate.rationale,
                "label": r.label,
                "changed": r.changed,
            }
            for r in c.rows
        ],
    }
