"""The report's statistics: known values, numpy agreement, and hypothesis properties."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compare_tui.report.stats import (
    mcnemar_exact,
    percentiles,
    proportion_interval,
    wilson_interval,
)

values = st.lists(st.floats(min_value=0, max_value=1e7, allow_nan=False), min_size=1, max_size=200)


# ------------------------------------------------------------------ Wilson


def test_wilson_known_values():
    interval = wilson_interval(8, 10)
    assert interval.low == pytest.approx(0.4901624, abs=1e-6)
    assert interval.high == pytest.approx(0.9433178, abs=1e-6)


def test_wilson_at_the_edges_stays_inside_zero_one():
    none = wilson_interval(0, 10)
    assert none.low == 0.0 and none.high == pytest.approx(0.2775328, abs=1e-6)
    every = wilson_interval(10, 10)
    assert every.high == 1.0 and every.low == pytest.approx(0.7224672, abs=1e-6)


def test_wilson_without_trials_is_none_and_bad_counts_raise():
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="within 0..3"):
        wilson_interval(4, 3)


@given(st.integers(min_value=1, max_value=100_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_bounds_within_unit_interval_and_contain_the_estimate(counts):
    successes, trials = counts
    interval = wilson_interval(successes, trials)
    assert 0.0 <= interval.low <= successes / trials <= interval.high <= 1.0


def test_the_pass_rate_interval_is_exact_clopper_pearson():
    # Known values (Clopper & Pearson 1934; also statsmodels' "beta" method).
    two = proportion_interval(2, 10)
    assert two.low == pytest.approx(0.0252107, abs=1e-6) and two.high == pytest.approx(0.5560955, abs=1e-6)
    none = proportion_interval(0, 10)
    assert none.low == 0.0 and none.high == pytest.approx(0.3084971, abs=1e-6)
    assert proportion_interval(10, 10).low == pytest.approx(0.6915029, abs=1e-6)
    assert proportion_interval(0, 0) is None
    with pytest.raises(ValueError, match="within 0..3"):
        proportion_interval(4, 3)


def _exact_coverage(n: int, p: float) -> float:
    return sum(
        math.comb(n, k) * p**k * (1 - p) ** (n - k)
        for k in range(n + 1)
        if (i := proportion_interval(k, n)).low <= p <= i.high
    )


@pytest.mark.parametrize("n", [5, 10, 19, 64])
@pytest.mark.parametrize("p", [0.01, 0.05, 0.3, 0.5, 0.9, 0.99])
def test_the_pass_rate_interval_covers_at_least_95_percent_exactly(n, p):
    # Summed over every outcome, no simulation: where Wilson covers 0.904 (n=10, p=0.01).
    assert _exact_coverage(n, p) >= 0.95


@given(st.integers(min_value=1, max_value=2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_pass_rate_interval_contains_the_estimate_and_mirrors(counts):
    successes, trials = counts
    exact = proportion_interval(successes, trials)
    assert 0.0 <= exact.low <= successes / trials <= exact.high <= 1.0
    mirror = proportion_interval(trials - successes, trials)
    assert mirror.low == pytest.approx(1 - exact.high, abs=1e-9) and mirror.high == pytest.approx(
        1 - exact.low, abs=1e-9
    )


# ------------------------------------------------------------------ percentiles


@given(values)
def test_percentiles_are_monotone_and_match_numpy(data):
    p = percentiles(data)
    assert p.n == len(data)
    assert p.p50 <= p.p95 <= p.p99
    expected = np.percentile(np.array(data), [50, 95, 99])
    assert (p.p50, p.p95, p.p99) == pytest.approx(tuple(expected))
    assert min(data) <= p.p50 and p.p99 <= max(data)


def test_percentiles_interpolate_linearly():
    p = percentiles([1.0, 2.0, 3.0, 4.0])
    assert p.p50 == 2.5
    assert p.p95 == pytest.approx(3.85)
    assert p.p99 == pytest.approx(3.97)


def test_percentiles_of_nothing_and_of_one_value():
    assert percentiles([]).n == 0 and percentiles([]).p50 is None
    one = percentiles([7.0])
    assert one.p50 == one.p95 == one.p99 == 7.0


# ------------------------------------------------------------------ McNemar


def _exact_reference(b: int, c: int) -> float:
    n = b + c
    tail = sum(Fraction(math.comb(n, k), 2**n) for k in range(min(b, c) + 1))
    return float(min(Fraction(1), 2 * tail))


def test_mcnemar_known_values():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(9, 4) == pytest.approx(0.266846, abs=1e-6)


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_matches_the_exact_binomial_sum(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(_exact_reference(b, c), rel=1e-9, abs=1e-300)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_with_thousands_of_discordant_tasks_neither_overflows_nor_underflows():
    p = mcnemar_exact(5_000, 5_100)
    assert 0.0 < p < 1.0
    assert p == pytest.approx(_exact_reference(5_000, 5_100), rel=1e-6)


def test_mcnemar_refuses_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)
