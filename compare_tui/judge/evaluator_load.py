"""Reading an evaluator comparison from the store: the current evaluator's decisions (scorer
outcomes or a stored grade judging), the candidate judging's, and people's labels (reviews)."""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.errors import CompareTuiError
from compare_tui.judge.answers import judged_answers
from compare_tui.judge.evaluator import (
    DEFAULT_MIN_LABELLED, FAILED_CALL, NOT_JUDGED, Decision, EvaluatorComparison, EvaluatorRow, compare_evaluators,
)
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgementRecord, JudgingRecord

SCORER = "scorer"


class EvaluatorNotFound(CompareTuiError, LookupError):
    """The current evaluator named cannot be found among the stored ones; the message lists them."""


@dataclass(frozen=True, slots=True)
class LoadedComparison:
    run: RunRecord
    candidate: JudgingRecord
    current: JudgingRecord | None
    """None when the current evaluator is the executable scorer."""
    comparison: EvaluatorComparison


def evaluator_name(judging: JudgingRecord | None) -> str:
    if judging is None:
        return "executable scorer"
    return f"judge {judging.judge_model} (rubric {judging.rubric_digest.removeprefix('sha256:')[:12]}, {judging.mode})"


def resolve_current(store: Store, run_id: str, current: str, rubric_digest: str | None) -> JudgingRecord | None:
    """`scorer` → None; else the grade judging on `run_id` named by id (prefix) or by judge model
    (with this rubric digest when several exist)."""
    if current == SCORER:
        return None
    stored = store.list_judgings(kind="grade", run_id=run_id)
    by_id = [j for j in stored if j.id.startswith(current)]
    by_model = [j for j in stored if j.judge_model == current]
    exact = [j for j in by_model if j.rubric_digest == rubric_digest]
    for found in (exact, by_id if len(by_id) == 1 else [], by_model if len(by_model) == 1 else []):
        if found:
            return found[0]
    have = ", ".join(f"{j.id} ({j.judge_model}, rubric {j.rubric_digest[7:19]})" for j in stored) or "none"
    raise EvaluatorNotFound(f"no stored judge {current!r} grading run {run_id} (stored: {have}); use `scorer`, "
                            "or run evaluator-compare with that judge as --candidate first")


def _judge_decisions(judgements: list[JudgementRecord]) -> dict[str, Decision]:
    return {j.task_id: (Decision(None, FAILED_CALL, j.error or "failed") if j.failed
                        else Decision(j.preferred, rationale=j.rationale)) for j in judgements}


def load_comparison(store: Store, candidate_ref: str, current: JudgingRecord | None, *,
                    min_labelled: int = DEFAULT_MIN_LABELLED) -> LoadedComparison:
    """The comparison of a stored candidate grade judging with `current` (None: the scorer)."""
    candidate = store.get_judging(candidate_ref)
    if candidate.kind != "grade":
        raise EvaluatorNotFound(f"judging {candidate.id} is pairwise; evaluator comparison needs a grade judging")
    run = store.get_run_exact(candidate.run_id)
    answers = judged_answers(store.attempts_for_run(run.id))
    cand = _judge_decisions(store.judgements_for(candidate.id))
    if current is None:
        cur = {t: Decision(a.outcome, rationale=a.detail) for t, a in answers.items()}
    else:
        cur = _judge_decisions(store.judgements_for(current.id))
    labels = store.reviews_for_run(run.id)
    rows = []
    for task in sorted(set(answers) | set(cand) | set(cur)):
        review = labels.get(task)
        verdict = review.verdict if review is not None and review.verdict in ("pass", "fail") else None
        rows.append(EvaluatorRow(task, cur.get(task, Decision(None, NOT_JUDGED)), cand.get(task, Decision(None, NOT_JUDGED)),
                                 verdict, review.reviewer if review else "", review.at if review else ""))
    comparison = compare_evaluators(rows, current_name=evaluator_name(current), candidate_name=evaluator_name(candidate),
                                    min_labelled=min_labelled)
    return LoadedComparison(run, candidate, current, comparison)
