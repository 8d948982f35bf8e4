"""A pairwise judging as a report: one row per task, the figures, the judge's own usage and
every caveat. Built from stored rows each time, so the CLI, JSON and the TUI always agree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compare_tui.judge.pair.figures import (
    BASELINE,
    CANDIDATE,
    FAILED,
    INCONSISTENT,
    NOT_JUDGED,
    TIE,
    PairFigures,
    PairResult,
    pair_figures,
    pair_results,
)
from compare_tui.judge.prompt.answers import StoredAnswer, judged_answers
from compare_tui.judge.run.family import same_family_caveat
from compare_tui.judge.run.usage import JudgeUsage, judge_usage
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgementRecord, JudgingRecord, PairLabelRecord
from compare_tui.vocabulary import Outcome, Provenance, RunStatus

JUDGE_IS_NOT_TRUTH = (
    "A judge's verdict is one model's opinion under your rubric, not ground truth: check it "
    "against people's labels (the triage screen, `compare-tui evaluator-compare`) before relying on it."
)


@dataclass(frozen=True, slots=True)
class PairRow:
    task_id: str
    result: PairResult
    baseline: StoredAnswer | None
    candidate: StoredAnswer | None
    ab: JudgementRecord | None
    """The call that showed the baseline's answer first."""
    ba: JudgementRecord | None
    label: PairLabelRecord | None
    """The latest person's label on this pair, if any."""
    reason: str = ""
    """Why the pair was not judged, or what failed."""


@dataclass(frozen=True, slots=True)
class PairReport:
    judging: JudgingRecord
    baseline: RunRecord
    candidate: RunRecord
    rows: tuple[PairRow, ...]
    figures: PairFigures
    usage: JudgeUsage
    caveats: tuple[str, ...]
    labelled: int
    """Pairs with a person's label (not skip) and a judge result to compare it with."""
    agreed: int
    """Of those, pairs where the judge's result is the person's label (inconsistent = tie)."""


def scorer_preference(baseline_outcome: str | None, candidate_outcome: str | None) -> PairResult | None:
    """The side the executable scorers favour: the one that passed when the other failed."""
    if {baseline_outcome, candidate_outcome} == {Outcome.PASS, Outcome.FAIL}:
        return BASELINE if baseline_outcome == Outcome.PASS else CANDIDATE
    return None


def judge_side(result: PairResult) -> PairResult | None:
    """The judge's result as a side a person can label (`inconsistent` reads as a tie)."""
    return TIE if result == INCONSISTENT else result if result in (BASELINE, CANDIDATE, TIE) else None


def load_pair_report(store: Store, judging_ref: str) -> PairReport:
    """The report of a stored pairwise judging (id, unique prefix or `latest`)."""
    judging = store.get_judging(judging_ref)
    if judging.kind != "pair" or judging.other_run_id is None:
        raise ValueError(f"judging {judging.id} grades single answers; it has no pairwise report")
    baseline, candidate = store.get_run_exact(judging.run_id), store.get_run_exact(judging.other_run_id)
    return build_pair_report(
        judging,
        baseline,
        candidate,
        judged_answers(store.attempts_for_run(baseline.id)),
        judged_answers(store.attempts_for_run(candidate.id)),
        store.judgements_for(judging.id),
        store.pair_labels(baseline.id, candidate.id),
    )


def build_pair_report(
    judging: JudgingRecord,
    baseline: RunRecord,
    candidate: RunRecord,
    left: Mapping[str, StoredAnswer],
    right: Mapping[str, StoredAnswer],
    judgements: list[JudgementRecord],
    labels: Mapping[str, PairLabelRecord],
) -> PairReport:
    """Pure: the report from already loaded rows."""
    tasks = sorted(set(left) | set(right) | {j.task_id for j in judgements})
    results = pair_results(tasks, judgements)
    by_key = {(j.task_id, j.ordering): j for j in judgements}
    rows, labelled, agreed = [], 0, 0
    for task in tasks:
        ab, ba = by_key.get((task, "ab")), by_key.get((task, "ba"))
        label = labels.get(task)
        rows.append(
            PairRow(
                task,
                results[task],
                left.get(task),
                right.get(task),
                ab,
                ba,
                label,
                _reason(results[task], left.get(task), right.get(task), ab, ba),
            )
        )
        side = judge_side(results[task])
        if label is not None and label.label != "skip" and side is not None:
            labelled += 1
            agreed += side == label.label
    figures = pair_figures(results, judgements)
    usage = judge_usage(judgements, judging.judge_entry.get("cost"))
    caveats = _caveats(judging, baseline, candidate, figures)
    return PairReport(judging, baseline, candidate, tuple(rows), figures, usage, caveats, labelled, agreed)


def _reason(
    result: PairResult,
    left: StoredAnswer | None,
    right: StoredAnswer | None,
    ab: JudgementRecord | None,
    ba: JudgementRecord | None,
) -> str:
    if result == FAILED:
        return (
            "; ".join(f"{j.ordering}: {j.error}" for j in (ab, ba) if j is not None and j.failed)
            or "one ordering has not been judged yet"
        )
    if result != NOT_JUDGED:
        return ""
    for side, answer in (("baseline", left), ("candidate", right)):
        if answer is None:
            return f"the {side} has no attempt at this task"
        if answer.text is None:
            return f"the {side} has no answer (every attempt errored)"
    return "not judged yet"


def _caveats(
    judging: JudgingRecord, baseline: RunRecord, candidate: RunRecord, figures: PairFigures
) -> tuple[str, ...]:
    out = [JUDGE_IS_NOT_TRUTH]
    judge_names = [judging.judge_model, judging.judge_entry.get("model")]
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        caveat = same_family_caveat(judge_names, run.model_name, [run.model_name, run.model_entry.get("model")], role)
        if caveat:
            out.append(caveat)
    if figures.inconsistent:
        out.append(
            f"The judge changed its verdict when the answers were swapped in {figures.inconsistent} of "
            f"{figures.judged} judged pairs (position bias); those pairs count as ties."
        )
    if figures.decided_calls:
        share = figures.first_position_picks / figures.decided_calls
        if share >= 0.75 or share <= 0.25:
            side = "first" if share >= 0.5 else "second"
            out.append(
                f"When it picked a winner, the judge picked the answer shown {side} in {max(share, 1 - share):.0%} "
                f"of calls ({figures.decided_calls} calls): a strong position preference."
            )
    if figures.failed:
        out.append(
            f"{figures.failed} pair(s) are left out of the win rate because a judge call failed (they stay in "
            "the table); run the same command again to retry only those calls."
        )
    if figures.not_judged:
        out.append(f"{figures.not_judged} task(s) were not judged because a side had no answer.")
    if judging.provenance and judging.provenance != Provenance.VERIFIED:
        out.append(f"Judge provenance: {judging.provenance}.")
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        if run.status != RunStatus.COMPLETED:
            out.append(f"The {role} run {run.id} is {run.status}, not completed: some tasks may be missing.")
    return tuple(out)
