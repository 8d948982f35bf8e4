"""Evaluator comparison (pure): a candidate judge against the current evaluator (the executable
scorer's stored outcome, or a stored judge) and against people's labels.

Agreement with the current evaluator only maps where the two differ: it is not evidence that
either is right. Only correctness on rows a person labelled can earn **Looks safe**, and only
when there are enough of them, the candidate is at least as correct as the current evaluator,
no candidate call failed, and no changed decision is left unread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report.stats import Interval, proportion_interval
from compare_tui.vocabulary import Outcome

DEFAULT_MIN_LABELLED = 20
"""Labelled rows needed before the badge rates correctness (below it: Not enough data)."""


class BadgeName(StrEnum):
    """The evaluator comparison's badge (`thresholds_text` says what earns each)."""

    LOOKS_SAFE = "Looks safe"
    REVIEW_FIRST = "Review first"
    NOT_ENOUGH_DATA = "Not enough data"


LOOKS_SAFE, REVIEW_FIRST, NOT_ENOUGH_DATA = BadgeName.LOOKS_SAFE, BadgeName.REVIEW_FIRST, BadgeName.NOT_ENOUGH_DATA


class DecisionStatus(StrEnum):
    """Whether an evaluator decided an answer: `decided`, `failed call` (the judge was asked and
    gave no verdict) or `not judged`."""

    DECIDED = "decided"
    FAILED_CALL = "failed call"
    NOT_JUDGED = "not judged"


DECIDED, FAILED_CALL, NOT_JUDGED = DecisionStatus.DECIDED, DecisionStatus.FAILED_CALL, DecisionStatus.NOT_JUDGED


@dataclass(frozen=True, slots=True)
class Decision:
    """One evaluator's decision on one answer: a level (pass / fail / review / error), or why none."""

    level: Outcome | None
    status: DecisionStatus = DecisionStatus.DECIDED
    """`decided`, `failed call` (the judge was asked and gave no verdict) or `not judged`."""
    rationale: str = ""


@dataclass(frozen=True, slots=True)
class EvaluatorRow:
    task_id: str
    current: Decision
    candidate: Decision
    label: str | None = None
    """A person's label (pass / fail), None when unlabelled or skipped."""
    label_by: str = ""
    label_at: str = ""

    @property
    def comparable(self) -> bool:
        return self.current.level is not None and self.candidate.level is not None

    @property
    def changed(self) -> bool:
        """The decision changed: a different level (a rewording within a level is not a change)."""
        return self.comparable and self.current.level != self.candidate.level


@dataclass(frozen=True, slots=True)
class Badge:
    name: BadgeName
    reasons: tuple[str, ...]
    thresholds: str


@dataclass(frozen=True, slots=True)
class EvaluatorComparison:
    current_name: str
    candidate_name: str
    rows: tuple[EvaluatorRow, ...]
    agreed: int
    comparable: int
    moves: tuple[tuple[Outcome, Outcome | DecisionStatus, int], ...]
    """(current level, candidate level or `failed call`, rows), most common first; changes only."""
    matrix: dict[tuple[Outcome, Outcome | DecisionStatus], int]
    """Every (current level, candidate level or `failed call`) pair with its rows, agreements included."""
    labelled: int
    current_correct: int
    candidate_correct: int
    failed_calls: int
    unlabelled_changes: int
    min_labelled: int
    badge: Badge
    constant: str | None = None
    """The one decision the candidate gave every answer, when the current evaluator or people's
    labels tell answers apart (e.g. a grader that always answers 5): it discriminates nothing."""

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.comparable if self.comparable else None

    @property
    def enough_labels(self) -> bool:
        return self.labelled >= self.min_labelled

    def correctness_interval(self, which: str) -> Interval | None:
        """exact (Clopper–Pearson) 95% interval of `current` or `candidate` correctness on labelled rows."""
        correct = self.current_correct if which == "current" else self.candidate_correct
        return proportion_interval(correct, self.labelled) if self.labelled else None

    def agreement_map(self) -> str:
        """One mark per row in task order: `=` same level, `≠` changed, `!` failed candidate call,
        `·` nothing to compare (no answer, or an evaluator gave no decision)."""
        return "".join(
            "!" if r.candidate.status == FAILED_CALL else "≠" if r.changed else "=" if r.comparable else "·"
            for r in self.rows
        )


def thresholds_text(min_labelled: int) -> str:
    return (
        f"Looks safe needs at least {min_labelled} rows labelled by a person, the candidate correct on at least "
        "as many of them as the current evaluator, no failed candidate call, and every changed decision "
        f"labelled; fewer than {min_labelled} labelled rows is Not enough data. Agreement alone never counts. "
        "A candidate that gives every answer the same decision, where the current evaluator or people tell "
        "answers apart, is Review first."
    )


def compare_evaluators(
    rows: Sequence[EvaluatorRow], *, current_name: str, candidate_name: str, min_labelled: int = DEFAULT_MIN_LABELLED
) -> EvaluatorComparison:
    """The comparison of two evaluators over the same answers (rows in task order)."""
    comparable = [r for r in rows if r.comparable]
    agreed = sum(1 for r in comparable if not r.changed)
    matrix = Counter(
        (r.current.level, r.candidate.level or FAILED_CALL)
        for r in rows
        if r.current.level is not None and (r.comparable or r.candidate.status == FAILED_CALL)
    )
    moves = {pair: n for pair, n in matrix.items() if pair[0] != pair[1]}
    labelled = [r for r in rows if r.label in ("pass", "fail")]
    current_correct = sum(1 for r in labelled if r.current.level == r.label)
    candidate_correct = sum(1 for r in labelled if r.candidate.level == r.label)
    failed = sum(1 for r in rows if r.candidate.status == FAILED_CALL)
    unlabelled_changes = sum(1 for r in rows if r.changed and r.label is None)
    constant = constant_decision(rows)
    badge = _badge(
        len(labelled), current_correct, candidate_correct, failed, unlabelled_changes, min_labelled, constant
    )
    ordered = tuple((a, b, n) for (a, b), n in sorted(moves.items(), key=lambda item: (-item[1], item[0])))
    return EvaluatorComparison(
        current_name,
        candidate_name,
        tuple(rows),
        agreed,
        len(comparable),
        ordered,
        dict(matrix),
        len(labelled),
        current_correct,
        candidate_correct,
        failed,
        unlabelled_changes,
        min_labelled,
        badge,
        constant,
    )


def constant_decision(rows: Sequence[EvaluatorRow]) -> str | None:
    """The candidate's only decision when it gave one level to every answer it decided while the
    current evaluator's pass/fail decisions or people's labels differ between answers; else None."""
    levels = {r.candidate.level for r in rows if r.candidate.level is not None}
    truth = {r.current.level for r in rows if r.current.level in ("pass", "fail")} | {r.label for r in rows if r.label}
    return next(iter(levels)) if len(levels) == 1 and len(truth) > 1 else None


def _badge(
    labelled: int,
    current_correct: int,
    candidate_correct: int,
    failed: int,
    unlabelled_changes: int,
    min_labelled: int,
    constant: str | None = None,
) -> Badge:
    thresholds = thresholds_text(min_labelled)
    problems = []
    if constant is not None:
        # A defect whatever the labels say: no amount of labelling makes a constant evaluator useful.
        problems.append(
            f"the candidate decided {constant} for every answer, where the current evaluator or people "
            "tell answers apart: it discriminates nothing (e.g. a grader that always answers 5)"
        )
    if failed:
        problems.append(f"{failed} candidate call(s) failed; they stay in the table")
    if unlabelled_changes:
        problems.append(f"{unlabelled_changes} changed decision(s) no person has labelled yet: read them first")
    if labelled < min_labelled and constant is None:
        return Badge(NOT_ENOUGH_DATA, (f"{labelled} labelled row(s); {min_labelled} needed", *problems), thresholds)
    if labelled < min_labelled:
        problems.append(f"{labelled} labelled row(s); {min_labelled} needed")
    elif candidate_correct < current_correct:
        problems.append(
            f"the candidate is less correct on labelled rows ({candidate_correct} vs {current_correct} of {labelled})"
        )
    if problems:
        return Badge(REVIEW_FIRST, tuple(problems), thresholds)
    return Badge(
        LOOKS_SAFE,
        (
            f"candidate correct on {candidate_correct} of {labelled} labelled rows "
            f"(current: {current_correct}); no failed calls; every change labelled",
        ),
        thresholds,
    )
