"""Figures of 1–5 grades (pure): the mean with its 95% interval, the distribution, and the
difference from the baseline paired by task.

- Mean grade: a 95% interval for a bounded mean over the graded answers
  (`stats.bounded_mean_interval` on [1, 5]: Agresti–Coull pseudo-grades at both ends, so
  concentrated grades such as nine 5s and a 4 never give a zero-width or short interval); None
  below three grades (the table shows the range instead).
- Δ vs the baseline: the mean of the per-task differences (candidate − baseline) over the tasks
  both runs had graded, with the same bounded-mean 95% interval on [−4, 4]; a
  paired interval, so task difficulty shared by both runs cancels out. "higher"/"lower" only
  when the interval excludes zero, else "within noise". Coverage is simulated in
  `tests/core/test_grade_figures.py` and `bench/bench_coverage.py`.
- A failed call (transport error or no parseable grade) is counted and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report.stats import Interval, bounded_mean_interval

GRADE_BOUNDS = (1.0, 5.0)
DELTA_BOUNDS = (-4.0, 4.0)


class GradeConclusion(StrEnum):
    """What the paired difference of grades from the baseline's says (`GradeDelta.conclusion`)."""

    HIGHER = "higher"
    LOWER = "lower"
    WITHIN_NOISE = "within noise"
    TOO_FEW = "too few paired tasks"


HIGHER, LOWER = GradeConclusion.HIGHER, GradeConclusion.LOWER
WITHIN_NOISE, TOO_FEW = GradeConclusion.WITHIN_NOISE, GradeConclusion.TOO_FEW
MIN_FOR_INTERVAL = 3
"""Below three values `bounded_mean_interval` gives no interval (the range is shown)."""


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
    interval: Interval | None
    conclusion: GradeConclusion
    better: int
    worse: int
    same: int


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
    """Δ mean grade (candidate − baseline) over the tasks both graded, with its paired interval."""
    tasks = sorted(set(candidate) & set(baseline))
    diffs = [candidate[t] - baseline[t] for t in tasks]
    better, worse = sum(1 for d in diffs if d > 0), sum(1 for d in diffs if d < 0)
    same = len(diffs) - better - worse
    if not diffs:
        return GradeDelta(0, None, None, TOO_FEW, 0, 0, 0)
    delta = sum(diffs) / len(diffs)
    interval = bounded_mean_interval([float(d) for d in diffs], DELTA_BOUNDS)
    if interval is None:
        conclusion = TOO_FEW
    elif interval.low > 0:
        conclusion = HIGHER
    elif interval.high < 0:
        conclusion = LOWER
    else:
        conclusion = WITHIN_NOISE
    return GradeDelta(len(diffs), delta, interval, conclusion, better, worse, same)
