"""Two candidates judged by the same calibrated judge, compared paired by task (pure).

A judge that errs alike on both candidates shrinks every difference of pass rates by its
Youden index `J = se + sp − 1`: the judge-rate difference is `J ×` the true one. So the true
difference is the paired judge-rate difference divided by `J`; its 95 % interval divides the
paired (Tango, reconciled with exact McNemar) interval at 97.5 % by the range of `J` over the
exact 98.75 % intervals of sensitivity and specificity (Bonferroni over the three). The sign
is the judge's: calibration changes by how much, never which is ahead.
"""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.judge.calibration.figures import Calibration
from compare_tui.report.stats import Interval, paired_interval, proportion_interval

DIFF_LEVEL = 0.975
YOUDEN_PART_LEVEL = 0.9875


@dataclass(frozen=True, slots=True)
class CorrectedDifference:
    """Candidate − baseline, of pass rates decided by one judge, paired by task."""

    tasks: int
    only_candidate: int
    """Tasks the judge passed for the candidate only."""
    only_baseline: int
    raw: float | None
    """Judge-rate difference (candidate − baseline) over the paired tasks."""
    corrected: float | None = None
    interval: Interval | None = None
    """95% interval of the corrected difference; None with `reason`."""
    reason: str = ""

    @property
    def conclusion(self) -> str:
        if self.interval is None:
            return "no corrected comparison"
        if self.interval.low > 0:
            return "candidate higher"
        if self.interval.high < 0:
            return "candidate lower"
        return "within noise"


def corrected_difference(
    candidate: dict[str, bool], baseline: dict[str, bool], calibration: Calibration
) -> CorrectedDifference:
    """The corrected difference over the tasks both have a judge verdict on (task → passed)."""
    tasks = sorted(set(candidate) & set(baseline))
    only_c = sum(1 for t in tasks if candidate[t] and not baseline[t])
    only_b = sum(1 for t in tasks if baseline[t] and not candidate[t])
    raw = (only_c - only_b) / len(tasks) if tasks else None
    base = (len(tasks), only_c, only_b, raw)
    if not tasks:
        return CorrectedDifference(*base, reason="no task judged for both")
    if not calibration.enough:
        c = calibration.counts
        return CorrectedDifference(
            *base,
            reason=f"not enough labels to correct ({c.right} right and {c.wrong} wrong answers labelled; "
            f"{calibration.min_each} of each needed): compare the raw judge rates, not verified",
        )
    c = calibration.counts
    se = proportion_interval(c.right_passed, c.right, YOUDEN_PART_LEVEL)
    sp = proportion_interval(c.wrong_failed, c.wrong, YOUDEN_PART_LEVEL)
    assert se is not None and sp is not None and calibration.sensitivity is not None
    assert calibration.specificity is not None
    j_low, j_high = se.low + sp.low - 1, se.high + sp.high - 1
    if j_low <= 0:
        return CorrectedDifference(
            *base,
            reason="the judge's agreement with your labels cannot rule out a judge that tells nothing apart: "
            "no corrected comparison",
        )
    d = paired_interval(only_c, only_b, len(tasks) - only_c - only_b, DIFF_LEVEL)
    assert d is not None and raw is not None
    ends = [d.low / j_low, d.low / j_high, d.high / j_low, d.high / j_high]
    youden = calibration.sensitivity + calibration.specificity - 1
    point = max(-1.0, min(1.0, raw / youden))
    low, high = max(-1.0, min(ends)), min(1.0, max(ends))
    return CorrectedDifference(*base, point, Interval(min(low, point), max(high, point)))
