"""The with-replacement form of the anytime-valid sequence (`report.sequential.stream_look`), for
an unbounded stream of paired outcomes (the canary's live traffic): its capital against an
independent transcription, its type-I error by simulation, nesting and the verdict's rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.report.decision import Verdict, verdict_for
from compare_tui.report.sequential import (
    BETS,
    STREAM_RESOLUTION,
    log_capital,
    side_alpha,
    stream_look,
    stream_rejections,
)


def reference_stream_capital(x: list[int], d: float) -> list[float]:
    """Step by step: data y = (x + 1) / 2 in [0, 1], null mean m = (d + 1) / 2 for every draw,
    positive bets λ = c / m, the capital's product mixed uniformly over the constant bets."""
    m = (d + 1) / 2
    capitals = [1.0] * len(BETS)
    out = []
    for value in ((v + 1) / 2 for v in x):
        for j, c in enumerate(BETS):
            capitals[j] *= 1 + (c / m) * (value - m)
        out.append(math.log(sum(capitals) / len(capitals)))
    return out


@pytest.mark.parametrize("d", [-0.3, 0.0, 0.2])
def test_the_stream_capital_matches_the_reference(d: float) -> None:
    x = list(np.random.default_rng(7).choice([-1, 0, 1], size=60))
    assert np.allclose(log_capital(np.array(x), None, d), reference_stream_capital(x, d))


@pytest.mark.parametrize(("p_up", "p_down"), [(0.25, 0.25), (0.0, 0.0), (0.1, 0.1), (0.45, 0.45)])
def test_the_type_one_error_over_a_long_watched_stream_is_at_most_alpha(p_up: float, p_down: float) -> None:
    # Δ = 0 exactly: any look at which "better" (H0: Δ ≤ 0 rejected) appears is a false alarm.
    alpha = side_alpha(1)
    rng = np.random.default_rng(2026)
    streams, looks = 600, 400
    draws = rng.random((streams, looks))
    outcomes = np.where(draws < p_up, 1, np.where(draws < p_up + p_down, -1, 0))
    rate = stream_rejections(outcomes, 0.0, alpha).mean()
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / streams)


def test_peeking_at_a_raw_delta_would_fail_where_the_sequence_holds() -> None:
    # The optional-stopping flaw the canary avoids: a two-sided 95 % z-test on the running mean,
    # looked at after every pair, calls a difference far more often than 5 % under Δ = 0.
    rng = np.random.default_rng(11)
    outcomes = rng.choice([-1, 0, 1], p=[0.25, 0.5, 0.25], size=(400, 400))
    n = np.arange(1, 401)
    means = np.cumsum(outcomes, axis=-1) / n
    sd = np.sqrt(np.maximum(np.cumsum(outcomes**2, axis=-1) / n - means**2, 1e-12))
    peeking = (np.abs(means) > 1.96 * sd / np.sqrt(n))[:, 10:].any(axis=-1).mean()
    ours = (stream_rejections(outcomes, 0.0, side_alpha(1)) | stream_rejections(-outcomes, 0.0, side_alpha(1))).mean()
    assert peeking > 0.2 and ours <= 0.05 + 0.033


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=80), st.sampled_from([0.0, 5.0, 20.0]))
def test_bounds_nest_as_pairs_arrive_and_the_verdict_follows_them(outcomes: list[int], margin: float) -> None:
    previous = stream_look([], margin_pp=margin)
    for k in range(1, len(outcomes) + 1):
        look = stream_look(outcomes[:k], margin_pp=margin)
        assert previous.low - 1e-12 <= look.low <= look.high <= previous.high + 1e-12
        assert look.verdict is verdict_for(look.low * 100, look.high * 100, margin)
        assert round(look.low * STREAM_RESOLUTION) == look.low * STREAM_RESOLUTION
        if previous.sign_decided:
            assert look.sign_decided and (look.low > 0) == (previous.low > 0)
        if previous.verdict is Verdict.BETTER:
            assert look.verdict is Verdict.BETTER
        previous = look


def test_thin_or_empty_evidence_says_not_yet() -> None:
    assert stream_look([], margin_pp=5).verdict is Verdict.INCONCLUSIVE
    assert stream_look([1, 1, 0], margin_pp=5).verdict is Verdict.INCONCLUSIVE


def test_a_clear_loser_is_worse_within_a_dozen_pairs_and_a_clear_winner_better() -> None:
    assert stream_look([-1] * 12, margin_pp=5).verdict is Verdict.WORSE
    assert stream_look([1] * 12, margin_pp=5).verdict is Verdict.BETTER
    assert stream_look([0] * 28, margin_pp=20).verdict is Verdict.NO_WORSE
    with pytest.raises(ValueError):
        stream_look([2], margin_pp=5)
