"""Methods the product no longer uses, kept for the coverage benchmark's side-by-side only:
seeded percentile bootstraps (paired and of a mean over runs), the normal-approximation
"tasks to resolve", and Connor's (1987) sample-size formula (its power by the exact test is
0.77–0.79, and nothing sensible at a handful of tasks; `compare_tui.report.power` replaced it).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

import numpy as np

from compare_tui.report.stats import Z80_POWER, Z95, Interval

BOOTSTRAP_RESAMPLES = 10_000


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


def bounded_mean_normal(values: Sequence[float], bounds: tuple[float, float]) -> Interval | None:
    """The bounded-mean interval before issue 48: one pseudo-value at each bound and the normal
    quantile (0.875 at seven polarised grades); also what decided the paired grade Δ, on −4..4."""
    data = np.asarray(values, dtype=float)
    if data.size < 3:
        return None
    low_bound, high_bound = bounds
    total = data.size + 2
    centre = (float(data.sum()) + low_bound + high_bound) / total
    spread = (float(((data - centre) ** 2).sum()) + (low_bound - centre) ** 2 + (high_bound - centre) ** 2) / total
    half = Z95 * math.sqrt(spread / total)
    mean = float(data.mean())
    return Interval(max(low_bound, min(centre - half, mean)), min(high_bound, max(centre + half, mean)))
