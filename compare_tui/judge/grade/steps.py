"""Stored 1–5 grades as the verdict of whole-run replay steps that wait for a person
(`report --steps-by-grade JUDGE[:RUBRIC]`, opt-in).

Read from the store only: no judge is asked here. The grades are those `compare-tui grade RUN
--judge JUDGE --rubric RUBRIC` stored for each run's judged answer; `report.trajectories`
applies them (a person's verdict always wins)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from compare_tui.errors import CompareTuiError
from compare_tui.judge.calibration.load import load_calibration
from compare_tui.judge.calibration.render import calibration_sentence
from compare_tui.judge.grade.report import load_run_grades
from compare_tui.judge.grade.scale import load_scale_rubric
from compare_tui.judge.prompt.rubric import RubricError
from compare_tui.report.inputs import StepGrading
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgingRecord
from compare_tui.vocabulary import Correction

DEFAULT_RUBRIC = "similarity"
"""A recorded final text is the expected outcome: closeness to it is what decides the step."""


class StepGradingError(CompareTuiError, ValueError):
    """`--steps-by-grade` names grades that are not stored (the message says what to run)."""


def parse_step_grading(spec: str) -> tuple[str, str]:
    """`JUDGE[:RUBRIC]` → (judge, rubric); the rubric defaults to `similarity`."""
    judge, _, rubric = spec.strip().partition(":")
    if not judge.strip():
        raise StepGradingError(
            f"--steps-by-grade {spec!r} names no judge: give JUDGE[:RUBRIC], e.g. gemma3-270m:similarity"
        )
    return judge.strip(), rubric.strip() or DEFAULT_RUBRIC


def load_step_grading(store: Store, runs: Sequence[RunRecord], judge: str, rubric: str, pass_at: int) -> StepGrading:
    """Each run's stored grades by `judge` under `rubric` (the newest such grading of a run).
    Raises `StepGradingError` when none of the runs has any."""
    try:
        wanted = load_scale_rubric(rubric)
    except RubricError:
        raise StepGradingError(
            f"--steps-by-grade {judge}:{rubric}: {rubric!r} is neither `similarity`, `quality` "
            "nor an existing rubric file; name the rubric the answers were graded with"
        ) from None
    grades: dict[str, dict[str, int]] = {}
    judged: list[tuple[JudgingRecord, RunRecord]] = []
    for run in runs:
        judging = next(
            (
                j
                for j in store.list_judgings(kind="scale", run_id=run.id)
                if j.run_id == run.id and j.judge_model == judge and j.mode == wanted.mode and j.rubric == wanted.text
            ),
            None,
        )
        if judging is None:
            continue
        judged.append((judging, run))
        rows = load_run_grades(store, judging).rows
        grades[run.id] = {row.task_id: row.grade for row in rows if row.grade is not None}
    if not any(grades.values()):
        first = runs[0].id[:8] if runs else "RUN"
        raise StepGradingError(
            f"no stored grades by the judge {judge!r} with the {rubric} rubric for this report's runs "
            f"({', '.join(r.id[:8] for r in runs)}): grade them first with `compare-tui grade {first} "
            f"--judge {judge} --rubric {rubric}`, or name a judge and rubric that `compare-tui report` "
            "lists at the end of the text report"
        )
    return _with_calibration(store, StepGrading(judge, rubric, pass_at, grades), judged)


def _with_calibration(
    store: Store, grading: StepGrading, judged: Sequence[tuple[JudgingRecord, RunRecord]]
) -> StepGrading:
    """The judge's calibration on people's labels (`judge.calibration`) beside the steps it
    decides: its agreement sentence and whether the labels verify it, else why not."""
    judging, run = judged[0]  # the report's runs share a workload; the newest grading's rubric
    jc = load_calibration(store, grading.judge, judging.rubric_digest, run.goldset_id, pass_at=grading.pass_at)
    rate = next((jc.rate(r.id) for _, r in judged if jc.rate(r.id) is not None), None)
    verified = rate is not None and rate.status == Correction.CALIBRATED
    counts, c = jc.calibration.counts, jc.calibration
    if verified:
        status = f"verified on {counts.labelled} labels"
    elif rate is not None and rate.status == Correction.NOT_INFORMATIVE:
        status = (
            "the judge does not tell right from wrong answers on your labels: the steps it decided are not verified"
        )
    else:
        why = (
            f"{counts.right} right and {counts.wrong} wrong answers labelled; {c.min_each} of each needed"
            if not c.enough
            else f"the judge's agreement with {counts.labelled} labels is too uncertain"
        )
        status = f"not enough labels to verify the judge: the steps it decided are not verified ({why})"
    return replace(
        grading,
        calibration=f"{calibration_sentence(jc)}; {status}",
        calibration_labels=counts.labelled,
        verified=verified,
    )
