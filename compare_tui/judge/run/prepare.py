"""Everything before the first judge call: the runs, their golden set, the judge's catalogue
entry (pins, key policy and weights verification, exactly as for a candidate), the judging
record, and the list of calls to make. A refused judging sends nothing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from compare_tui.catalogue import ModelEntry
from compare_tui.engine.estimate import SpendEstimate, estimate_requests
from compare_tui.engine.prepare import RunRefusedError, check_model
from compare_tui.engine.request import estimated_message_tokens
from compare_tui.errors import CompareTuiError
from compare_tui.goldset import GoldenSet, GoldenSetError, load_golden_set
from compare_tui.judge.grade.scale import response_format as scale_response_format
from compare_tui.judge.grade.scale import scale_messages
from compare_tui.judge.prompt.answers import StoredAnswer, expected_text, judged_answers, task_text
from compare_tui.judge.prompt.rubric import Rubric
from compare_tui.judge.prompt.templates import (
    GRADE_VERDICTS,
    PAIR_VERDICTS,
    grade_messages,
    pair_messages,
    response_format,
)
from compare_tui.judge.run.call import JudgeSettings
from compare_tui.judge.run.runner import JudgeJob, JudgingPlan, pending_jobs
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgingKind, JudgingRecord, RubricMode


class JudgingRefused(CompareTuiError):
    """The judging cannot start; the message says why and what to do. Nothing was sent."""


def load_run_set(run: RunRecord, set_path: str | Path | None) -> GoldenSet:
    """The golden set a run ran (from `set_path`, else where the run recorded it), digest-checked."""
    if not set_path and not run.goldset_path:
        raise JudgingRefused(f"run {run.id} did not record where its golden set is; pass --set FOLDER")
    path = Path(set_path) if set_path else Path(run.goldset_path)
    if not path.exists():
        raise JudgingRefused(f"the golden set of run {run.id} is not at {path}; pass --set FOLDER")
    try:
        goldset = load_golden_set(path)
    except GoldenSetError as exc:
        raise JudgingRefused(str(exc)) from None
    if run.goldset_digest and goldset.digest != run.goldset_digest:
        raise JudgingRefused(
            f"the golden set at {path} changed since run {run.id} ran it (digest "
            f"{goldset.digest[:19]}… ≠ {run.goldset_digest[:19]}…); the judge needs the same tasks"
        )
    return goldset


def _check_judge(entry: ModelEntry, environ: Mapping[str, str] | None) -> tuple[str, dict[str, str]]:
    try:
        return check_model(entry, environ=environ)
    except RunRefusedError as exc:
        raise JudgingRefused(f"judge {exc}") from None


def _open_judging(
    store: Store,
    kind: JudgingKind,
    run: RunRecord,
    other: RunRecord | None,
    entry: ModelEntry,
    rubric: Rubric,
    set_path: str | Path | None,
    environ: Mapping[str, str] | None,
) -> tuple[GoldenSet, JudgingRecord, dict[str, str]]:
    """The prologue every judging shares: the run's golden set (digest-checked), the judge
    checked as a candidate would be, and the judging's record saved. Returns the set, the
    record and the judge's request headers; raises `JudgingRefused` before anything is saved."""
    goldset = load_run_set(run, set_path)
    provenance, headers = _check_judge(entry, environ)
    judging = store.save_judging(
        JudgingRecord(
            kind=kind,
            run_id=run.id,
            other_run_id=other.id if other else None,
            judge_model=entry.name,
            rubric_digest=rubric.digest,
            mode=rubric.mode,
            reply_form=rubric.reply_form,
            rubric=rubric.text,
            judge_entry=entry.pins(),
            provenance=provenance,
        )
    )
    return goldset, judging, headers


def prepare_pair_judging(
    store: Store,
    baseline: RunRecord,
    candidate: RunRecord,
    entry: ModelEntry,
    rubric: Rubric,
    *,
    set_path: str | Path | None = None,
    settings: JudgeSettings | None = None,
    environ: Mapping[str, str] | None = None,
) -> JudgingPlan:
    """A pairwise judging of `candidate` against `baseline`, two calls (both orderings) per task."""
    if baseline.id == candidate.id:
        raise JudgingRefused(f"the baseline and the candidate are the same run ({baseline.id}); give two runs")
    if baseline.goldset_digest != candidate.goldset_digest:
        raise JudgingRefused(
            f"runs {baseline.id} and {candidate.id} ran different golden sets (or versions): "
            "a pairwise judge needs the same tasks on both sides"
        )
    goldset, judging, headers = _open_judging(store, "pair", baseline, candidate, entry, rubric, set_path, environ)
    left = judged_answers(store.attempts_for_run(baseline.id))
    right = judged_answers(store.attempts_for_run(candidate.id))
    jobs, not_judged = [], {}
    for task in goldset.tasks:
        reason = _missing(left.get(task.id), "baseline") or _missing(right.get(task.id), "candidate")
        if reason:
            not_judged[task.id] = reason
            continue
        request, reference = task_text(task), expected_text(task)
        base, cand = left[task.id].text or "", right[task.id].text or ""  # never None: `_missing`
        jobs.append(JudgeJob(task.id, "ab", pair_messages(rubric, request, reference, base, cand)))
        jobs.append(JudgeJob(task.id, "ba", pair_messages(rubric, request, reference, cand, base)))
    constrain = response_format(PAIR_VERDICTS) if rubric.structured else None
    return JudgingPlan(judging, entry, jobs, settings or JudgeSettings(), not_judged, headers, constrain)


def prepare_grade_judging(
    store: Store,
    run: RunRecord,
    entry: ModelEntry,
    rubric: Rubric,
    *,
    set_path: str | Path | None = None,
    settings: JudgeSettings | None = None,
    environ: Mapping[str, str] | None = None,
) -> JudgingPlan:
    """A judging that grades each stored answer of `run` pass/fail, one call per task."""
    goldset, judging, headers = _open_judging(store, "grade", run, None, entry, rubric, set_path, environ)
    answers = judged_answers(store.attempts_for_run(run.id))
    jobs, not_judged = [], {}
    for task in goldset.tasks:
        reason = _missing(answers.get(task.id), "run")
        if reason:
            not_judged[task.id] = reason
            continue
        messages = grade_messages(rubric, task_text(task), expected_text(task), answers[task.id].text or "")
        jobs.append(JudgeJob(task.id, "single", messages))
    constrain = response_format(GRADE_VERDICTS) if rubric.structured else None
    return JudgingPlan(judging, entry, jobs, settings or JudgeSettings(), not_judged, headers, constrain)


def prepare_scale_grading(
    store: Store,
    run: RunRecord,
    entry: ModelEntry,
    rubric: Rubric,
    *,
    reference: RunRecord | None = None,
    set_path: str | Path | None = None,
    settings: JudgeSettings | None = None,
    environ: Mapping[str, str] | None = None,
) -> JudgingPlan:
    """A grading of each stored answer of `run`, alone, on the 1–5 scale: one call per task.

    A `similarity` rubric grades against `reference`'s answer to the same task (a task the
    reference did not answer is not graded), or against the task's expected outcome when no
    reference run is given. A `quality` rubric ignores `reference`."""
    similarity = rubric.mode == RubricMode.SIMILARITY
    if similarity and reference is not None:
        if reference.id == run.id:
            raise JudgingRefused(
                f"run {run.id} is its own reference: a similarity grade of the reference run "
                "says nothing; grade the other runs"
            )
        if reference.goldset_digest != run.goldset_digest:
            raise JudgingRefused(
                f"runs {run.id} and {reference.id} ran different golden sets (or versions): a "
                "similarity grade needs the reference's answer to the same task"
            )
    against = reference if similarity else None
    goldset, judging, headers = _open_judging(store, "scale", run, against, entry, rubric, set_path, environ)
    answers = judged_answers(store.attempts_for_run(run.id))
    references = judged_answers(store.attempts_for_run(against.id)) if against else {}
    jobs, not_judged = [], {}
    for task in goldset.tasks:
        reason = _missing(answers.get(task.id), "run")
        if reason is None and against is not None:
            reason = _missing(references.get(task.id), "reference run")
        if reason:
            not_judged[task.id] = reason
            continue
        answer = answers[task.id]
        ref = None
        if similarity:
            ref = references[task.id].text if against else expected_text(task)
        messages = scale_messages(rubric, task_text(task), answer.text or "", ref)
        jobs.append(JudgeJob(task.id, "single", messages, attempt=answer.attempt))
    constrain = scale_response_format() if rubric.structured else None
    return JudgingPlan(judging, entry, jobs, settings or JudgeSettings(), not_judged, headers, constrain)


def judging_estimate(store: Store, plan: JudgingPlan) -> SpendEstimate:
    """The spend of the judge calls `plan` would send now (those with no stored verdict), an
    upper bound as a run's: each prompt at 4 characters a token, each reply at `max_tokens`; on
    an hourly basis each call's own time, as the audit ledger charges a request of no run."""
    todo = pending_jobs(store, plan)
    prompt = sum(estimated_message_tokens(job.messages) for job in todo)
    return estimate_requests(plan.entry.cost, len(todo), prompt, plan.settings.max_tokens, 1)


def _missing(answer: StoredAnswer | None, side: str) -> str | None:
    if answer is None:
        return f"the {side} has no attempt at this task"
    if answer.text is None:
        return f"the {side} has no answer (every attempt errored)"
    return None
