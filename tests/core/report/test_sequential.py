"""The anytime-valid confidence sequence (report/sequential.py): validity, nesting, closing at N."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.report.decision import Verdict, verdict_for
from compare_tui.report.sequential import BETS, first_settled, log_capital, point_verdict, sequence, side_alpha


def reference_log_capital(x: list[int], total: int, d: float) -> list[float]:
    """An independent, step-by-step transcription of the without-replacement betting martingale
    (confseq's `betting_mart` with N: data in [0, 1], μ_t = (N m − S_{t−1}) / (N − (t − 1)),
    positive bets λ = c / μ_t), mixed uniformly over the same constant bets."""
    y = [(v + 1) / 2 for v in x]
    m = (d + 1) / 2
    out = []
    capitals = [1.0] * len(BETS)
    seen = 0.0
    for t, value in enumerate(y):
        mu = (total * m - seen) / (total - t)
        for j, c in enumerate(BETS):
            if mu <= 1e-12:  # every unseen value is 0 under m: a 0 says nothing, else m is ruled out
                capitals[j] *= 1.0 if value == 0 else math.inf
            else:
                capitals[j] *= 1 + (c / mu) * (value - mu)
        seen += value
        out.append(math.log(sum(capitals) / len(capitals)))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_capital_matches_the_reference_transcription(seed: int) -> None:
    rng = np.random.default_rng(seed)
    total = 40
    x = rng.choice([-1, 0, 1], size=30, p=[0.2, 0.5, 0.3]).tolist()
    for d in (-0.3, -0.05, 0.0, 0.1):
        mine = log_capital(np.array(x), total, d)
        assert mine == pytest.approx(reference_log_capital(x, total, d), rel=1e-9, abs=1e-9)


def _distinct_orders(population: list[int]) -> list[tuple[int, ...]]:
    return sorted(set(itertools.permutations(population)))


@pytest.mark.parametrize("alpha", [0.1, 0.2, 0.3])
@pytest.mark.parametrize("population", [[1] * 3 + [-1] * 3 + [0] * 3, [1] * 4 + [-1] * 2 + [0] * 3, [1] * 5 + [-1] * 4])
def test_type_one_error_is_at_most_alpha_over_every_order(population: list[int], alpha: float) -> None:
    """Exact, not simulated: over every order of a small set, the lower test of H0: Δ ≤ Δ_true
    ever reaching 1/α (at any look) happens in at most an α share of the orders."""
    total = len(population)
    delta = sum(population) / total
    orders = np.array(_distinct_orders(population))
    ever = (log_capital(orders, total, delta) >= math.log(1 / alpha)).any(axis=1)
    assert ever.mean() <= alpha
    # and the upper test, on −x
    ever_up = (log_capital(-orders, total, -delta) >= math.log(1 / alpha)).any(axis=1)
    assert ever_up.mean() <= alpha


def test_the_demo_sized_lead_settles_better_well_before_the_end() -> None:
    rng = np.random.default_rng(7)
    population = np.array([1] * 36 + [-1] * 2 + [0] * 26)  # +53 points on 64 tasks
    stops = []
    for _ in range(20):
        result = sequence(rng.permutation(population).tolist(), 64, margin_pp=5)
        assert result.verdict is Verdict.BETTER
        assert result.settled_at is not None
        stops.append(result.settled_at.tasks)
    assert np.mean(stops) < 64 * 0.6


def test_alpha_is_split_over_candidates_and_sides() -> None:
    assert side_alpha(1) == pytest.approx(0.025)
    assert side_alpha(5) == pytest.approx(0.005)
    population = [1] * 20 + [0] * 44
    one, five = sequence(population, 64, margin_pp=5), sequence(population, 64, margin_pp=5, candidates=5)
    assert one.settled_at is not None and five.settled_at is not None
    assert one.settled_at.tasks < five.settled_at.tasks


def test_curtailment_when_the_unseen_tasks_cannot_change_the_verdict() -> None:
    """Two of three tasks lost: Δ ≤ −1/3 whatever the third holds, so "worse" is settled at the
    second task by the set's certain range, before the statistics could show it."""
    for last in (-1, 0, 1):
        result = sequence([-1, -1, last], 3, margin_pp=5)
        first = result.settled_at
        assert first is not None and first.tasks == 2 and first.curtailed
        assert first.verdict is Verdict.WORSE and result.looks[-1].verdict is Verdict.WORSE
    # not settled while the remaining tasks could still change the verdict
    result = sequence([0] * 9 + [1], 10, margin_pp=20)
    look = result.looks[8]
    assert (look.low, look.high) == pytest.approx((-0.1, 0.1))
    assert not look.settled  # 0.1 would be better, 0 no worse


def test_rejects_what_is_not_a_paired_outcome() -> None:
    with pytest.raises(ValueError, match="no paired outcome"):
        sequence([], 10, margin_pp=5)
    with pytest.raises(ValueError, match="−1, 0 or \\+1"):
        sequence([2], 10, margin_pp=5)
    with pytest.raises(ValueError, match="from a set of"):
        sequence([1, 1, 1], 2, margin_pp=5)


streams = st.integers(min_value=1, max_value=40).flatmap(
    lambda total: st.tuples(
        st.just(total),
        st.lists(st.sampled_from([-1, 0, 1]), min_size=total, max_size=total),
        st.integers(min_value=1, max_value=total),
    )
)


@settings(max_examples=200, deadline=None)
@given(streams, st.sampled_from([0.0, 2.0, 5.0, 10.0]), st.integers(min_value=1, max_value=5))
def test_sequence_properties_over_random_streams(
    stream: tuple[int, list[int], int], margin_pp: float, candidates: int
) -> None:
    total, population, seen = stream
    full = sequence(population, total, margin_pp=margin_pp, candidates=candidates)
    # the final look closes on the set's exact Δ, whatever the order
    delta = sum(population) / total
    last = full.looks[-1]
    assert last.low == pytest.approx(delta) and last.high == pytest.approx(delta)
    assert last.verdict is point_verdict(delta, margin_pp) and last.settled
    previous = None
    for look in full.looks:
        assert look.low <= look.high
        # the verdict never contradicts the bounds
        assert look.verdict is verdict_for(look.low * 100, look.high * 100, margin_pp)
        # the bounds always hold every Δ the unseen tasks could still make... and only those
        partial = sum(population[: look.tasks])
        assert (partial - (total - look.tasks)) / total - 1e-12 <= look.low
        assert look.high <= (partial + (total - look.tasks)) / total + 1e-12
        if previous is not None and not look.missed:  # nested: a look never widens the sequence
            assert look.low >= previous.low - 1e-12 and look.high <= previous.high + 1e-12
        previous = look
    # a miss (chance ≤ 2α) is final: once every possible Δ is ruled out, it stays so
    missed = [look.missed for look in full.looks]
    assert missed == sorted(missed)
    settled = full.settled_at
    if settled is not None and not any(missed):  # once settled, no later look changes the verdict
        assert all(look.verdict is settled.verdict for look in full.looks[settled.tasks - 1 :])
    # a prefix is the same sequence: the looks do not depend on tasks not yet run
    prefix = sequence(population[:seen], total, margin_pp=margin_pp, candidates=candidates)
    assert prefix.looks == full.looks[:seen]


@settings(max_examples=150, deadline=None)
@given(streams, st.sampled_from([0.0, 5.0, 10.0]), st.integers(min_value=1, max_value=5))
def test_the_fast_first_settled_look_is_the_sequences(
    stream: tuple[int, list[int], int], margin_pp: float, candidates: int
) -> None:
    total, population, _ = stream
    full = sequence(population, total, margin_pp=margin_pp, candidates=candidates)
    fast = first_settled(population, total, margin_pp=margin_pp, candidates=candidates)
    if any(look.missed for look in full.looks):
        return  # after a miss (chance ≤ 2α) the fast path may report a later look
    assert fast == (full.settled_at or full.looks[-1])


def test_first_settled_on_a_long_set_is_quick_and_right() -> None:
    rng = np.random.default_rng(3)
    population = rng.permutation(np.array([1] * 2000 + [-1] * 1000 + [0] * 7000)).tolist()  # +10 points
    look = first_settled(population, 10_000, margin_pp=5)
    assert look.settled and look.verdict is Verdict.BETTER and look.tasks < 10_000
    assert look.low <= 0.1 <= look.high


@settings(max_examples=200, deadline=None)
@given(streams, st.floats(min_value=-1, max_value=1), st.floats(min_value=-1, max_value=1))
def test_the_capital_falls_as_the_null_rises_so_the_sequence_is_an_interval(
    stream: tuple[int, list[int], int], d1: float, d2: float
) -> None:
    """Every look's capital is non-increasing in d: the values the lower test rules out are
    everything below a point, which is what lets the bounds be found by search."""
    total, population, seen = stream
    low, high = sorted((d1, d2))
    x = np.array(population[:seen])
    below, above = log_capital(x, total, low), log_capital(x, total, high)
    assert np.all(below >= above - 1e-9)
