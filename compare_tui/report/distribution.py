"""Latency distributions: each model's TTFT and end-to-end times as a histogram over bins
shared by every model of the report, plus the quantile function (an ECDF read sideways).

Computed once here, from the same values as the p50/p95/p99 (one value per completed task,
its passing attempt), and drawn by every surface: the HTML bundle's SVG plots, the TUI's
histograms, the JSON. Pure and deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BINS = 16
"""Histogram bins, shared across the models of one metric."""
QUANTILE_STEPS = 100
"""Quantiles at 0 %, 1 %, …, 100 % (linear interpolation, like the percentiles)."""
METRICS = (("ttft_ms", "Time to first token"), ("e2e_ms", "End-to-end time"))


@dataclass(frozen=True, slots=True)
class LatencySeries:
    """One model's distribution of one metric."""

    label: str
    n: int
    counts: tuple[int, ...]
    """Tasks per bin of the distribution's `edges` (empty when `n` is 0)."""
    quantiles: tuple[float, ...]
    """The value at 0 %, 1 %, …, 100 % of the tasks (empty when `n` is 0)."""


@dataclass(frozen=True, slots=True)
class LatencyDistribution:
    """One metric (`ttft_ms` or `e2e_ms`) for every shown model, on shared bins."""

    metric: str
    title: str
    edges: tuple[float, ...]
    """`BINS + 1` bin edges in milliseconds, lowest first (empty when no model has a value)."""
    series: tuple[LatencySeries, ...]


def _edges(values: Sequence[float]) -> tuple[float, ...]:
    if not values:
        return ()
    # Rounded outwards to the microsecond, so the edges as written cover every value.
    low, high = math.floor(min(values) * 1000) / 1000, math.ceil(max(values) * 1000) / 1000
    if high <= low:  # one value (or all equal): a bin of width 1 ms around it
        low, high = low - 0.5, high + 0.5
    inner = [round(float(e), 3) for e in np.linspace(low, high, BINS + 1)[1:-1]]
    return (low, *inner, high)


def _series(label: str, values: Sequence[float], edges: tuple[float, ...]) -> LatencySeries:
    if not values:
        return LatencySeries(label, 0, (), ())
    data = np.asarray(values, dtype=float)
    # The last bin is closed on the right (numpy's convention), so the maximum is counted.
    counts, _ = np.histogram(data, bins=np.asarray(edges, dtype=float))
    quantiles = np.percentile(data, np.linspace(0, 100, QUANTILE_STEPS + 1))
    return LatencySeries(
        label, int(data.size), tuple(int(c) for c in counts), tuple(round(float(q), 3) for q in quantiles)
    )


def latency_distributions(
    rows: Sequence[tuple[str, Sequence[float], Sequence[float]]],
) -> tuple[LatencyDistribution, ...]:
    """`rows` is (label, TTFT values, end-to-end values) per shown model; one distribution
    per metric, in `METRICS` order."""
    out = []
    for index, (metric, title) in enumerate(METRICS):
        per_model = [(label, list(values[index])) for label, *values in rows]
        edges = _edges([v for _, values in per_model for v in values])
        out.append(
            LatencyDistribution(
                metric, title, edges, tuple(_series(label, values, edges) for label, values in per_model)
            )
        )
    return tuple(out)
