"""Pairwise figures (pure): both orderings of each pair combined, then counted.

Position-bias control: each pair is judged twice, the answers swapped. A model wins a pair
only when it wins both orderings; two ties are a tie; anything else is *inconsistent* and
counts as a tie. Win rate = (wins + ½ ties) / judged pairs, where ties include inconsistent
pairs, with a 95% score interval that accounts for ties (the trinomial score interval: a
tie carries less uncertainty than a coin flip; without ties it is Wilson's); inconclusive
when the interval contains 50%.

A judge that cannot tell the answers apart (it picks the answer shown first, or second,
every time) makes nearly every pair *inconsistent*: its "win rate" is then 50 % by
construction, with an interval that looks informative. When at least
`NO_VERDICT_INCONSISTENT_SHARE` of the judged pairs are inconsistent, no win rate or interval
is given and the conclusion is `PairConclusion.NO_USABLE_VERDICT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report.stats import Interval, win_rate_interval
from compare_tui.store.judgements import JudgementRecord


class PairResult(StrEnum):
    """One pair's result over both orderings: a side preferred (`candidate`, `baseline`), `tie`,
    `inconsistent` (the orderings disagree; counts as a tie), `failed` (a call gave no verdict)
    or `not judged`. A single call's preferred side is one of the first three."""

    CANDIDATE = "candidate"
    BASELINE = "baseline"
    TIE = "tie"
    INCONSISTENT = "inconsistent"
    FAILED = "failed"
    NOT_JUDGED = "not judged"


CANDIDATE, BASELINE, TIE = PairResult.CANDIDATE, PairResult.BASELINE, PairResult.TIE
INCONSISTENT, FAILED, NOT_JUDGED = PairResult.INCONSISTENT, PairResult.FAILED, PairResult.NOT_JUDGED
RESULTS = tuple(PairResult)


class PairConclusion(StrEnum):
    """What a pairwise judging's win-rate interval says (`PairFigures.conclusion`)."""

    CANDIDATE_BETTER = "candidate better"
    BASELINE_BETTER = "baseline better"
    INCONCLUSIVE = "inconclusive"
    """The 95% interval contains 50%."""
    NONE_JUDGED = "no pair judged"
    NO_USABLE_VERDICT = "the judge gave no usable verdict"
    """Nearly every pair inconsistent (`NO_VERDICT_INCONSISTENT_SHARE`): no win rate is shown."""


NO_VERDICT_INCONSISTENT_SHARE = 0.9
"""The share of judged pairs inconsistent at or above which the judge gave no usable verdict."""
RESULT_WORDS = {
    CANDIDATE: "candidate wins",
    BASELINE: "baseline wins",
    TIE: "tie",
    INCONSISTENT: "inconsistent (tie)",
    FAILED: "judge call failed",
    NOT_JUDGED: "not judged",
}
FIRST_SHOWN = {"ab": BASELINE, "ba": CANDIDATE}
"""Which side each ordering shows first (as answer A)."""


def preferred_side(ordering: str, verdict: str) -> PairResult:
    """The side a positional verdict (`A`/`B`/`TIE`) prefers, read through the ordering."""
    if verdict == "TIE":
        return TIE
    first = FIRST_SHOWN[ordering]
    second = CANDIDATE if first == BASELINE else BASELINE
    return first if verdict == "A" else second


def combine(ab: JudgementRecord | None, ba: JudgementRecord | None) -> PairResult:
    """One pair's result from its two orderings (either may be missing)."""
    if ab is None and ba is None:
        return NOT_JUDGED
    if ab is None or ba is None or ab.failed or ba.failed:
        return FAILED
    if ab.preferred == ba.preferred:
        return PairResult(ab.preferred) if ab.preferred else FAILED
    return INCONSISTENT


@dataclass(frozen=True, slots=True)
class PairFigures:
    """Counts of pair results and the candidate's win rate against the baseline."""

    wins: int
    losses: int
    ties: int
    """Consistent ties only; `inconsistent` pairs are ties too (see `all_ties`)."""
    inconsistent: int
    failed: int
    not_judged: int
    first_position_picks: int
    """Decided calls (not ties) in which the judge chose the answer shown first."""
    decided_calls: int

    @property
    def judged(self) -> int:
        """Pairs with a verdict from both orderings: the win rate's denominator."""
        return self.wins + self.losses + self.ties + self.inconsistent

    @property
    def all_ties(self) -> int:
        return self.ties + self.inconsistent

    @property
    def usable(self) -> bool:
        """False when nearly every judged pair is inconsistent (or none was judged): the judge
        did not discriminate, so there is no win rate to show."""
        return bool(self.judged) and self.inconsistent < NO_VERDICT_INCONSISTENT_SHARE * self.judged

    @property
    def win_rate(self) -> float | None:
        """(wins + ½ ties) / judged; None when no pair was judged or the judge gave no usable verdict."""
        return (self.wins + self.all_ties / 2) / self.judged if self.usable else None

    @property
    def interval(self) -> Interval | None:
        """95% trinomial score interval of the win rate (a tie counts as half a win); None
        where `win_rate` is."""
        return win_rate_interval(self.wins, self.all_ties, self.losses) if self.usable else None

    @property
    def conclusion(self) -> PairConclusion:
        if not self.judged:
            return PairConclusion.NONE_JUDGED
        interval = self.interval
        if interval is None:
            return PairConclusion.NO_USABLE_VERDICT
        if interval.contains(0.5):
            return PairConclusion.INCONCLUSIVE
        return PairConclusion.CANDIDATE_BETTER if interval.low > 0.5 else PairConclusion.BASELINE_BETTER


def pair_results(task_ids: Iterable[str], judgements: Iterable[JudgementRecord]) -> dict[str, PairResult]:
    """Each task's pair result, keyed by task id in the given order."""
    by_key: Mapping[tuple[str, str], JudgementRecord] = {(j.task_id, j.ordering): j for j in judgements}
    return {task: combine(by_key.get((task, "ab")), by_key.get((task, "ba"))) for task in task_ids}


def pair_figures(results: Mapping[str, PairResult], judgements: Iterable[JudgementRecord]) -> PairFigures:
    """Count `results` (from `pair_results`) and the judge's first-position picks."""
    counts = {result: 0 for result in RESULTS}
    for result in results.values():
        counts[result] += 1
    decided = [j for j in judgements if j.verdict in ("A", "B") and j.task_id in results]
    return PairFigures(
        counts[CANDIDATE],
        counts[BASELINE],
        counts[TIE],
        counts[INCONSISTENT],
        counts[FAILED],
        counts[NOT_JUDGED],
        sum(1 for j in decided if j.verdict == "A"),
        len(decided),
    )
