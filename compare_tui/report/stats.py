"""The report's statistics: pure functions of counts and values, no IO, deterministic.

- `wilson_interval`: the Wilson score 95% interval of a proportion (good at small n and at
  0 % / 100 %, where the normal approximation gives impossible bounds).
- `proportion_interval`: the exact (Clopper–Pearson) 95% interval of a proportion, the pass
  rate's: it covers at least 95 % everywhere, where Wilson's dips to ~0.90 near 0 % or 100 %
  at small n.
- `percentiles`: p50/p95/p99 by linear interpolation, identical to numpy's default method.
- `mcnemar_exact`: the exact two-sided McNemar test (a binomial test on the discordant pairs).
- `paired_interval`: the 95% interval of a paired pass-rate difference (Tango's score
  interval, widened where needed so that it excludes zero exactly when the exact McNemar
  test rejects at 5 %): the interval and the test printed beside it always agree.
- `win_rate_interval`: a score interval for (wins + ½ ties) / n that accounts for ties
  (the trinomial score interval; Wilson when there are no ties).
- `mean_interval`: the Student-t 95% interval of a mean over N ≥ 3 values (a part of the next).
- `repeated_rate_interval`: the mean pass rate over repeated runs of one set (pooled exact
  interval joined with Student-t over runs): holds where most tasks never vary.
- `bounded_mean_interval`: the mean of bounded values (1–5 grades, a task's pass share over
  repeats), Agresti–Coull style with a Student-t quantile: never zero width, holds where the
  grades are concentrated and where they are polarised (only 1s and 5s).
- `bisect`, `normal_quantile`, `z_for`, `regularized_beta`: the numerical pieces (one root
  finder for every bound).

Sample sizes (exact power of the verdict's own test) are in `report.power`. Every interval the
product labels 95 % is simulated in `bench/bench_coverage.py`, beside the retired methods
(`bench/retired_intervals.py`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""
Z80_POWER = 0.8416212335729143
"""The standard normal quantile for 80 % power (one-sided 0.80)."""
PAIRED_METHOD = "Tango score interval, agreeing with the exact McNemar test"
WIN_RATE_METHOD = "trinomial score interval (ties count half)"
MEAN_METHOD = "exact interval over every task of every run, joined with the Student-t interval over runs"
BOUND_PSEUDO_VALUES = 1.5
"""Pseudo-values added at each bound by `bounded_mean_interval`."""
MIN_RUNS_FOR_INTERVAL = 3
"""Below three values (runs, grades) no interval is given: the values' range is shown instead."""


@dataclass(frozen=True, slots=True)
class Interval:
    """A closed interval `[low, high]`."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


@dataclass(frozen=True, slots=True)
class Percentiles:
    """p50/p95/p99 of `n` values; all three None when there were no values."""

    n: int
    p50: float | None
    p95: float | None
    p99: float | None


def wilson_interval(successes: int, trials: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of `successes / trials`; None when `trials` is 0.

    Always within [0, 1] and always contains the observed proportion.
    """
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    # Clamp: at p = 0 or 1 rounding can put a bound a hair outside [0, 1] or past p itself.
    return Interval(max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p)))


def proportion_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval | None:
    """The exact (Clopper–Pearson) 95% interval of `successes / trials`: the bounds where the
    binomial tails are 2.5 % each, so it covers at least 95 % at every n and every true rate
    (Wilson's dips to ~0.90 near 0 % or 100 % at small n; `bench/bench_coverage.py`). None
    when `trials` is 0. Always within [0, 1] and contains the observed proportion."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    tail = (1 - confidence) / 2
    # P(X >= k | p) = I_p(k, n - k + 1): the lower bound solves it = tail, the upper bound
    # solves P(X <= k | p) = 1 - I_p(k + 1, n - k) = tail.
    low = (
        0.0
        if successes == 0
        else bisect(lambda q: regularized_beta(successes, trials - successes + 1, q), 0, 1, tail, 60)
    )
    high = (
        1.0
        if successes == trials
        else bisect(lambda q: regularized_beta(successes + 1, trials - successes, q), 0, 1, 1 - tail, 60)
    )
    p = successes / trials
    return Interval(min(low, p), max(high, p))


def bisect(increasing: Callable[[float], float], low: float, high: float, target: float, steps: int = 100) -> float:
    """x in [low, high] where `increasing(x)` crosses `target`, by bisection: the one root finder
    of the report's statistics (a decreasing function is passed negated)."""
    for _ in range(steps):
        mid = (low + high) / 2
        if increasing(mid) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def normal_quantile(probability: float) -> float:
    """The standard normal quantile: x with Φ(x) = `probability` (0 < probability < 1)."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"a probability strictly between 0 and 1 is needed, got {probability}")
    if probability > 0.5:  # the lower tail is the precise one
        return -normal_quantile(1 - probability)
    return bisect(lambda x: 0.5 * math.erfc(-x / math.sqrt(2)), -40.0, 40.0, probability, steps=120)


def z_for(level: float) -> float:
    """The two-sided normal quantile of a `level` interval (1.96 at 0.95)."""
    return normal_quantile(1 - (1 - level) / 2)


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
    Lentz), with the symmetry I_x(a, b) = 1 − I_(1−x)(b, a) where that converges faster."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(b, a, 1.0 - x)
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def percentiles(values: Iterable[float]) -> Percentiles:
    """p50, p95 and p99 of `values` by linear interpolation (numpy's default method)."""
    data = np.fromiter(values, dtype=float)
    if data.size == 0:
        return Percentiles(0, None, None, None)
    p50, p95, p99 = np.percentile(data, [50, 95, 99])
    return Percentiles(int(data.size), float(p50), float(p95), float(p99))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (pass only in A / only in B).

    Under "no difference" each discordant task is A's or B's with probability 1/2, so the
    p-value is twice the binomial tail of the smaller count (capped at 1). Summed in log space
    so that 10,000 discordant tasks neither overflow nor lose precision.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts must be non-negative")
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    steps = np.arange(1, k + 1, dtype=float)
    # log C(n, j) for j = 0..k, by the recurrence C(n, j) = C(n, j-1) * (n - j + 1) / j.
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(n - steps + 1) - np.log(steps))))
    top = log_comb.max()
    log_tail = top + math.log(float(np.exp(log_comb - top).sum())) - n * math.log(2)
    return min(1.0, 2 * math.exp(log_tail))


def paired_interval(only_a: int, only_b: int, ties: int, level: float = 0.95) -> Interval | None:
    """The `level` (95 %) interval of pass rate(A) − pass rate(B) over paired tasks; None for no
    tasks. A decision over K candidates asks for 1 − 0.05/K (Bonferroni).

    Tango's (1998) score interval: every Δ whose score statistic
    (b − c − nΔ) / sqrt(n(2·q̃ + Δ(1 − Δ))) lies within ±z, with q̃ the maximum-likelihood
    share of "only B" tasks under the constraint that the difference is Δ. Its coverage stays
    near 95 % when few tasks are discordant, where a bootstrap falls far below. It is then
    reconciled with the exact McNemar test, so that the interval excludes zero exactly when
    the test's p < 1 − level: widened to reach zero when the exact test does not reject (the
    exact test is the more cautious at small counts), and, in the rare opposite case, its
    bound moved to just past zero. Widening only raises coverage.
    """
    for count in (only_a, only_b, ties):
        if count < 0:
            raise ValueError("counts must be non-negative")
    n = only_a + only_b + ties
    if n == 0:
        return None
    estimate = (only_a - only_b) / n
    z = Z95 if level == 0.95 else z_for(level)

    def score(delta: float) -> float:
        b, c = only_a, only_b
        big_b = -b - c + (2 * n - b + c) * delta
        big_c = -c * delta * (1 - delta)
        q = (math.sqrt(max(0.0, big_b * big_b - 8 * n * big_c)) - big_b) / (4 * n)
        variance = n * (2 * q + delta * (1 - delta))
        numerator = b - c - n * delta
        if variance <= 1e-300:
            return math.copysign(math.inf, numerator) if numerator else 0.0
        return numerator / math.sqrt(variance)

    def solve(low: float, high: float, target: float) -> float:
        # score is decreasing in Δ: find where it crosses `target` between low and high.
        return bisect(lambda delta: -score(delta), low, high, -target, 80)

    lower = -1.0 if score(-1.0) <= z else solve(-1.0, estimate, z)
    upper = 1.0 if score(1.0) >= -z else solve(estimate, 1.0, -z)
    lower, upper = min(lower, estimate), max(upper, estimate)
    rejects = mcnemar_exact(only_a, only_b) < 1 - level
    if not rejects:
        lower, upper = min(lower, 0.0), max(upper, 0.0)
    elif lower <= 0.0 <= upper:
        # The exact test rejects although the score interval reaches zero: stop just past zero.
        tiny = 0.5 / n
        lower, upper = (min(tiny, estimate), upper) if estimate > 0 else (lower, max(-tiny, estimate))
    return Interval(lower, upper)


def win_rate_interval(wins: int, ties: int, losses: int, z: float = Z95) -> Interval | None:
    """95% score interval of θ = P(win) + ½·P(tie) from trinomial counts; None for no pairs.

    Every θ whose score statistic (θ̂ − θ) / sqrt(V(θ)/n) lies within ±z, where V(θ) is the
    variance of a pair's score (1, ½ or 0) at the maximum-likelihood trinomial with that θ.
    Ties carry less variance than a coin flip, so this is narrower than Wilson on
    (wins + ½ ties) / n when ties are common; with no ties it is exactly Wilson.
    """
    for count in (wins, ties, losses):
        if count < 0:
            raise ValueError("counts must be non-negative")
    n = wins + ties + losses
    if n == 0:
        return None
    estimate = (wins + ties / 2) / n

    def variance(theta: float) -> float:
        # Profile out the tie share t: p_win = θ − t/2, p_loss = 1 − θ − t/2.
        top = 2 * min(theta, 1 - theta)
        if top <= 0 or ties == 0:
            tie = 0.0
        else:

            def slope(t: float) -> float:
                return -wins / (2 * (theta - t / 2)) + ties / t - losses / (2 * (1 - theta - t / 2))

            low, high = 1e-15, top * (1 - 1e-12)
            if slope(high) >= 0:
                tie = high
            else:
                tie = bisect(lambda t: -slope(t), low, high, 0.0, 80)
        return max(0.0, theta - tie / 2 + tie / 4 - theta * theta)

    def score(theta: float) -> float:
        v = variance(theta)
        gap = estimate - theta
        if v <= 1e-300:
            return math.copysign(math.inf, gap) if gap else 0.0
        return gap / math.sqrt(v / n)

    def solve(low: float, high: float, target: float) -> float:
        # score is decreasing in θ.
        return bisect(lambda theta: -score(theta), low, high, -target, 80)

    lower = 0.0 if score(0.0) <= z else solve(0.0, estimate, z)
    upper = 1.0 if score(1.0) >= -z else solve(estimate, 1.0, -z)
    return Interval(min(lower, estimate), max(upper, estimate))


def _t_two_sided_coverage(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with `df` degrees of freedom (Abramowitz & Stegun 26.7.3–4)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= cos2 * (2 * k - 1) / (2 * k)
            total += term
        return sin * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = math.cos(theta), math.cos(theta)
    for k in range(1, (df - 1) // 2):
        term *= cos2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + sin * total)


def t_quantile_95(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with `df` ≥ 1 degrees of freedom (exact
    to ~1e-12, by bisection on the closed-form distribution function)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    high = 20.0
    while _t_two_sided_coverage(high, df) < 0.95:
        high *= 2
    return bisect(lambda t: _t_two_sided_coverage(t, df), Z95, high, 0.95)


def mean_interval(values: Sequence[float], bounds: tuple[float, float] = (0.0, 1.0)) -> Interval | None:
    """Student-t 95% interval of the mean of `values`; None for fewer than three values.

    Below three values an interval would be too wide to mean anything (or, from a
    bootstrap, falsely narrow): show the values' range, labelled as a range, instead. Clamped
    to `bounds` (a pass rate lies in [0, 1]).
    """
    data = np.asarray(values, dtype=float)
    if data.size < 3:
        return None
    mean = float(data.mean())
    half = t_quantile_95(int(data.size) - 1) * float(data.std(ddof=1)) / math.sqrt(data.size)
    return Interval(max(bounds[0], mean - half), min(bounds[1], mean + half))


def repeated_rate_interval(runs: Sequence[tuple[int, int]]) -> Interval | None:
    """95% interval of the mean pass rate over repeated runs of one task set, from each run's
    (passed, scored); None below three runs (the runs' range is shown instead).

    The runs share their tasks, so most of a set is the same in every run and only a few flaky
    tasks vary: a Student-t interval over the run rates is then often zero width and covers far
    below 95 % (a set of deterministic tasks with one flaky one: 0.27 at three runs). Here, the
    exact interval of every task-run pooled (Clopper–Pearson on Σ passed of Σ scored) — a sum of
    independent tasks with different pass chances is less spread than a binomial with their
    mean (Hoeffding 1956), so it holds its level whatever the tasks' mix — joined with the
    Student-t interval over the run rates, which also holds when whole runs shift together.
    Never zero width.
    """
    if len(runs) < MIN_RUNS_FOR_INTERVAL:
        return None
    passed, scored = sum(p for p, _ in runs), sum(s for _, s in runs)
    pooled = proportion_interval(passed, scored)
    if pooled is None:
        return None
    rates = [p / s for p, s in runs if s > 0]
    spread = mean_interval(rates)
    mean = float(np.mean(rates))
    low, high = min(pooled.low, mean), max(pooled.high, mean)
    if spread is not None:
        low, high = min(low, spread.low), max(high, spread.high)
    return Interval(low, high)


def bounded_mean_interval(values: Sequence[float], bounds: tuple[float, float]) -> Interval | None:
    """95% interval of the mean of values known to lie within `bounds` (1–5 grades, or a
    task's pass share over repeated runs within 0..1); None below three values (the range is
    shown).

    The Agresti–Coull idea for a bounded mean: `BOUND_PSEUDO_VALUES` pseudo-values at each
    bound join the data before an interval of their mean, with Student's t quantile on n − 1
    degrees of freedom. Where the grades are concentrated (nine 5s and a 4, or every grade
    equal) a plain Student-t interval is narrow or zero width and covers 0.45–0.65: the
    pseudo-values give the data the spread a value at the far bound could have, so the interval
    never has zero width, and their weight fades as the grades grow in number. Where the grades
    are polarised (only 1s and 5s: a binomial in disguise) one pseudo-value a side with the
    normal quantile covered 0.875 at seven grades; 1.5 a side with the t quantile holds at
    least 0.936 there at every n from 5 to 150 (exact sums, `bench/bench_coverage.py`) and on
    the concentrated grades simulated. Within `bounds`; contains the values' mean.
    """
    data = np.asarray(values, dtype=float)
    if data.size < MIN_RUNS_FOR_INTERVAL:
        return None
    low_bound, high_bound = bounds
    total = data.size + 2 * BOUND_PSEUDO_VALUES
    centre = (float(data.sum()) + BOUND_PSEUDO_VALUES * (low_bound + high_bound)) / total
    spread = (
        float(((data - centre) ** 2).sum())
        + BOUND_PSEUDO_VALUES * ((low_bound - centre) ** 2 + (high_bound - centre) ** 2)
    ) / total
    half = _t95(int(data.size) - 1) * math.sqrt(spread / total)
    mean = float(data.mean())
    return Interval(max(low_bound, min(centre - half, mean)), min(high_bound, max(centre + half, mean)))


@functools.cache
def _t95(df: int) -> float:
    return t_quantile_95(df)
