"""Rubric grades as a report: per run, one row per task, the figures, Δ vs the baseline, the
judge's own usage and every caveat. Built from stored rows each time (`load_grade_report`), so
the text, the JSON and any later surface show the same numbers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compare_tui.judge.calibration.load import JudgeCalibration, load_calibration
from compare_tui.judge.grade.figures import GradeDelta, GradeFigures, grade_delta, grade_figures
from compare_tui.judge.pair.report import JUDGE_IS_NOT_TRUTH
from compare_tui.judge.prompt.answers import StoredAnswer, judged_answers
from compare_tui.judge.run.family import same_family_caveat
from compare_tui.judge.run.usage import JudgeUsage, judge_usage
from compare_tui.report.inputs import ReportInputs
from compare_tui.store import RunRecord, Store, StoreError
from compare_tui.store.judgements import JudgementRecord, JudgingRecord, RubricMode
from compare_tui.vocabulary import Provenance, RunStatus

ISOLATION_CAVEAT = (
    "Each answer was graded alone (never beside another answer), so the judge's position and "
    "incumbent biases cannot enter; its leniency and its own family's style still can."
)
GENERAL_CAVEATS = (JUDGE_IS_NOT_TRUTH, ISOLATION_CAVEAT)
"""The caveats every grade report carries (a compact view may leave them to `grade`)."""


@dataclass(frozen=True, slots=True)
class GradeRow:
    task_id: str
    answer: StoredAnswer | None
    judgement: JudgementRecord | None
    """The stored call for the graded attempt; None when none was made."""
    reason: str = ""
    """Why the task has no grade: the call failed, or there was nothing to grade."""

    @property
    def grade(self) -> int | None:
        return None if self.judgement is None else self.judgement.grade


@dataclass(frozen=True, slots=True)
class RunGrades:
    judging: JudgingRecord
    run: RunRecord
    rows: tuple[GradeRow, ...]
    figures: GradeFigures
    usage: JudgeUsage
    delta: GradeDelta | None
    """Against the baseline run; None for the baseline itself or when there is none."""
    caveats: tuple[str, ...]
    calls: tuple[JudgementRecord, ...] = ()
    """Every stored judge call of this grading (each one charged, superseded ones too)."""


@dataclass(frozen=True, slots=True)
class GradeReport:
    judge: str
    """The judge's catalogue name (every view names it)."""
    mode: RubricMode
    rubric_digest: str
    reference: RunRecord | None
    """similarity: the run whose answers are the reference (None: the expected outcome)."""
    baseline: RunRecord | None
    runs: tuple[RunGrades, ...]
    usage: JudgeUsage
    """The judge's calls over every run graded here, apart from any candidate's figures."""
    caveats: tuple[str, ...]
    calibration: JudgeCalibration | None = None
    """The judge's calibration against people's labels on the runs' workload, with each run's
    judge pass rate raw and corrected (`with_calibration`); None when not read."""


def with_calibration(store: Store, report: GradeReport) -> GradeReport:
    """`report` with its judge's calibration on the graded runs' workload read from the store."""
    workload = report.runs[0].run.goldset_id
    calibration = load_calibration(store, report.judge, report.rubric_digest, workload)
    caveats = report.caveats + ((calibration.drift,) if calibration.drift else ())
    return dataclasses.replace(report, calibration=calibration, caveats=caveats)


def build_run_grades(
    judging: JudgingRecord,
    run: RunRecord,
    answers: Mapping[str, StoredAnswer],
    judgements: Sequence[JudgementRecord],
    not_judged: Mapping[str, str],
) -> RunGrades:
    """Pure: one run's grades. Only the judgement of each task's judged attempt counts (a grade
    of an older attempt of a resumed run stays stored, unused)."""
    by_task = {(j.task_id, j.attempt): j for j in judgements}
    rows = []
    for task in sorted(set(answers) | set(not_judged)):
        answer = answers.get(task)
        judgement = by_task.get((task, answer.attempt)) if answer is not None and answer.text is not None else None
        if judgement is not None and judgement.failed:
            reason = f"judge call failed ({judgement.error_class}): {judgement.error}"
        elif judgement is None:
            reason = not_judged.get(task) or (
                "no answer to grade" if answer is None or answer.text is None else "not graded yet"
            )
        else:
            reason = ""
        rows.append(GradeRow(task, answer, judgement, reason))
    grades = [r.grade for r in rows if r.grade is not None]
    failed = sum(1 for r in rows if r.judgement is not None and r.judgement.failed)
    figures = grade_figures(grades, failed, len(rows) - len(grades) - failed)
    return RunGrades(
        judging,
        run,
        tuple(rows),
        figures,
        judge_usage(judgements, judging.judge_entry.get("cost")),
        None,
        _caveats(judging, run, figures),
        tuple(judgements),
    )


def with_delta(grades: RunGrades, baseline: RunGrades) -> RunGrades:
    """`grades` with its Δ against `baseline` (paired by task)."""
    mine = {r.task_id: r.grade for r in grades.rows if r.grade is not None}
    theirs = {r.task_id: r.grade for r in baseline.rows if r.grade is not None}
    return RunGrades(
        grades.judging,
        grades.run,
        grades.rows,
        grades.figures,
        grades.usage,
        grade_delta(mine, theirs),
        grades.caveats,
        grades.calls,
    )


def _caveats(judging: JudgingRecord, run: RunRecord, figures: GradeFigures) -> tuple[str, ...]:
    out = []
    caveat = same_family_caveat(
        [judging.judge_model, judging.judge_entry.get("model")],
        run.model_name,
        [run.model_name, run.model_entry.get("model")],
        "graded run",
    )
    if caveat:
        out.append(caveat.replace("its verdicts on this pair", "its grades of this run"))
    if figures.failed:
        out.append(
            f"{figures.failed} answer(s) of {run.model_name} have no grade because the judge call failed or "
            "gave no readable grade (kept in the table, left out of the mean); run the same command again "
            "to retry only those."
        )
    if run.status != RunStatus.COMPLETED:
        out.append(f"Run {run.id} is {run.status}, not completed: some tasks may be missing.")
    return tuple(out)


def load_run_grades(store: Store, judging: JudgingRecord, not_judged: Mapping[str, str] | None = None) -> RunGrades:
    """One run's grades from the store (`not_judged`: the plan's reasons for tasks with no call)."""
    run = store.get_run_exact(judging.run_id)
    return build_run_grades(
        judging, run, judged_answers(store.attempts_for_run(run.id)), store.judgements_for(judging.id), not_judged or {}
    )


def build_grade_report(
    runs: Sequence[RunGrades], *, baseline: RunRecord | None, reference: RunRecord | None
) -> GradeReport:
    """Pure: the report over several runs graded by one judge with one rubric."""
    first = runs[0].judging
    base = next((g for g in runs if baseline is not None and g.run.id == baseline.id), None)
    done = tuple(with_delta(g, base) if base is not None and g is not base else g for g in runs)
    usage = judge_usage([call for g in runs for call in g.calls], first.judge_entry.get("cost"))
    caveats = list(GENERAL_CAVEATS)
    if first.mode == RubricMode.SIMILARITY:
        against = f"run {reference.id} ({reference.model_name})" if reference else "each task's expected outcome"
        caveats.append(
            f"Similarity grades measure closeness to {against}, not quality: an answer better than the "
            "reference grades low."
        )
    given = {r.grade for g in runs for r in g.rows if r.grade is not None}
    graded = sum(g.figures.graded for g in runs)
    if len(given) == 1 and graded >= 3:
        caveats.append(
            f"The judge gave every one of the {graded} graded answers the same grade ({given.pop()}): it "
            "tells nothing apart here. Check it against the scorers and people's labels with "
            "`compare-tui evaluator-compare --grader`, or try a larger judge or --structured."
        )
    if baseline is not None and base is None:
        caveats.append(f"The baseline {baseline.model_name} (run {baseline.id}) has no grades here: no Δ is shown.")
    if first.provenance and first.provenance != Provenance.VERIFIED:
        caveats.append(f"Judge provenance: {first.provenance}.")
    for g in done:
        caveats.extend(g.caveats)
    return GradeReport(
        first.judge_model,
        first.mode,
        first.rubric_digest,
        reference,
        baseline if base else None,
        done,
        usage,
        tuple(caveats),
    )


def comparison_baseline(store: Store, runs: Sequence[RunRecord]) -> RunRecord | None:
    """The baseline run of the comparison every run in `runs` belongs to, when it names one
    (its baseline model's run in that comparison), else None."""
    ids = {run.comparison_id for run in runs}
    if len(ids) != 1 or None in ids:
        return None
    try:
        comparison = store.get_comparison(str(next(iter(ids))))
    except StoreError:  # the comparison was deleted; its runs remain
        return None
    if not comparison.baseline:
        return None
    for run_id in comparison.run_ids:
        run = store.get_run_exact(run_id)
        if run.model_name == comparison.baseline:
            return run
    return None


def load_stored_grade_reports(store: Store, runs: Sequence[RunRecord], baseline: RunRecord | None) -> list[GradeReport]:
    """Every stored 1–5 grading of `runs`, one report per judge × rubric (× reference run),
    newest grading first; nothing is asked of any judge. Δ is against `baseline` when it was
    graded with the same judge and rubric."""
    groups: dict[tuple[str, str, str | None], list[JudgingRecord]] = {}
    for run in runs:
        for judging in store.list_judgings(kind="scale", run_id=run.id):
            if judging.run_id == run.id:
                groups.setdefault((judging.judge_model, judging.rubric_digest, judging.other_run_id), []).append(
                    judging
                )
    reports = []
    for (_, _, reference_id), judgings in groups.items():
        order = {run.id: i for i, run in enumerate(runs)}
        graded = [load_run_grades(store, j) for j in sorted(judgings, key=lambda j: order[j.run_id])]
        reference = store.get_run_exact(reference_id) if reference_id else None
        report = build_grade_report(graded, baseline=None if reference_id else baseline, reference=reference)
        reports.append(with_calibration(store, report))
    return reports


def load_report_grades(store: Store, inputs: ReportInputs) -> list[GradeReport]:
    """The stored gradings of a report's runs (`load_stored_grade_reports`), Δ against the
    report's baseline run: what `report` and the TUI's report screen show beside the report."""
    runs = [r.run for r in inputs.runs]
    baseline = next((run for run in runs if run.model_name == inputs.baseline), None)
    return load_stored_grade_reports(store, runs, baseline)
