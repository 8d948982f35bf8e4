"""The report's statistics: pure functions of counts and values, no IO, deterministic.

- `wilson_interval`: the Wilson score 95% interval of a proportion (good at small n and at
  0 % / 100 %, where the normal approximation gives impossible bounds).
- `percentiles`: p50/p95/p99 by linear interpolation, identical to numpy's default method.
- `mcnemar_exact`: the exact two-sided McNemar test (a binomial test on the discordant pairs).
- `paired_bootstrap_ci`: a seeded paired-bootstrap 95% CI of a pass-rate difference.
- `tasks_to_resolve`: roughly how many tasks would make a lead of this size exceed noise.
- `seed_for`: the bootstrap seed, from the run ids, so every surface shows the same interval.
- `bootstrap_mean_ci`: a seeded percentile-bootstrap 95% CI of a mean (e.g. over repeated runs).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""
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


def paired_bootstrap_ci(only_a: int, only_b: int, ties: int, seed: int,
                        resamples: int = BOOTSTRAP_RESAMPLES) -> Interval | None:
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


def bootstrap_mean_ci(values: Sequence[float], seed: int,
                      resamples: int = BOOTSTRAP_RESAMPLES) -> Interval | None:
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
