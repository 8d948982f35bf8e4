"""A server's Prometheus text (`GET /metrics`) read into samples, and latency histograms from it
(pure).

vLLM exports its own view of every request's latency as cumulative histograms
(`vllm:time_to_first_token_seconds`, `vllm:e2e_request_latency_seconds`: `_bucket{le=…}`,
`_sum`, `_count`). Read once before a run and once after, the difference is the histogram of
that run's requests alone (when nothing else used the server meanwhile). Its median can only be
*estimated*: the server counts requests per bucket, not their times. `quantile` estimates it the
way Prometheus's `histogram_quantile` does (linear within the bucket holding the rank) and also
returns that bucket's bounds: the true quantile of the counted requests lies between them, so
the estimate's error is at most the bucket's width.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

VLLM_METRICS = "vLLM /metrics"
"""The `source` a run's recorded server latency names when it came from vLLM's histograms
(written by `engine.server_latency`, read by `report.server_latency`)."""
_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*$", re.DOTALL)
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_UNESCAPE = {"\\": "\\", '"': '"', "n": "\n"}


@dataclass(frozen=True, slots=True)
class Sample:
    """One line of the exposition: a metric name, its labels and its value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _UNESCAPE.get(m.group(1), "\\" + m.group(1)), value)


def parse_value(text: str) -> float:
    """A sample value: a float, `+Inf`, `-Inf` or `NaN` (ValueError otherwise)."""
    lowered = text.lower()
    if lowered in ("+inf", "inf"):
        return math.inf
    if lowered == "-inf":
        return -math.inf
    return float(text)


def parse_labels(text: str) -> tuple[tuple[str, str], ...]:
    """`a="x",b="y\\"z"` → (("a", "x"), ("b", 'y"z')); ValueError on anything else."""
    out: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None:
            raise ValueError(f'labels are not name="value" pairs at {text[position:][:40]!r}')
        out.append((match.group(1), _unescape(match.group(2))))
        position = match.end()
    return tuple(out)


def parse_exposition(text: str) -> list[Sample]:
    """Every sample in a Prometheus text exposition, in order. Comments (`# HELP`, `# TYPE`) and
    blank lines are skipped; a line that is not a sample raises ValueError naming its number."""
    samples = []
    # Lines end at "\n" alone: `splitlines` would also split inside a label value (at \x1e, \x85…).
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip(" \t\r")
        if not stripped or stripped.startswith("#"):
            continue
        match = _SAMPLE.match(stripped)
        try:
            if match is None:
                raise ValueError("not `name{labels} value`")
            labels = parse_labels(match.group(2)) if match.group(2) else ()
            samples.append(Sample(match.group(1), labels, parse_value(match.group(3))))
        except ValueError as exc:
            raise ValueError(f"metrics line {number}: {exc}: {stripped[:120]!r}") from None
    return samples


@dataclass(frozen=True, slots=True)
class Histogram:
    """A cumulative histogram: `buckets` are (upper bound, requests at or under it), bounds
    rising, the last `+Inf` (its count is the total)."""

    buckets: tuple[tuple[float, float], ...]
    sum: float = 0.0

    @property
    def count(self) -> float:
        return self.buckets[-1][1] if self.buckets else 0.0

    def minus(self, before: Histogram) -> Histogram | None:
        """The requests counted since `before`; None when the two do not share their buckets or a
        count went down (the server restarted in between: the difference means nothing)."""
        if [b for b, _ in before.buckets] != [b for b, _ in self.buckets]:
            return None if before.buckets else self
        delta = tuple((bound, now - then) for (bound, now), (_, then) in zip(self.buckets, before.buckets, strict=True))
        if any(count < 0 for _, count in delta):
            return None
        return Histogram(delta, self.sum - before.sum)

    def plus(self, other: Histogram) -> Histogram | None:
        """Both histograms' requests together; None when their buckets differ."""
        if [b for b, _ in other.buckets] != [b for b, _ in self.buckets]:
            return None
        summed = tuple((bound, a + b) for (bound, a), (_, b) in zip(self.buckets, other.buckets, strict=True))
        return Histogram(summed, self.sum + other.sum)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (`+Inf` written as the string "+Inf")."""
        return {"buckets": [["+Inf" if math.isinf(b) else b, c] for b, c in self.buckets], "sum": self.sum}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Histogram:
        raw = data.get("buckets")
        buckets = tuple((parse_value(str(b)), float(c)) for b, c in raw) if isinstance(raw, list) else ()
        total = data.get("sum")
        return cls(buckets, float(total) if isinstance(total, (int, float)) else 0.0)


def histogram(samples: Iterable[Sample], name: str, where: Mapping[str, str] | None = None) -> Histogram | None:
    """The histogram `name` (its `_bucket` and `_sum` samples) over every label set matching
    `where`, summed per bound; None when the exposition has no such buckets."""
    where = where or {}
    by_bound: dict[float, float] = {}
    total = 0.0
    for sample in samples:
        if any(sample.label(k) != v for k, v in where.items()):
            continue
        if sample.name == f"{name}_bucket":
            bound = sample.label("le")
            if bound is None:
                continue
            key = parse_value(bound)
            by_bound[key] = by_bound.get(key, 0.0) + sample.value
        elif sample.name == f"{name}_sum":
            total += sample.value
    if not by_bound or math.inf not in by_bound:
        return None
    return Histogram(tuple(sorted(by_bound.items())), total)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A quantile estimated from a histogram, and the bucket the true one lies in."""

    value: float
    lower: float
    upper: float
    """The bucket's bounds (`upper` is +Inf when the rank fell in the last, open bucket; then
    `value` is its lower bound, as Prometheus answers)."""


def quantile(hist: Histogram, q: float) -> Estimate | None:
    """Prometheus's `histogram_quantile(q)`: the bucket whose cumulative count first reaches
    `q × count`, interpolated linearly inside it (the first bucket starts at 0); None for an
    empty histogram or a q outside [0, 1]."""
    if not 0.0 <= q <= 1.0 or hist.count <= 0:
        return None
    rank = q * hist.count
    lower, below = 0.0, 0.0
    for upper, cumulative in hist.buckets:
        if cumulative >= rank and cumulative > below:
            if math.isinf(upper):
                return Estimate(lower, lower, upper)
            start = min(lower, upper) if lower > 0 else (0.0 if upper > 0 else upper)
            fraction = (rank - below) / (cumulative - below)
            return Estimate(start + (upper - start) * fraction, start, upper)
        lower, below = upper, max(below, cumulative)
    return None
