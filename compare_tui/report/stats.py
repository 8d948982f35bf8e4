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
- `tasks_for_power`: how many paired tasks give 80 % power at the observed effect (Connor 1987).
- `win_rate_interval`: a score interval for (wins + ½ ties) / n that accounts for ties
  (the trinomial score interval; Wilson when there are no ties).
- `mean_interval`: the Student-t 95% interval of a mean over N ≥ 3 values (e.g. repeated runs).
- `seed_for`: a seed from the run ids (kept for callers that sample; no interval uses one).
- `paired_bootstrap_ci`, `bootstrap_mean_ci`: seeded percentile bootstraps, kept for the
  coverage benchmark's comparison only; no figure of the product uses them.

Every interval the product labels 95 % is simulated in `bench/bench_coverage.py`.
"""

from __future__ import annotations

import hashlib
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
MEAN_METHOD = "Student-t interval over runs"
BOOTSTRAP_RESAMPLES = 10_000


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
    low = 0.0 if successes == 0 else _solve(lambda q: _betainc(successes, trials - successes + 1, q), tail)
    high = 1.0 if successes == trials else _solve(lambda q: _betainc(successes + 1, trials - successes, q), 1 - tail)
    p = successes / trials
    return Interval(min(low, p), max(high, p))


def _solve(increasing: Callable[[float], float], target: float) -> float:
    """q in [0, 1] with increasing(q) = target, by bisection (to ~1e-15)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if increasing(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
    Lentz), with the symmetry I_x(a, b) = 1 − I_(1−x)(b, a) where that converges faster."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
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


def seed_for(run_ids: Iterable[str]) -> int:
    """The bootstrap seed for these runs: the first 8 bytes of sha256 over the sorted ids.

    Sorted so the seed does not depend on the order in which runs were listed.
    """
    digest = hashlib.sha256("\n".join(sorted(run_ids)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def paired_bootstrap_ci(
    only_a: int, only_b: int, ties: int, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> Interval | None:
    """95% percentile CI of pass rate(A) − pass rate(B) over paired tasks; None for no tasks.

    Each task contributes d = +1 (passed only in A), −1 (only in B) or 0 (both or neither).
    Resampling n tasks with replacement and averaging d depends only on how many of each kind
    were drawn, which is one multinomial draw: exactly the paired bootstrap, at O(resamples)
    cost instead of O(resamples × n).
    """
    n = only_a + only_b + ties
    if n == 0:
        return None
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.multinomial(n, [only_a / n, only_b / n, ties / n], size=resamples)
    diffs = (draws[:, 0] - draws[:, 1]) / n
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(float(low), float(high))


def tasks_to_resolve(only_a: int, only_b: int, ties: int, z: float = Z95) -> int | None:
    """Roughly how many *more* paired tasks would put a lead of this size outside noise.

    With per-task differences d (mean m, variance v), the 95% interval of the mean excludes
    zero once z·sqrt(v/n) < |m|, i.e. n > z²·v/m². None when there is no lead to resolve.
    This assumes more tasks "like these" (the same flip rates), which is all it can assume.
    0 means the current count is already about enough (the interval is borderline).
    """
    n = only_a + only_b + ties
    if n == 0 or only_a == only_b:
        return None
    mean = (only_a - only_b) / n
    variance = (only_a + only_b) / n - mean * mean
    return max(0, math.ceil(z * z * variance / (mean * mean)) - n)


def bootstrap_mean_ci(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> Interval | None:
    """95% percentile-bootstrap CI of the mean of `values` (e.g. one pass rate per repeated
    run); None for fewer than two values, where resampling cannot show any spread.

    Resamples the values themselves with replacement: with few values (N repeats) the
    interval is coarse and only says how much the runs disagreed, which is the point.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    rng = np.random.Generator(np.random.PCG64(seed))
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    # Clamp: float summation can put a bound a hair outside the range of the values.
    return Interval(max(float(low), float(data.min())), min(float(high), float(data.max())))


def paired_interval(only_a: int, only_b: int, ties: int, z: float = Z95) -> Interval | None:
    """95% interval of pass rate(A) − pass rate(B) over paired tasks; None for no tasks.

    Tango's (1998) score interval: every Δ whose score statistic
    (b − c − nΔ) / sqrt(n(2·q̃ + Δ(1 − Δ))) lies within ±z, with q̃ the maximum-likelihood
    share of "only B" tasks under the constraint that the difference is Δ. Its coverage stays
    near 95 % when few tasks are discordant, where a bootstrap falls far below. It is then
    reconciled with the exact McNemar test, so that the interval excludes zero exactly when
    the test's p < 0.05: widened to reach zero when the exact test does not reject (the
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
        for _ in range(80):
            mid = (low + high) / 2
            if score(mid) > target:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    lower = -1.0 if score(-1.0) <= z else solve(-1.0, estimate, z)
    upper = 1.0 if score(1.0) >= -z else solve(estimate, 1.0, -z)
    lower, upper = min(lower, estimate), max(upper, estimate)
    rejects = mcnemar_exact(only_a, only_b) < 0.05
    if not rejects:
        lower, upper = min(lower, 0.0), max(upper, 0.0)
    elif lower <= 0.0 <= upper:
        # The exact test rejects although the score interval reaches zero: stop just past zero.
        tiny = 0.5 / n
        lower, upper = (min(tiny, estimate), upper) if estimate > 0 else (lower, max(-tiny, estimate))
    return Interval(lower, upper)


def tasks_for_power(only_a: int, only_b: int, ties: int, power_z: float = Z80_POWER, z: float = Z95) -> int | None:
    """Paired tasks needed for 80 % power to detect the observed difference (Connor 1987).

    n = (z·sqrt(ψ) + z_β·sqrt(ψ − δ²))² / δ², with δ the observed difference in pass rates
    and ψ the observed share of discordant tasks, at a two-sided 5 % level. This assumes more
    tasks "like these" (the same flip rates), which is all it can assume. None when the two
    pass the same tasks' count (no difference to detect).
    """
    n = only_a + only_b + ties
    if n == 0 or only_a == only_b:
        return None
    delta = (only_a - only_b) / n
    psi = (only_a + only_b) / n
    return math.ceil((z * math.sqrt(psi) + power_z * math.sqrt(max(0.0, psi - delta * delta))) ** 2 / (delta * delta))


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
                for _ in range(80):
                    mid = (low + high) / 2
                    if slope(mid) > 0:
                        low = mid
                    else:
                        high = mid
                tie = (low + high) / 2
        return max(0.0, theta - tie / 2 + tie / 4 - theta * theta)

    def score(theta: float) -> float:
        v = variance(theta)
        gap = estimate - theta
        if v <= 1e-300:
            return math.copysign(math.inf, gap) if gap else 0.0
        return gap / math.sqrt(v / n)

    def solve(low: float, high: float, target: float) -> float:
        # score is decreasing in θ.
        for _ in range(80):
            mid = (low + high) / 2
            if score(mid) > target:
                low = mid
            else:
                high = mid
        return (low + high) / 2

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
    low, high = Z95, 20.0
    while _t_two_sided_coverage(high, df) < 0.95:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        if _t_two_sided_coverage(mid, df) < 0.95:
            low = mid
        else:
            high = mid
    return (low + high) / 2


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
