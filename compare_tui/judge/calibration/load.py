"""A judge's calibration read from the store: every answer of a workload that the judge
decided (with one rubric, at one pass-at) and that a person labelled pass or fail, whether in
the review queue or in triage (both store a review), and the corrected rates of the runs it
judged. Nothing is asked of any judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from compare_tui.judge.calibration.figures import (
    MIN_LABELS_EACH,
    Calibration,
    CorrectedRate,
    calibrate,
    correct_rate,
    tally,
)
from compare_tui.judge.calibration.next_labels import Candidate, LabelsNeeded, Proposal, labels_needed, propose
from compare_tui.judge.calibration.paired import CorrectedDifference, corrected_difference
from compare_tui.judge.evaluator.load import DEFAULT_PASS_AT, JUDGE_KINDS, judge_decisions
from compare_tui.judge.prompt.answers import judged_answers
from compare_tui.report.stats import proportion_interval
from compare_tui.store import RunRecord, Store
from compare_tui.store.judgements import JudgingRecord
from compare_tui.vocabulary import Outcome, ReviewVerdict

DRIFT_MIN_LABELS = 4 * MIN_LABELS_EACH
"""Labels needed before agreement is re-measured on the newer half against the earlier half."""


@dataclass(frozen=True, slots=True)
class Label:
    """One labelled answer the judge decided."""

    run_id: str
    task_id: str
    right: bool
    """The person's label: pass (right) or fail (wrong)."""
    judge_passed: bool
    at: str


@dataclass(frozen=True, slots=True)
class JudgeCalibration:
    """A judge × rubric × pass-at on a workload, measured against people's labels."""

    judge: str
    rubric_digest: str
    pass_at: int
    workload: str
    calibration: Calibration
    labels: tuple[Label, ...]
    verdicts: tuple[Candidate, ...]
    """The judge's decision on every answer it decided (the pool `label next` draws from)."""
    rates: Mapping[str, CorrectedRate] = field(default_factory=dict)
    """Run id → the judge's pass rate on it, raw and corrected."""
    drift: str | None = None
    """The caveat when agreement on the newer labels is outside the earlier labels' interval."""

    def next_labels(self, count: int = 10) -> list[Proposal]:
        """The answers to label next (`next_labels.propose`)."""
        return propose(self.verdicts, count)

    def labels_needed(self) -> LabelsNeeded:
        """More labels for every run's corrected rate to reach ±5 points."""
        models = {v.run_id: v.model for v in self.verdicts}
        rates = [(models[r], rate.passed, rate.judged) for r, rate in self.rates.items() if rate.judged]
        return labels_needed(self.calibration.counts, rates)

    def rate(self, run_id: str) -> CorrectedRate | None:
        return self.rates.get(run_id)

    def difference(self, candidate: str, baseline: str) -> CorrectedDifference:
        """Candidate run − baseline run, paired by task, corrected."""
        mine = {v.task_id: v.passed for v in self.verdicts if v.run_id == candidate}
        theirs = {v.task_id: v.passed for v in self.verdicts if v.run_id == baseline}
        return corrected_difference(mine, theirs, self.calibration)


def drift_caveat(labels: Sequence[Label]) -> str | None:
    """Agreement (share of labels the judge got right) on the newer half of the labels, when it
    falls outside the exact 95% interval of agreement on the earlier half; None otherwise or
    below `DRIFT_MIN_LABELS` labels."""
    if len(labels) < DRIFT_MIN_LABELS:
        return None
    ordered = sorted(labels, key=lambda label: label.at)
    half = len(ordered) // 2
    earlier, newer = ordered[:half], ordered[half:]
    agreed_before = sum(1 for label in earlier if label.right == label.judge_passed)
    agreed_now = sum(1 for label in newer if label.right == label.judge_passed)
    interval = proportion_interval(agreed_before, len(earlier))
    assert interval is not None
    now = agreed_now / len(newer)
    if interval.contains(now):
        return None
    return (
        f"Judge drift: the judge agrees with {agreed_now}/{len(newer)} of your newer labels ({now:.0%}), "
        f"outside the 95% interval of its agreement with the earlier {len(earlier)} "
        f"({interval.low:.0%}–{interval.high:.0%}); the judge, its serving or the answers changed: "
        "its calibration mixes two instruments, so label answers judged since and re-check it."
    )


def judgings_of(store: Store, judge: str, rubric_digest: str, workload: str) -> list[tuple[JudgingRecord, RunRecord]]:
    """Every single-answer judging by `judge` with this rubric of a run on `workload`, oldest first,
    one per run."""
    out, seen = [], set()
    for judging in reversed(store.list_judgings()):
        if judging.kind not in JUDGE_KINDS or judging.judge_model != judge or judging.rubric_digest != rubric_digest:
            continue
        run = store.get_run_exact(judging.run_id)
        if run.goldset_id == workload and run.id not in seen:  # one judging per run (the oldest)
            seen.add(run.id)
            out.append((judging, run))
    return out


def workload_judges(store: Store, workload: str) -> list[tuple[str, str]]:
    """(judge, rubric digest) of every single-answer judging of a run on `workload`, newest first."""
    found: list[tuple[str, str]] = []
    for judging in store.list_judgings():
        key = (judging.judge_model, judging.rubric_digest)
        if (
            judging.kind in JUDGE_KINDS
            and key not in found
            and store.get_run_exact(judging.run_id).goldset_id == workload
        ):
            found.append(key)
    return found


def load_calibration(
    store: Store,
    judge: str,
    rubric_digest: str,
    workload: str,
    *,
    pass_at: int = DEFAULT_PASS_AT,
    min_each: int = MIN_LABELS_EACH,
) -> JudgeCalibration:
    """The judge's calibration on `workload` from every stored label, and each judged run's
    raw and corrected pass rate."""
    labels: list[Label] = []
    verdicts: list[Candidate] = []
    per_run: dict[str, tuple[int, int]] = {}
    for judging, run in judgings_of(store, judge, rubric_digest, workload):
        answers = judged_answers(store.attempts_for_run(run.id))
        decisions = judge_decisions(store.judgements_for(judging.id), answers, pass_at)
        reviews = store.reviews_for_run(run.id)
        for task, decision in decisions.items():
            if decision.level not in (Outcome.PASS, Outcome.FAIL):
                continue
            passed = decision.level == Outcome.PASS
            review = reviews.get(task)
            right = (
                None
                if review is None or review.verdict not in (ReviewVerdict.PASS, ReviewVerdict.FAIL)
                else review.verdict == ReviewVerdict.PASS
            )
            verdicts.append(Candidate(run.id, run.model_name, task, passed, right))
            if right is not None and review is not None:
                labels.append(Label(run.id, task, right, passed, review.at))
        judged = [v for v in verdicts if v.run_id == run.id]
        per_run[run.id] = (sum(1 for v in judged if v.passed), len(judged))
    calibration = calibrate(tally([(label.right, label.judge_passed) for label in labels]), min_each)
    rates = {run_id: correct_rate(passed, judged, calibration) for run_id, (passed, judged) in per_run.items()}
    return JudgeCalibration(
        judge,
        rubric_digest,
        pass_at,
        workload,
        calibration,
        tuple(labels),
        tuple(verdicts),
        rates,
        drift_caveat(labels),
    )


@dataclass(frozen=True, slots=True)
class LabelPlan:
    """What the review queue proposes to label for the judges of some runs."""

    proposals: tuple[Proposal, ...]
    """Answers of those runs to label next, every judge's in turn, each answer once."""
    lines: tuple[str, ...]
    """Per judge: its agreement with your labels and the labels needed for ±5 points."""


def label_plan(store: Store, runs: Sequence[RunRecord], count: int = 10, pass_at: int = DEFAULT_PASS_AT) -> LabelPlan:
    """The labels to ask for next among `runs`' answers, for every judge that decided any of
    them on their workload (empty when no judge did)."""
    ids = {run.id for run in runs}
    per_judge: list[list[Proposal]] = []
    lines = []
    for workload in sorted({run.goldset_id for run in runs}):
        for judge, digest in workload_judges(store, workload):
            jc = load_calibration(store, judge, digest, workload, pass_at=pass_at)
            mine = [v for v in jc.verdicts if v.run_id in ids]
            if not mine:
                continue
            per_judge.append(propose(mine, count))
            needed = jc.labels_needed().sentence
            lines.append(f"judge {judge}: {jc.calibration.sentence()} · {needed}")
    chosen: list[Proposal] = []
    seen: set[tuple[str, str]] = set()
    for turn in range(count):
        for group in per_judge:
            proposal = group[turn] if turn < len(group) else None
            if proposal is not None and (proposal.run_id, proposal.task_id) not in seen and len(chosen) < count:
                seen.add((proposal.run_id, proposal.task_id))
                chosen.append(proposal)
    return LabelPlan(tuple(chosen), tuple(lines))
