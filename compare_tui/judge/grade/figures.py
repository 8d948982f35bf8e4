"""Figures of 1–5 grades (pure): the mean with its 95% interval, the distribution, and the
difference from the baseline paired by task.

- Mean grade: a 95% interval for a bounded mean over the graded answers
  (`stats.bounded_mean_interval` on [1, 5]: pseudo-grades at both ends and a Student-t
  quantile, so concentrated grades such as nine 5s and a 4 never give a zero-width or short
  interval, and polarised ones, only 1s and 5s, still cover); None below three grades (the
  table shows the range instead).
- Δ vs the baseline, paired by task over the tasks both runs had graded: the mean per-task
  difference (candidate − baseline) as the estimate, and the verdict from the exact sign test
  on the tasks graded higher (▲) against those graded lower (▼) — a task one grade better
  counts as much as one four grades better, so ten tasks of ten one grade better conclude
  "higher" (p = 0.002), where an interval of the mean difference stayed "within noise". Its
  95% interval is of the net share of tasks graded higher, (▲ − ▼) / tasks
  (`stats.paired_interval`, which excludes zero exactly when the exact test rejects at 5 %), so
  the interval and the verdict never disagree. Coverage and power are simulated in
  `bench/bench_coverage.py`.
- A failed call (transport error or no parseable grade) is counted and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report.stats import Interval, bounded_mean_interval, mcnemar_exact, paired_interval

GRADE_BOUNDS = (1.0, 5.0)
GRADE_TEST = "exact sign test on the tasks graded higher vs lower"
"""How `GradeDelta.conclusion` is decided (named in every view beside its p-value)."""


class GradeConclusion(StrEnum):
    """What the paired difference of grades from the baseline's says (`GradeDelta.conclusion`)."""

    HIGHER = "higher"
    LOWER = "lower"
    WITHIN_NOISE = "within noise"
    TOO_FEW = "too few paired tasks"


HIGHER, LOWER = GradeConclusion.HIGHER, GradeConclusion.LOWER
WITHIN_NOISE, TOO_FEW = GradeConclusion.WITHIN_NOISE, GradeConclusion.TOO_FEW
MIN_FOR_INTERVAL = 3
"""Below three values `bounded_mean_interval` gives no interval (the range is shown); below
three paired tasks no Δ verdict is given."""


@dataclass(frozen=True, slots=True)
class GradeFigures:
    """One run's grades under one judge and rubric."""

    graded: int
    """Answers with a grade: the mean's denominator."""
    failed: int
    """Judge calls with no grade (a transport error or an unparseable reply): counted, not averaged."""
    not_graded: int
    """Tasks with no call to make (no answer, or no reference answer) or not asked yet."""
    mean: float | None
    interval: Interval | None
    distribution: tuple[int, int, int, int, int]
    """How many answers got 1, 2, 3, 4 and 5."""
    low: int | None = None
    high: int | None = None
    """The lowest and highest grade, shown when there are too few grades for an interval."""


@dataclass(frozen=True, slots=True)
class GradeDelta:
    """A run's grades against the baseline's, paired by task."""

    tasks: int
    """Tasks both runs had graded (the pairs)."""
    delta: float | None
    """The mean per-task difference of grades (candidate − baseline): the estimate."""
    interval: Interval | None
    """95% interval of `net_better`, agreeing with the sign test (None below three tasks)."""
    conclusion: GradeConclusion
    better: int
    worse: int
    same: int
    p_value: float | None = None
    """The exact sign test's two-sided p-value (`GRADE_TEST`); None below three tasks."""

    @property
    def net_better(self) -> float | None:
        """(tasks graded higher − tasks graded lower) / tasks: what `interval` is about."""
        return (self.better - self.worse) / self.tasks if self.tasks else None


def grade_figures(grades: Sequence[int], failed: int, not_graded: int) -> GradeFigures:
    """The figures of `grades` (each 1–5)."""
    counts = [0, 0, 0, 0, 0]
    for grade in grades:
        counts[grade - 1] += 1
    mean = sum(grades) / len(grades) if grades else None
    interval = bounded_mean_interval([float(g) for g in grades], GRADE_BOUNDS)
    dist = (counts[0], counts[1], counts[2], counts[3], counts[4])
    return GradeFigures(
        len(grades),
        failed,
        not_graded,
        mean,
        interval,
        dist,
        min(grades) if grades else None,
        max(grades) if grades else None,
    )


def grade_delta(candidate: Mapping[str, int], baseline: Mapping[str, int]) -> GradeDelta:
    """Δ mean grade (candidate − baseline) over the tasks both graded, with the sign test's
    verdict and the interval of the net share of tasks graded higher that agrees with it."""
    tasks = sorted(set(candidate) & set(baseline))
    diffs = [candidate[t] - baseline[t] for t in tasks]
    better, worse = sum(1 for d in diffs if d > 0), sum(1 for d in diffs if d < 0)
    same = len(diffs) - better - worse
    if not diffs:
        return GradeDelta(0, None, None, TOO_FEW, 0, 0, 0)
    delta = sum(diffs) / len(diffs)
    if len(diffs) < MIN_FOR_INTERVAL:
        return GradeDelta(len(diffs), delta, None, TOO_FEW, better, worse, same)
    p_value = mcnemar_exact(better, worse)
    interval = paired_interval(better, worse, same)
    assert interval is not None  # three or more tasks
    if p_value >= 0.05:
        conclusion = WITHIN_NOISE
    else:
        conclusion = HIGHER if better > worse else LOWER
    return GradeDelta(len(diffs), delta, interval, conclusion, better, worse, same, p_value)
