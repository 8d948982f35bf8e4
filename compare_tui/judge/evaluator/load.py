"""Reading an evaluator comparison from the store: the current evaluator's decisions (scorer
outcomes or a stored grade judging), the candidate judging's, and people's labels (reviews)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compare_tui.errors import CompareTuiError
from compare_tui.judge.evaluator.compare import (
    DEFAULT_MIN_LABELLED,
    FAILED_CALL,
    NOT_JUDGED,
    Decision,
    EvaluatorComparison,
    EvaluatorRow,
    compare_evaluators,
)
from compare_tui.judge.prompt.answers import StoredAnswer, judged_answers
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgementRecord, JudgingRecord
from compare_tui.vocabulary import Outcome, ReviewVerdict

SCORER = "scorer"
DEFAULT_PASS_AT = 4
"""A 1–5 grader's grade counts as pass from this grade up (4: correct, perhaps with a minor flaw)."""
JUDGE_KINDS = ("grade", "scale")
"""Judgings that decide each answer alone: pass/fail judges and 1–5 graders."""


class EvaluatorNotFound(CompareTuiError, LookupError):
    """The current evaluator named cannot be found among the stored ones; the message lists them."""


@dataclass(frozen=True, slots=True)
class LoadedComparison:
    run: RunRecord
    candidate: JudgingRecord
    current: JudgingRecord | None
    """None when the current evaluator is the executable scorer."""
    comparison: EvaluatorComparison


def evaluator_name(judging: JudgingRecord | None, pass_at: int = DEFAULT_PASS_AT) -> str:
    if judging is None:
        return "executable scorer"
    if judging.kind == "scale":
        return (
            f"grader {judging.judge_model} (1–5, rubric {judging.mode} "
            f"{judging.rubric_digest.removeprefix('sha256:')[:12]}, pass at ≥ {pass_at})"
        )
    return f"judge {judging.judge_model} (rubric {judging.rubric_digest.removeprefix('sha256:')[:12]}, {judging.mode})"


def resolve_current(store: Store, run_id: str, current: str, rubric_digest: str | None) -> JudgingRecord | None:
    """`scorer` → None; else the grade judging on `run_id` named by id (prefix) or by judge model
    (with this rubric digest when several exist)."""
    if current == SCORER:
        return None
    stored = [j for j in store.list_judgings(run_id=run_id) if j.kind in JUDGE_KINDS and j.run_id == run_id]
    by_id = [j for j in stored if j.id.startswith(current)]
    by_model = [j for j in stored if j.judge_model == current]
    exact = [j for j in by_model if j.rubric_digest == rubric_digest]
    for found in (exact, by_id if len(by_id) == 1 else [], by_model if len(by_model) == 1 else []):
        if found:
            return found[0]
    have = ", ".join(f"{j.id} ({j.judge_model}, rubric {j.rubric_digest[7:19]})" for j in stored) or "none"
    raise EvaluatorNotFound(
        f"no stored judge {current!r} grading run {run_id} (stored: {have}); use `scorer`, "
        "or run evaluator-compare with that judge as --candidate first"
    )


def grade_level(grade: int, pass_at: int = DEFAULT_PASS_AT) -> Outcome:
    """A 1–5 grade as the pass/fail decision an evaluator comparison needs."""
    return Outcome.PASS if grade >= pass_at else Outcome.FAIL


def judge_decisions(
    judgements: list[JudgementRecord], answers: Mapping[str, StoredAnswer], pass_at: int
) -> dict[str, Decision]:
    out = {}
    for j in judgements:
        answer = answers.get(j.task_id)
        if j.attempt is not None and answer is not None and answer.attempt != j.attempt:
            continue  # a grade of an attempt that is no longer the task's judged answer
        if j.failed:
            out[j.task_id] = Decision(None, FAILED_CALL, j.error or "failed")
        elif j.grade is not None:
            out[j.task_id] = Decision(grade_level(j.grade, pass_at), rationale=f"grade {j.grade}: {j.rationale}")
        else:
            level = Outcome(j.preferred) if j.preferred is not None else None  # a grade's pass/fail
            out[j.task_id] = Decision(level, rationale=j.rationale)
    return out


def load_comparison(
    store: Store,
    candidate_ref: str,
    current: JudgingRecord | None,
    *,
    min_labelled: int = DEFAULT_MIN_LABELLED,
    pass_at: int = DEFAULT_PASS_AT,
) -> LoadedComparison:
    """The comparison of a stored candidate judging that decides each answer alone (a pass/fail
    judge, or a 1–5 grader read as pass from `pass_at` up) with `current` (None: the scorer)."""
    candidate = store.get_judging(candidate_ref)
    if candidate.kind not in JUDGE_KINDS:
        raise EvaluatorNotFound(f"judging {candidate.id} is pairwise; evaluator comparison needs a grade judging")
    run = store.get_run_exact(candidate.run_id)
    answers = judged_answers(store.attempts_for_run(run.id))
    cand = judge_decisions(store.judgements_for(candidate.id), answers, pass_at)
    if current is None:
        cur = {t: Decision(a.outcome, rationale=a.detail) for t, a in answers.items()}
    else:
        cur = judge_decisions(store.judgements_for(current.id), answers, pass_at)
    labels = store.reviews_for_run(run.id)
    rows = []
    for task in sorted(set(answers) | set(cand) | set(cur)):
        review = labels.get(task)
        verdict = (
            review.verdict
            if review is not None and review.verdict in (ReviewVerdict.PASS, ReviewVerdict.FAIL)
            else None
        )
        rows.append(
            EvaluatorRow(
                task,
                cur.get(task, Decision(None, NOT_JUDGED)),
                cand.get(task, Decision(None, NOT_JUDGED)),
                verdict,
                review.reviewer if review else "",
                review.at if review else "",
            )
        )
    comparison = compare_evaluators(
        rows,
        current_name=evaluator_name(current, pass_at),
        candidate_name=evaluator_name(candidate, pass_at),
        min_labelled=min_labelled,
    )
    return LoadedComparison(run, candidate, current, comparison)
