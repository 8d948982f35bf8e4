"""Anytime-valid verdicts: a confidence sequence for the paired difference, valid at every look.

The golden set's N tasks are the whole population, taken in a random order; each finished task
adds one paired outcome x = candidate − baseline ∈ {−1, 0, +1}. Δ is the set's exact mean of x,
a multiple of 1/N. After n tasks, the sequence is the set of those multiples not yet rejected by
two one-sided betting tests (Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", 2023, in its without-replacement form):

- the lower test of H0: Δ ≤ d bets on each next outcome against the mean of the tasks not yet
  seen, had Δ been d: ν = (N d − S) / (N − i + 1), S the sum so far. The capital
  Π (1 + c (x + 1) / (1 + ν) − c) is a nonnegative supermartingale under H0 for every bet
  c ∈ [0, 1); the e-process is the uniform mixture over `BETS`. By Ville's inequality it
  reaches 1/α with chance at most α, at any look, however often looked at;
- the upper test is the same on −x.

Each side runs at α / (2K) for K candidates (Bonferroni, and the two sides), so the chance of
any wrong "better", "no worse" or "worse" over the family stays at most α whenever the run
stops. Every capital is decreasing in d, so the non-rejected set is an interval; a value once
rejected stays rejected (the running intersection), so the bounds are nested. The bounds are
also intersected with the set's deterministic range (whatever the unseen tasks hold), so at
n = N they close on the exact Δ. The verdict is `decision.verdict_for` on the bounds, so it
never contradicts them. A verdict is *settled* when every Δ still inside the bounds would give
the same verdict at N: no outcome of the remaining tasks can change it. It is *curtailed* when
the deterministic range alone settles it (the statistics had not).

For an unbounded stream (live traffic graded by `compare-tui canary watch`) there is no N:
`stream_look` is the same pair of tests in the with-replacement form (N → ∞, so ν = d, each
outcome an independent draw with mean Δ): valid at every look over an endless stream, with no
certain range to intersect with and no "settled at N". Its bounds are on a grid of
1/`STREAM_RESOLUTION`; a bound that crosses an edge stays crossed (running intersection), so a
"better" once reached is final, and so is the sign of a "worse".

Pure and deterministic (numpy only). Run-time early stopping in the engine is not built yet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compare_tui.report.decision import FAMILY_ALPHA, Verdict, verdict_for

BETS = (0.25, 0.5, 0.75)
"""The constant bets c (a share of the capital put at risk) mixed with equal weights: a fixed
grid, so every capital is monotone in d. Chosen by bench/bench_sequential.py: a finer grid
(0.1 … 0.9) settles within Monte Carlo noise of it, one bet of 0.5 later on large leads, and the
with-replacement form (the set taken as infinite) much later on small ones."""


def side_alpha(candidates: int, alpha: float = FAMILY_ALPHA) -> float:
    """Each one-sided test's level: α split over K candidates and the two sides."""
    return alpha / (2 * max(1, candidates))


STREAM_RESOLUTION = 1000
"""`stream_look`'s bounds are multiples of 1/1000 (a tenth of a point)."""


def log_capital(
    outcomes: np.ndarray, total: int | None, null: np.ndarray | float, bets: Sequence[float] = BETS
) -> np.ndarray:
    """log of the mixture e-process against H0: Δ ≤ null, after each look.

    `outcomes` has shape (..., n) with values in {−1, 0, 1}, taken without replacement from a set
    of `total`, or (`total` None) drawn from an unbounded stream of mean Δ; `null` broadcasts
    against the leading axes (a share, −1..1). Returns shape (..., n)."""
    x = np.asarray(outcomes, dtype=float)
    n = x.shape[-1]
    d = np.asarray(null, dtype=float)[..., None]
    if total is None:
        # With replacement: the mean of the next outcome under H0 is d itself.
        nu = np.broadcast_to(d, np.broadcast_shapes(d.shape, x.shape))
    else:
        if n > total:
            raise ValueError(f"{n} outcomes from a set of {total} tasks")
        before = np.cumsum(x, axis=-1) - x  # S_{i−1}
        left = total - np.arange(n)  # tasks not yet seen before look i
        nu = (total * d - before) / left
    # ν = −1: every unseen task must be −1 under d, so a −1 says nothing (ratio 1) and anything
    # else rules d out (ratio ∞); ν < −1: d is already impossible. The tolerance absorbs rounding.
    edge = nu + 1 <= 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(edge, np.where(x > -1, np.inf, 1.0), (x + 1) / np.where(edge, 1.0, nu + 1))
    logs = [np.cumsum(np.log1p(c * (ratio - 1)), axis=-1) for c in bets]
    with np.errstate(invalid="ignore"):
        mixed = np.logaddexp.reduce(np.stack(logs), axis=0) - math.log(len(bets))
    return np.where(np.isnan(mixed), np.inf, mixed)


@dataclass(frozen=True, slots=True)
class Look:
    """The sequence after `tasks` paired outcomes, as shares of Δ (candidate − baseline)."""

    tasks: int
    low: float
    high: float
    verdict: Verdict
    settled: bool
    """Every Δ still inside [low, high] gives this verdict at N: more tasks cannot change it."""
    curtailed: bool
    """Settled by the deterministic range of the unseen tasks alone (the statistics had not)."""
    missed: bool = False
    """The statistics had ruled out every Δ the set can still have: the sequence was wrong (a
    chance of at most 2α), and the bounds are that certain range alone (no longer nested)."""


@dataclass(frozen=True, slots=True)
class SequentialVerdict:
    """One candidate's confidence sequence, look by look, and where its verdict settled."""

    total: int
    margin_pp: float
    alpha_side: float
    looks: tuple[Look, ...]

    @property
    def settled_at(self) -> Look | None:
        """The first settled look (None: not settled at the last look)."""
        return next((look for look in self.looks if look.settled), None)

    @property
    def verdict(self) -> Verdict:
        """The verdict where it settled, else at the last look."""
        look = self.settled_at or self.looks[-1]
        return look.verdict


def point_verdict(delta: float, margin_pp: float) -> Verdict:
    """The verdict at N, where the sequence is the single value Δ."""
    return verdict_for(delta * 100, delta * 100, margin_pp)


def _settled(low: float, high: float, margin_pp: float) -> bool:
    # The verdict at a point is monotone in Δ: both ends agreeing means every Δ between does.
    return point_verdict(low, margin_pp) is point_verdict(high, margin_pp)


def sequence(outcomes: Sequence[int], total: int, *, margin_pp: float, candidates: int = 1) -> SequentialVerdict:
    """The confidence sequence and verdict after each of `outcomes` (candidate − baseline per
    task, in the order the tasks ran) from a set of `total` tasks, for one of K `candidates`."""
    if not outcomes:
        raise ValueError("no paired outcome yet")
    if any(o not in (-1, 0, 1) for o in outcomes):
        raise ValueError("paired outcomes are −1, 0 or +1")
    alpha = side_alpha(candidates)
    x = np.asarray(outcomes, dtype=float)
    grid = np.arange(-total, total + 1) / total  # every Δ the set can have
    threshold = math.log(1 / alpha)
    # rejected[j, i]: the value grid[j] has been rejected at some look ≤ i (running intersection)
    low_out = np.maximum.accumulate(log_capital(np.broadcast_to(x, (grid.size, x.size)), total, grid), axis=-1)
    high_out = np.maximum.accumulate(log_capital(np.broadcast_to(-x, (grid.size, x.size)), total, -grid), axis=-1)
    sums = np.cumsum(x)
    looks = []
    for i in range(x.size):
        n = i + 1
        floor, ceiling = (sums[i] - (total - n)) / total, (sums[i] + (total - n)) / total
        kept = grid[(low_out[:, i] < threshold) & (high_out[:, i] < threshold)]
        inside = kept[(kept >= floor - 1e-12) & (kept <= ceiling + 1e-12)]
        # Empty only when the sequence has missed (chance ≤ 2α): the certain range stands alone.
        low, high = (float(inside[0]), float(inside[-1])) if inside.size else (floor, ceiling)
        settled = _settled(low, high, margin_pp)
        by_statistics = kept.size > 0 and _settled(float(kept[0]), float(kept[-1]), margin_pp)
        verdict = verdict_for(low * 100, high * 100, margin_pp)
        looks.append(Look(n, low, high, verdict, settled, settled and not by_statistics, missed=not inside.size))
    return SequentialVerdict(total, margin_pp, alpha, tuple(looks))


@dataclass(frozen=True)
class Crossings:
    """Per look (last axis; leading axes as the outcomes'): which edge each bound has crossed,
    by the statistics at some look so far or by the set's certain range."""

    low_above_zero: np.ndarray
    """L > 0."""
    low_above_margin: np.ndarray
    """L > −M."""
    high_below_zero: np.ndarray
    """U < 0."""
    high_at_most_zero: np.ndarray
    """U ≤ 0."""
    high_at_most_margin: np.ndarray
    """U at or below the largest Δ that is worse at N (−M, or below 0 when M is 0)."""
    low_at_least_zero: np.ndarray
    """L ≥ 0 (with U ≤ 0: the sequence is {0}, settled whatever M)."""

    def settled(self) -> np.ndarray:
        """Every Δ still inside the bounds gives one verdict at N (`_settled`, edge by edge)."""
        better = self.low_above_zero
        no_worse = self.low_above_margin & self.high_at_most_zero & ~better
        worse = self.high_at_most_margin & ~self.low_above_margin
        at_zero = self.low_at_least_zero & self.high_at_most_zero
        return np.asarray(better | no_worse | worse | at_zero)


def crossings(
    outcomes: np.ndarray, total: int, margin_pp: float, alpha: float, bets: Sequence[float] = BETS, finite: bool = True
) -> Crossings:
    """The edges the bounds cross at each look, in O(n) per edge: what `sequence` decides
    without its O(n · N) grid, for long sets and for simulation. `finite` False takes the set as
    infinite (the with-replacement form, for comparison)."""
    x = np.asarray(outcomes, dtype=float)
    threshold = math.log(1 / alpha)
    population = total if finite else None
    sums = np.cumsum(x, axis=-1)
    left = total - np.arange(1, x.shape[-1] + 1)
    floor, ceiling = (sums - left) / total, (sums + left) / total
    below = math.floor(-margin_pp / 100 * total + 1e-9)  # the largest Δ (× N) at or below −M
    worse = min(below, -1)  # the largest Δ (× N) that is worse at N

    def lower_out(d: float) -> np.ndarray:
        stat = np.maximum.accumulate(log_capital(x, population, d, bets), axis=-1) >= threshold
        return np.asarray(stat | (floor > d + 1e-12))

    def upper_out(d: float) -> np.ndarray:
        stat = np.maximum.accumulate(log_capital(-x, population, -d, bets), axis=-1) >= threshold
        return np.asarray(stat | (ceiling < d - 1e-12))

    return Crossings(
        lower_out(0.0),
        lower_out(below / total),
        upper_out(0.0),
        upper_out(1 / total),
        upper_out((worse + 1) / total),
        lower_out(-1 / total),
    )


def _statistics_bounds(x: np.ndarray, total: int | None, alpha: float, steps: int | None = None) -> tuple[int, int]:
    """The first and last multiples of 1/`steps` (× `steps`; default N) that neither test has
    ruled out after all of `x`, by a binary search (the values each test rules out are a ray);
    low > high: none left. `total` None: the stream form."""
    threshold = math.log(1 / alpha)
    grid = steps or total or STREAM_RESOLUTION

    def first_kept(sign: int) -> int:
        start, end = -grid, grid + 1  # the first j in [−G, G] not ruled out (G + 1 if none)
        while start < end:
            mid = (start + end) // 2
            out = log_capital(sign * x, total, mid / grid).max() >= threshold  # the upper test on −x at −d
            start, end = (mid + 1, end) if out else (start, mid)
        return start

    return first_kept(1), -first_kept(-1)


def look_at(outcomes: Sequence[int], total: int, *, margin_pp: float, candidates: int = 1) -> Look:
    """The look after all of `outcomes`, as `sequence` gives it, without its O(n · N) grid."""
    alpha = side_alpha(candidates)
    x = np.asarray(outcomes, dtype=float)
    partial = round(float(x.sum()))
    floor, ceiling = partial - (total - x.size), partial + (total - x.size)
    low, high = _statistics_bounds(x, total, alpha)
    by_statistics = low <= high and _settled(low / total, high / total, margin_pp)
    low, high = max(low, floor), min(high, ceiling)
    missed = low > high
    if missed:
        low, high = floor, ceiling
    settled = _settled(low / total, high / total, margin_pp)
    verdict = verdict_for(low / total * 100, high / total * 100, margin_pp)
    return Look(x.size, low / total, high / total, verdict, settled, settled and not by_statistics, missed)


def first_settled(outcomes: Sequence[int], total: int, *, margin_pp: float, candidates: int = 1) -> Look:
    """The first look at which the verdict settles (else the last look), as `sequence` gives it,
    for sets of any size. After a miss (chance ≤ 2α) it may give a later look than `sequence`."""
    if not outcomes:
        raise ValueError("no paired outcome yet")
    x = np.asarray(outcomes, dtype=float)
    settled = crossings(x, total, margin_pp, side_alpha(candidates)).settled()
    k = int(settled.argmax()) + 1 if settled.any() else x.size
    look = look_at(outcomes[:k], total, margin_pp=margin_pp, candidates=candidates)
    if look.settled and not look.missed:
        return look
    return look_at(outcomes, total, margin_pp=margin_pp, candidates=candidates)


@dataclass(frozen=True, slots=True)
class StreamLook:
    """The with-replacement sequence after `pairs` outcomes of an unbounded stream."""

    pairs: int
    low: float
    high: float
    verdict: Verdict
    """`decision.verdict_for` on the bounds; `inconclusive` is "not yet"."""
    alpha_side: float

    @property
    def sign_decided(self) -> bool:
        """Δ > 0 or Δ < 0 for good: the bound that crossed 0 stays crossed, whatever comes next
        (a "worse" can still turn "no worse" as the lower bound rises past −M)."""
        return self.low > 0 or self.high < 0


def stream_look(outcomes: Sequence[int], *, margin_pp: float, candidates: int = 1) -> StreamLook:
    """The anytime-valid bounds on the stream's mean Δ (candidate − baseline) after all of
    `outcomes`, in the order they came; valid however often it is looked at. No outcome yet:
    the whole range [−1, 1], inconclusive."""
    if any(o not in (-1, 0, 1) for o in outcomes):
        raise ValueError("paired outcomes are −1, 0 or +1")
    alpha = side_alpha(candidates)
    if not outcomes:
        return StreamLook(0, -1.0, 1.0, Verdict.INCONCLUSIVE, alpha)
    low, high = _statistics_bounds(np.asarray(outcomes, dtype=float), None, alpha, STREAM_RESOLUTION)
    if low > high:  # both tests ruled out every value: a miss (chance ≤ 2α); the point between
        low = high = (low + high) // 2
    low_share, high_share = low / STREAM_RESOLUTION, high / STREAM_RESOLUTION
    return StreamLook(
        len(outcomes), low_share, high_share, verdict_for(low_share * 100, high_share * 100, margin_pp), alpha
    )


def stream_rejections(outcomes: np.ndarray, null: float, alpha: float, bets: Sequence[float] = BETS) -> np.ndarray:
    """Per stream (leading axes): whether the lower test rejected H0: Δ ≤ `null` at any look, in
    O(n): what a simulation of the stream form's type-I error counts."""
    return np.asarray(log_capital(outcomes, None, null, bets).max(axis=-1) >= math.log(1 / alpha))
