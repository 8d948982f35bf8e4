"""A judge calibrated against people's labels (pure): its sensitivity and specificity, and a
judge-decided pass rate corrected for the errors they measure.

- **Calibration.** Of the answers a person labelled *right* (review verdict `pass`), the share
  the judge passed is its sensitivity; of those labelled *wrong* (`fail`), the share it failed
  is its specificity. Each with its exact (Clopper–Pearson) 95 % interval and its count.
- **Corrected rate** (Rogan–Gladen): a judge with sensitivity `se` and specificity `sp` passes
  `q = p·se + (1 − p)·(1 − sp)` of answers whose true pass rate is `p`, so
  `p = (q + sp − 1) / (se + sp − 1)`, bounded to [0, 1].
- **Its interval** carries the run's sampling (the judge's pass rate `q` over the judged
  answers) and the calibration's (`se`, `sp` from the labels). Each of the three gets its exact
  95 % interval; moving that one alone to each end of it (the other two at their estimates)
  moves the correction down by `dᵢ⁻` and up by `dᵢ⁺`, and the interval is the correction
  − √Σ dᵢ⁻² to + √Σ dᵢ⁺² (the method of variance estimates recovery, with exact effects rather
  than a linear approximation), bounded to [0, 1]. Where one of the three dominates, it is that
  one's exact interval carried through the correction; where they mix, they add as variances.
  Chosen by simulated coverage (`bench/bench_coverage.py`, bench/RESULTS.md "Human-calibrated
  pass rate"): at least 0.937 on every cell of the grid, a third narrower than the correction's
  range over the box of the three intervals (0.985 at the least); a delta-method Wald interval
  covers as much (0.935) and is a little narrower, but its components collapse to zero width
  at 0 or all of a count, where these exact ones do not.
- **Below the threshold** (`MIN_LABELS_EACH` labelled right answers and as many wrong ones) no
  corrected figure is given: the raw judge rate is shown, not verified. Nor where the lower ends
  of the sensitivity's and specificity's intervals add up to 1 or less: the judge does not tell
  right from wrong answers, or the labels are too few to show that it does, and the correction
  would divide by a number that may be zero.

What it assumes, said wherever the figure is: the labelled answers are a fair sample of the
workload's answers (`label next` keeps them so), and the judge errs alike on every candidate.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from compare_tui.report.stats import Interval, proportion_interval
from compare_tui.vocabulary import Correction

MIN_LABELS_EACH = 10
"""Labelled right answers, and as many labelled wrong ones, needed before a rate is corrected."""
LEVEL = 0.95
PART_LEVEL = 0.95
"""Each of the three exact intervals (run's pass rate, sensitivity, specificity) of the box."""
METHOD = (
    "Rogan–Gladen correction; 95% interval: the exact 95% intervals of the run's judge pass rate, "
    "the judge's sensitivity and its specificity, each carried through the correction, combined "
    "as variances (MOVER)"
)
ASSUMPTION = "assumes the labelled answers are a fair sample and the judge errs alike on every candidate"
NOT_ENOUGH = "not enough labels to correct: raw judge rate shown, not verified"


@dataclass(frozen=True, slots=True)
class LabelCounts:
    """People's labels against the judge's verdicts on the same answers."""

    right_passed: int = 0
    """Labelled right (pass), judge passed: agreements on right answers."""
    right_failed: int = 0
    wrong_failed: int = 0
    """Labelled wrong (fail), judge failed: agreements on wrong answers."""
    wrong_passed: int = 0

    @property
    def right(self) -> int:
        return self.right_passed + self.right_failed

    @property
    def wrong(self) -> int:
        return self.wrong_failed + self.wrong_passed

    @property
    def labelled(self) -> int:
        return self.right + self.wrong

    @property
    def agreed(self) -> int:
        return self.right_passed + self.wrong_failed

    def __add__(self, other: LabelCounts) -> LabelCounts:
        return LabelCounts(
            self.right_passed + other.right_passed,
            self.right_failed + other.right_failed,
            self.wrong_failed + other.wrong_failed,
            self.wrong_passed + other.wrong_passed,
        )


def tally(pairs: list[tuple[bool, bool]]) -> LabelCounts:
    """Counts from (labelled right, judge passed) pairs."""
    return LabelCounts(
        sum(1 for right, passed in pairs if right and passed),
        sum(1 for right, passed in pairs if right and not passed),
        sum(1 for right, passed in pairs if not right and not passed),
        sum(1 for right, passed in pairs if not right and passed),
    )


@dataclass(frozen=True, slots=True)
class Calibration:
    """A judge (× rubric × pass-at) measured against people's labels."""

    counts: LabelCounts
    sensitivity: float | None
    """Share of labelled right answers the judge passed; None with none labelled right."""
    sensitivity_interval: Interval | None
    """Exact 95% interval."""
    specificity: float | None
    specificity_interval: Interval | None
    min_each: int = MIN_LABELS_EACH

    @property
    def enough(self) -> bool:
        """At least `min_each` labelled right and as many labelled wrong answers."""
        return self.counts.right >= self.min_each and self.counts.wrong >= self.min_each

    @property
    def informative(self) -> bool | None:
        """Whether the measured `se + sp` exceeds 1 (the judge tells right from wrong better than
        a coin); None while either is unmeasured."""
        if self.sensitivity is None or self.specificity is None:
            return None
        return self.sensitivity + self.specificity > 1

    def sentence(self) -> str:
        """`judge agrees with your labels: passes 46/50 right answers, fails 38/45 wrong ones`."""
        c = self.counts
        if not c.labelled:
            return "no answer judged here is labelled by a person yet"
        passes = f"passes {c.right_passed}/{c.right} right answers" if c.right else "no right answer labelled yet"
        fails = f"fails {c.wrong_failed}/{c.wrong} wrong ones" if c.wrong else "no wrong answer labelled yet"
        return f"judge agrees with your labels: {passes}, {fails}"


def calibrate(counts: LabelCounts, min_each: int = MIN_LABELS_EACH) -> Calibration:
    """Sensitivity and specificity with their exact 95% intervals."""
    se = counts.right_passed / counts.right if counts.right else None
    sp = counts.wrong_failed / counts.wrong if counts.wrong else None
    return Calibration(
        counts,
        se,
        exact_interval(counts.right_passed, counts.right) if counts.right else None,
        sp,
        exact_interval(counts.wrong_failed, counts.wrong) if counts.wrong else None,
        min_each,
    )


def rogan_gladen(q: float, se: float, sp: float) -> float:
    """The true pass rate under a judge with these errors that passes `q`, bounded to [0, 1].
    Raises ValueError when `se + sp ≤ 1` (the judge cannot be inverted)."""
    youden = se + sp - 1
    if youden <= 0:
        raise ValueError(f"sensitivity + specificity must exceed 1, got {se} + {sp}")
    return min(1.0, max(0.0, (q + sp - 1) / youden))


@dataclass(frozen=True, slots=True)
class CorrectedRate:
    """A judge-decided pass rate, raw and (when it can be) corrected."""

    passed: int
    judged: int
    raw: float | None
    raw_interval: Interval | None
    """Exact 95% interval of the raw judge rate (the judge's own sampling only)."""
    status: Correction
    corrected: float | None = None
    interval: Interval | None = None
    """95% interval of the corrected rate (run sampling and calibration together)."""
    labels: int = 0
    reason: str = ""
    """Why there is no corrected figure (empty when there is one)."""

    @property
    def calibrated(self) -> bool:
        return self.status == Correction.CALIBRATED


@functools.lru_cache(maxsize=65536)
def exact_interval(successes: int, trials: int, level: float = PART_LEVEL) -> Interval:
    """`stats.proportion_interval`, remembered by its counts (pure; `label next` and the
    coverage benchmark ask for the same counts many times). `trials` must be positive."""
    interval = proportion_interval(successes, trials, level)
    assert interval is not None
    return interval


def _box(passed: int, judged: int, counts: LabelCounts) -> tuple[Interval, Interval, Interval]:
    return (
        exact_interval(passed, judged),
        exact_interval(counts.right_passed, counts.right),
        exact_interval(counts.wrong_failed, counts.wrong),
    )


def _raw_rg(q: float, se: float, sp: float) -> float:
    return (q + sp - 1) / (se + sp - 1)


def corrected_interval(passed: int, judged: int, counts: LabelCounts) -> Interval | None:
    """The corrected rate's 95% interval (see the module's docstring), or None when the lower
    ends of the sensitivity's and specificity's exact intervals add up to 1 or less."""
    q_i, se_i, sp_i = _box(passed, judged, counts)
    if se_i.low + sp_i.low <= 1:
        return None
    q, se, sp = passed / judged, counts.right_passed / counts.right, counts.wrong_failed / counts.wrong
    point = _raw_rg(q, se, sp)
    moved = (
        (_raw_rg(q_i.low, se, sp), _raw_rg(q_i.high, se, sp)),
        (_raw_rg(q, se_i.low, sp), _raw_rg(q, se_i.high, sp)),
        (_raw_rg(q, se, sp_i.low), _raw_rg(q, se, sp_i.high)),
    )
    down = math.sqrt(sum(max(0.0, point - min(ends)) ** 2 for ends in moved))
    up = math.sqrt(sum(max(0.0, max(ends) - point) ** 2 for ends in moved))
    return Interval(min(1.0, max(0.0, point - down)), min(1.0, max(0.0, point + up)))


def box_interval(passed: int, judged: int, counts: LabelCounts) -> Interval | None:
    """The correction's range over the box of the three exact intervals (reached at a corner:
    the correction is monotone in each): the conservative comparison `bench_coverage` shows."""
    q, se, sp = _box(passed, judged, counts)
    if se.low + sp.low <= 1:
        return None
    corners = [
        rogan_gladen(a, b, c) for a, b, c in itertools.product((q.low, q.high), (se.low, se.high), (sp.low, sp.high))
    ]
    return Interval(min(corners), max(corners))


def correct_rate(passed: int, judged: int, calibration: Calibration) -> CorrectedRate:
    """The raw judge pass rate `passed / judged` and, when the labels allow, the corrected one."""
    counts = calibration.counts
    if judged <= 0:
        return CorrectedRate(
            0, 0, None, None, Correction.NOTHING_JUDGED, labels=counts.labelled, reason="nothing judged"
        )
    raw, raw_interval = passed / judged, exact_interval(passed, judged)
    base = (passed, judged, raw, raw_interval)
    if not calibration.enough:
        reason = (
            f"{NOT_ENOUGH} ({counts.right} right and {counts.wrong} wrong answers labelled; "
            f"{calibration.min_each} of each needed)"
        )
        return CorrectedRate(*base, Correction.TOO_FEW_LABELS, labels=counts.labelled, reason=reason)
    assert calibration.sensitivity is not None and calibration.specificity is not None
    if not calibration.informative:
        reason = (
            "the judge does not tell right from wrong answers on your labels (sensitivity + specificity "
            "≤ 1): raw judge rate shown, not verified"
        )
        return CorrectedRate(*base, Correction.NOT_INFORMATIVE, labels=counts.labelled, reason=reason)
    interval = corrected_interval(passed, judged, counts)
    if interval is None:
        reason = (
            f"{NOT_ENOUGH} (the judge's agreement with {counts.labelled} labels is too uncertain to "
            "rule out a judge that tells nothing apart)"
        )
        return CorrectedRate(*base, Correction.TOO_FEW_LABELS, labels=counts.labelled, reason=reason)
    corrected = rogan_gladen(raw, calibration.sensitivity, calibration.specificity)
    interval = Interval(min(interval.low, corrected), max(interval.high, corrected))
    return CorrectedRate(*base, Correction.CALIBRATED, corrected, interval, counts.labelled)
