"""Cross-checks of compare_tui/report/stats.py against scipy and statsmodels.

Every interval the report labels 95 % is recomputed here by an independent route: the closed
forms against the libraries' own implementations, the score intervals by brute force (the
constrained maximum likelihood found numerically, the bounds by root finding), and the
power formula both against a direct implementation and by simulating the exact test.
scipy and statsmodels are dev dependencies: they are imported here, never from compare_tui/.
"""

from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from scipy.special import xlogy
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from compare_tui.report.power import tango_scores, tasks_needed, verdict_power
from compare_tui.report.stats import (
    Z95,
    bounded_mean_interval,
    mcnemar_exact,
    mean_interval,
    normal_quantile,
    paired_interval,
    proportion_interval,
    repeated_rate_interval,
    t_quantile_95,
    wilson_interval,
    win_rate_interval,
    z_for,
)

trials_and_successes = st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


# ------------------------------------------------------------------ Wilson


@given(trials_and_successes)
def test_wilson_matches_statsmodels(counts):
    successes, trials = counts
    low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    interval = wilson_interval(successes, trials)
    # statsmodels does not clip; at 0 or n its bound can be a rounding hair outside [0, 1].
    assert interval.low == pytest.approx(min(1.0, max(0.0, low)), abs=1e-12)
    assert interval.high == pytest.approx(min(1.0, max(0.0, high)), abs=1e-12)


@given(trials_and_successes)
def test_the_pass_rate_interval_matches_statsmodels_clopper_pearson(counts):
    successes, trials = counts
    low, high = proportion_confint(successes, trials, alpha=0.05, method="beta")
    interval = proportion_interval(successes, trials)
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)


# ------------------------------------------------------------------ exact McNemar


@given(st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 50), st.integers(0, 50))
def test_mcnemar_matches_statsmodels_and_scipy(only_a, only_b, both, neither):
    ours = mcnemar_exact(only_a, only_b)
    table = np.array([[both, only_a], [only_b, neither]])
    theirs = sm_mcnemar(table, exact=True).pvalue
    # Near the smallest doubles the two underflow differently (ours 1.0e-290 or 2.7e-300 where
    # scipy gives 0.0, both found by Hypothesis): no decision reads a p-value below 1e-250.
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-250)
    if only_a + only_b:
        binomial = stats.binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
        assert ours == pytest.approx(binomial, rel=1e-9, abs=1e-250)
    else:
        assert ours == 1.0


@pytest.mark.parametrize(
    ("only_a", "only_b"), [(0, 0), (5, 0), (12, 4), (30, 10), (0, 17), (250, 180), (4000, 3700), (9000, 8000)]
)
def test_mcnemar_known_cases_including_thousands_of_discordant_tasks(only_a, only_b):
    theirs = sm_mcnemar([[0, only_a], [only_b, 0]], exact=True).pvalue
    assert mcnemar_exact(only_a, only_b) == pytest.approx(theirs, rel=1e-9, abs=1e-300)


# ------------------------------------------------------------------ Student t


@pytest.mark.parametrize("df", range(1, 201))
def test_t_quantile_matches_scipy(df):
    assert t_quantile_95(df) == pytest.approx(stats.t.ppf(0.975, df), abs=1e-9)


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=60))
def test_mean_interval_matches_a_scipy_t_interval(values):
    data = np.asarray(values)
    mean, sem = float(data.mean()), float(stats.sem(data))
    if sem > 0:
        low, high = stats.t.interval(0.95, data.size - 1, loc=mean, scale=sem)
    else:
        low = high = mean
    interval = mean_interval(values)
    assert interval.low == pytest.approx(max(0.0, low), abs=1e-9)
    assert interval.high == pytest.approx(min(1.0, high), abs=1e-9)


def test_mean_interval_needs_three_values():
    assert mean_interval([]) is None
    assert mean_interval([0.5]) is None
    assert mean_interval([0.4, 0.6]) is None
    assert mean_interval([0.4, 0.5, 0.6]) is not None


# ------------------------------------------------------------------ paired difference (Tango)
#
# Brute force: for each Δ, the trinomial (only A, only B, ties) with p12 − p21 = Δ that best
# explains the counts is found numerically; T(Δ) = (b − c − nΔ) / sqrt(n(p12 + p21 − Δ²));
# the bounds are where T crosses ±z, bracketed on a grid of Δ and refined by brentq.


def constrained_only_b(b: int, c: int, t: int, delta: float) -> float:
    """The maximum-likelihood p21 (share of "only B") given p12 − p21 = Δ, found numerically."""
    low, high = max(0.0, -delta), (1.0 - delta) / 2

    def neg_log_likelihood(q: float) -> float:
        return -(xlogy(b, q + delta) + xlogy(c, q) + xlogy(t, 1.0 - 2.0 * q - delta))

    found = optimize.minimize_scalar(neg_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-14})
    # The maximum may sit on the boundary (a zero count), which "bounded" only approaches.
    return min([(neg_log_likelihood(low), low), (neg_log_likelihood(high), high), (found.fun, found.x)])[1]


def tango_statistic(b: int, c: int, t: int, delta: float) -> float:
    n = b + c + t
    p21 = constrained_only_b(b, c, t, delta)
    p12 = p21 + delta
    variance = n * (p12 + p21 - delta * delta)
    numerator = b - c - n * delta
    if variance <= 0:
        return math.copysign(math.inf, numerator) if numerator else 0.0
    return numerator / math.sqrt(variance)


def raw_tango(b: int, c: int, t: int, z: float = Z95, grid: int = 41) -> tuple[float, float]:
    """Tango's score interval before any reconciliation with the exact test."""
    n = b + c + t
    estimate = (b - c) / n
    eps = 1e-9

    def crossing(points: np.ndarray, target: float) -> float | None:
        # Walk away from the estimate; bracket the first grid step where T passes `target`.
        for near, far in itertools.pairwise(points):
            value = tango_statistic(b, c, t, far)
            if (value > target) if target > 0 else (value < target):
                return optimize.brentq(
                    lambda d: tango_statistic(b, c, t, d) - target, near, far, xtol=1e-14, rtol=1e-14
                )
        return None

    lower = crossing(np.linspace(estimate, -1 + eps, grid), z)
    upper = crossing(np.linspace(estimate, 1 - eps, grid), -z)
    return (-1.0 if lower is None else lower), (1.0 if upper is None else upper)


def check_against_brute_force(b: int, c: int, t: int) -> str:
    """Compare every bound the reconciliation left alone; return which case this was."""
    n = b + c + t
    raw_low, raw_high = raw_tango(b, c, t)
    got = paired_interval(b, c, t)
    rejects = mcnemar_exact(b, c) < 0.05
    raw_has_zero = raw_low <= 0.0 <= raw_high
    if rejects == (not raw_has_zero):
        assert got.low == pytest.approx(raw_low, abs=1e-7), (b, c, t)
        assert got.high == pytest.approx(raw_high, abs=1e-7), (b, c, t)
        return "unmoved"
    if not rejects:
        # Widened to reach zero on the side of zero; the far bound is Tango's own.
        if raw_low > 0:
            assert got.low == 0.0 and got.high == pytest.approx(raw_high, abs=1e-7), (b, c, t)
        else:
            assert got.high == 0.0 and got.low == pytest.approx(raw_low, abs=1e-7), (b, c, t)
        return "widened"
    # The exact test rejects but Tango reaches zero: the near bound stops just past zero.
    if b > c:
        assert got.low == pytest.approx(0.5 / n) and got.high == pytest.approx(raw_high, abs=1e-7)
    else:
        assert got.high == pytest.approx(-0.5 / n) and got.low == pytest.approx(raw_low, abs=1e-7)
    return "narrowed"


GRID = [
    (b, c, t) for b in (0, 1, 2, 3, 5, 8, 13, 30) for c in (0, 1, 2, 4, 9, 20) for t in (0, 3, 40, 300) if b + c + t
]


def test_paired_interval_matches_tango_by_brute_force_on_a_grid():
    cases = [check_against_brute_force(*counts) for counts in GRID]
    # The grid exercises both the plain Tango bounds and the widening to zero.
    assert cases.count("unmoved") > 100
    assert cases.count("widened") >= 8


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200), st.integers(0, 3000))
def test_paired_interval_matches_tango_by_brute_force(b, c, t):
    if b + c + t:
        check_against_brute_force(b, c, t)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 600), st.integers(0, 600), st.integers(0, 20_000))
def test_paired_interval_contains_the_estimate_and_agrees_with_the_exact_test(b, c, t):
    n = b + c + t
    if n == 0:
        assert paired_interval(b, c, t) is None
        return
    interval = paired_interval(b, c, t)
    assert -1.0 <= interval.low <= (b - c) / n <= interval.high <= 1.0
    assert (not interval.contains(0.0)) == (mcnemar_exact(b, c) < 0.05)


def test_paired_interval_examples_from_the_issue():
    assert "seed" not in inspect.signature(paired_interval).parameters
    five_nothing = paired_interval(5, 0, 95)
    assert five_nothing.contains(0.0) and five_nothing.low == 0.0
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625, abs=1e-15)
    twelve_four = paired_interval(12, 4, 84)
    assert twelve_four.contains(0.0)
    assert mcnemar_exact(12, 4) == pytest.approx(0.0768, abs=5e-5)
    # Deterministic: the same counts give the same interval, call after call.
    assert paired_interval(12, 4, 84) == twelve_four


# ------------------------------------------------------------------ win rate (ties count half)


def profiled_tie_share(w: int, t: int, l: int, theta: float) -> float:
    """The maximum-likelihood tie share given θ = P(win) + ½P(tie), found numerically."""
    top = 2 * min(theta, 1 - theta)

    def neg_log_likelihood(s: float) -> float:
        return -(xlogy(w, theta - s / 2) + xlogy(t, s) + xlogy(l, 1 - theta - s / 2))

    found = optimize.minimize_scalar(neg_log_likelihood, bounds=(0.0, top), method="bounded", options={"xatol": 1e-14})
    return min([(neg_log_likelihood(0.0), 0.0), (neg_log_likelihood(top), top), (found.fun, found.x)])[1]


def win_rate_score(w: int, t: int, l: int, theta: float) -> float:
    n = w + t + l
    s = profiled_tie_share(w, t, l, theta)
    p_win = theta - s / 2
    variance = p_win + s / 4 - theta * theta  # E[X²] − θ² for X ∈ {1, ½, 0}
    return ((w + t / 2) / n - theta) / math.sqrt(variance / n)


def check_win_rate_bounds(w: int, t: int, l: int) -> None:
    n = w + t + l
    interval = win_rate_interval(w, t, l)
    estimate = (w + t / 2) / n
    assert 0.0 <= interval.low <= estimate <= interval.high <= 1.0
    for bound, target in ((interval.low, Z95), (interval.high, -Z95)):
        if bound in (0.0, 1.0) or bound == estimate:
            continue  # clamped at the edge (all losses / all wins): no crossing to check
        assert win_rate_score(w, t, l, bound) == pytest.approx(target, abs=1e-5), (w, t, l, bound)


@given(trials_and_successes)
def test_win_rate_without_ties_is_wilson(counts):
    wins, n = counts
    ours, wilson = win_rate_interval(wins, 0, n - wins), wilson_interval(wins, n)
    assert ours.low == pytest.approx(wilson.low, abs=1e-9)
    assert ours.high == pytest.approx(wilson.high, abs=1e-9)


def test_win_rate_score_is_z_at_each_bound_on_a_grid():
    for w in (0, 1, 3, 10, 40):
        for t in (0, 1, 5, 30, 200):
            for l in (0, 1, 3, 10, 40):
                if w + t + l:
                    check_win_rate_bounds(w, t, l)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400), st.integers(1, 400), st.integers(0, 400))
def test_win_rate_score_is_z_at_each_bound(w, t, l):
    check_win_rate_bounds(w, t, l)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 1000), st.floats(0.3, 1.0), st.floats(0.0, 1.0))
def test_win_rate_with_many_ties_is_narrower_than_wilson(n, tie_share, win_share):
    t = min(n, max(1, math.ceil(tie_share * n)))
    w = round(win_share * (n - t))
    l = n - t - w
    assert t / n >= 0.3
    ours = win_rate_interval(w, t, l)
    low, high = proportion_confint(w + t / 2, n, alpha=0.05, method="wilson")
    assert ours.high - ours.low < high - low
    assert ours.low >= low - 1e-12 and ours.high <= high + 1e-12


# ------------------------------------------------------------------ normal quantile


@pytest.mark.parametrize("probability", [1e-9, 0.001, 0.025, 0.2, 0.5, 0.8, 0.975, 0.99, 1 - 1e-6])
def test_normal_quantile_matches_scipy(probability):
    assert normal_quantile(probability) == pytest.approx(stats.norm.ppf(probability), abs=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_the_bonferroni_z_matches_scipy(k):
    assert z_for(1 - 0.05 / k) == pytest.approx(stats.norm.ppf(1 - 0.025 / k), abs=1e-9)


# ------------------------------------------------------------------ mean over repeated runs

runs_strategy = st.integers(1, 80).flatmap(
    lambda tasks: st.lists(st.integers(0, tasks).map(lambda p: (p, tasks)), min_size=3, max_size=12)
)


@given(runs_strategy)
def test_repeated_rate_interval_joins_the_pooled_exact_and_the_t_interval(runs):
    interval = repeated_rate_interval(runs)
    passed, scored = sum(p for p, _ in runs), sum(s for _, s in runs)
    low, high = proportion_confint(passed, scored, alpha=0.05, method="beta")
    rates = np.array([p / s for p, s in runs])
    mean = float(rates.mean())
    assert 0.0 <= interval.low <= mean <= interval.high <= 1.0
    assert interval.low <= low + 1e-9 and interval.high >= high - 1e-9
    t_interval = mean_interval(list(rates))
    assert interval.low <= t_interval.low + 1e-12 and interval.high >= t_interval.high - 1e-12
    assert interval.high > interval.low  # never zero width


def test_repeated_rate_interval_needs_three_runs():
    assert repeated_rate_interval([(5, 10), (6, 10)]) is None
    assert repeated_rate_interval([(10, 10)] * 3).high == 1.0 > repeated_rate_interval([(10, 10)] * 3).low


@pytest.mark.parametrize("runs", [3, 10])
def test_deterministic_tasks_and_one_flaky_task_keep_the_label(runs):
    # 49 tasks that always pass and one that passes 90 % of runs: Student t covered 0.27 at N = 3.
    rng = np.random.default_rng(runs)
    truth = (49 + 0.9) / 50
    flaky = rng.random((2000, runs)) < 0.9
    hits = sum(repeated_rate_interval([(49 + int(f), 50) for f in row]).contains(truth) for row in flaky)
    assert hits / 2000 >= 0.95


# ------------------------------------------------------------------ bounded mean (grades)


@given(st.lists(st.integers(1, 5), min_size=3, max_size=200))
def test_bounded_mean_interval_is_ordered_within_the_scale_and_never_zero_width(grades):
    interval = bounded_mean_interval([float(g) for g in grades], (1.0, 5.0))
    mean = sum(grades) / len(grades)
    assert 1.0 <= interval.low <= mean <= interval.high <= 5.0
    assert interval.high - interval.low > 0.01


@given(st.lists(st.integers(-4, 4), min_size=3, max_size=200))
def test_bounded_mean_interval_of_paired_differences_is_ordered_and_never_zero_width(diffs):
    interval = bounded_mean_interval([float(d) for d in diffs], (-4.0, 4.0))
    mean = sum(diffs) / len(diffs)
    assert -4.0 <= interval.low <= mean <= interval.high <= 4.0
    assert interval.high - interval.low > 0.01


def test_bounded_mean_interval_is_agresti_coull_with_pseudo_values_and_a_t_quantile():
    # 0/1 data with 1.5 pseudo-values at each bound is an interval around (k + 1.5) / (n + 3),
    # with Student's t quantile on n − 1 degrees of freedom (scipy's, independently).
    data = [1.0] * 7 + [0.0] * 3
    centre = 8.5 / 13
    half = stats.t.ppf(0.975, 9) * math.sqrt(centre * (1 - centre) / 13)
    interval = bounded_mean_interval(data, (0.0, 1.0))
    assert interval.low == pytest.approx(centre - half) and interval.high == pytest.approx(centre + half)
    assert bounded_mean_interval([1.0, 1.0], (0.0, 1.0)) is None


# ------------------------------------------------------------------ power of the verdict's own test


def exact_mcnemar_rejects(only_a: np.ndarray, only_b: np.ndarray) -> np.ndarray:
    discordant = only_a + only_b
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(only_a, only_b), discordant, 0.5))
    return (discordant > 0) & (p < 0.05)


def exact_power(n: int, p10: float, p01: float) -> float:
    """The exact McNemar test's power to show A better (it rejects and A passed more of the
    discordant tasks) with n tasks, summed over every outcome (no noise)."""
    psi, total = p10 + p01, 0.0
    for m in range(n + 1):
        weight = stats.binom.pmf(m, n, psi)
        if weight < 1e-16:
            continue
        only_a = np.arange(m + 1)
        rejects = exact_mcnemar_rejects(only_a, m - only_a) & (2 * only_a > m)
        total += weight * stats.binom.pmf(only_a, m, p10 / psi)[rejects].sum()
    return total


SETTINGS = [(0.15, 0.05), (0.10, 0.02), (0.30, 0.20), (0.05, 0.00), (0.20, 0.10)]


@pytest.mark.parametrize(("p10", "p01"), SETTINGS)
@pytest.mark.parametrize("n", [6, 25, 80, 200])
def test_verdict_power_for_better_is_the_exact_mcnemar_power(p10, p01, n):
    got = verdict_power(n, p10, p01, margin=None)
    assert got == pytest.approx(exact_power(n, p10, p01), abs=1e-9)


@pytest.mark.parametrize(("p10", "p01", "margin"), [(0.1, 0.12, 0.05), (0.05, 0.05, 0.05), (0.2, 0.1, 0.1)])
@pytest.mark.parametrize("n", [5, 17, 40])
def test_verdict_power_for_no_worse_sums_the_report_s_own_interval(p10, p01, margin, n):
    # Brute force: every (b, c) through stats.paired_interval itself, weighted by scipy's trinomial.
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            interval = paired_interval(b, c, n - b - c)
            if interval.low > -margin:
                total += stats.multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
    assert verdict_power(n, p10, p01, margin=margin) == pytest.approx(total, abs=1e-9)


def test_tango_scores_are_the_interval_s_own():
    # The vectorised score crosses z exactly at the interval's lower bound.
    for b, c, t in [(5, 9, 30), (12, 3, 85), (0, 0, 40)]:
        n = b + c + t
        low = paired_interval(b, c, t).low
        if low > -1:
            near = tango_scores(np.array([b]), np.array([c]), n, low)[0]
            assert near == pytest.approx(Z95, abs=1e-6)


@pytest.mark.parametrize(
    ("p10", "p01", "margin", "level"),
    [(0.10, 0.12, 0.05, 0.95), (0.3, 0.2, None, 0.95), (0.2, 0.1, None, 1 - 0.05 / 3), (0.05, 0.05, 0.05, 0.95)],
)
def test_tasks_needed_gives_80_percent_power_by_simulating_the_report(p10, p01, margin, level):
    need = tasks_needed(p10, p01, margin=margin, level=level)
    n = need.tasks
    assert n is not None and 0.80 <= need.power <= 0.82
    assert verdict_power(n - 1, p10, p01, margin=margin, level=level) < 0.80
    rng = np.random.default_rng(36)
    draws = rng.multinomial(n, [p10, p01, 1 - p10 - p01], size=2000)
    memo: dict[tuple[int, int], bool] = {}
    shown = 0
    for b, c, t in draws.tolist():
        if (b, c) not in memo:
            interval = paired_interval(b, c, t, level)
            memo[(b, c)] = interval.low > (0.0 if margin is None else -margin)
        shown += memo[(b, c)]
    # 2000 draws: standard error ≈ 0.009 around 0.80.
    assert 0.77 <= shown / 2000 <= 0.84


def test_tasks_needed_is_out_of_reach_where_no_number_of_tasks_would_do():
    assert tasks_needed(0.1, 0.2, margin=None).tasks is None
    assert tasks_needed(0.1, 0.2, margin=0.1).tasks is None  # trails by the margin exactly
    assert "more than" in (tasks_needed(0.1001, 0.1, margin=None).reason or "")
    # Five tasks, all discordant one way: the exact test needs six (Connor said four).
    assert tasks_needed(1.0, 0.0, margin=None).tasks == 6
