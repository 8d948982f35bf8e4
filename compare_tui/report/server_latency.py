"""The TTFT cross-check: the server's own time to first token beside the client's, per run (pure).

The client's TTFT runs from sending the request to the first token arriving; a server's own
figure starts when it has the request. On loopback the two differ by the HTTP exchange, the chat
template and tokenization: milliseconds to tens of milliseconds. A larger gap means the client
measured waiting that the server did not see (requests queued in the client or a gateway, a
client slowed by its own load, a network between them), and then the report's TTFT is the
client's latency, not the model server's.

Two sources:
- vLLM: its `/metrics` histograms read before and after the run (`engine.server_latency`): the
  requests' mean is exact (the histogram's sum over its count); the median only estimated, and
  only known to lie in its bucket (vLLM's TTFT buckets are 0.1–0.25 s, 0.25–0.5 s, …).
- llama.cpp: each answer's own `timings.prompt_ms` (the prompt's processing until the first
  token is ready), per request; it leaves out any wait for a free slot.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.endpoint.prometheus import VLLM_METRICS, Histogram, quantile
from compare_tui.report.caveats import Caveat
from compare_tui.report.formatting import number
from compare_tui.report.inputs import AttemptFacts

LARGE_MS = 50.0
"""A gap between the client's and the server's mean TTFT is large past this many milliseconds..."""
LARGE_FRACTION = 0.25
"""...and past this fraction of the client's mean (a slow model's TTFT of seconds may differ by
more than 50 ms for reasons that do not change what it means)."""
VLLM = VLLM_METRICS
LLAMA = "llama.cpp timings"


@dataclass(frozen=True, slots=True)
class LatencyCrossCheck:
    """One run's TTFT as its server counted it, beside the client's."""

    run_id: str
    label: str
    source: str
    """`vLLM /metrics` or `llama.cpp timings`."""
    requests: int
    """Requests the server's figures cover."""
    server_p50_ms: float
    server_bucket_ms: tuple[float, float] | None
    """vLLM: the histogram bucket the true median lies in (the estimate's error is at most its
    width); None for llama.cpp, whose median is exact."""
    server_mean_ms: float
    client_p50_ms: float
    client_mean_ms: float
    other_requests: int = 0
    """vLLM: requests the server counted beyond the run's own (another client shared it)."""

    @property
    def difference_ms(self) -> float:
        """The client's mean TTFT minus the server's (both exact)."""
        return self.client_mean_ms - self.server_mean_ms

    @property
    def large(self) -> bool:
        return abs(self.difference_ms) > max(LARGE_MS, LARGE_FRACTION * self.client_mean_ms)

    def line(self) -> str:
        """`m, every request (not only the completed tasks above): server-side TTFT (vLLM /metrics,
        18 requests) p50 ≈ 142 ms (in 100–250 ms), mean 131 ms; client p50 …; client − server (means) …`

        It says whose requests it covers: the latency table beside it counts one value per
        completed task, so its client TTFT p50 differs from this line's whenever a task failed."""
        bucket = (
            f" (in {self.server_bucket_ms[0]:.0f}–{self.server_bucket_ms[1]:.0f} ms)"
            if self.server_bucket_ms is not None
            else ""
        )
        approx = "≈ " if self.server_bucket_ms is not None else ""
        return (
            f"{self.label}, every request (not only the completed tasks above): server-side TTFT "
            f"({self.source}, {self.requests} requests) p50 {approx}{self.server_p50_ms:.0f} ms{bucket}, mean "
            f"{self.server_mean_ms:.0f} ms; client p50 {self.client_p50_ms:.0f} ms, mean {self.client_mean_ms:.0f} ms; "
            f"client − server (means) {number(self.difference_ms, '+.0f')} ms"
        )


def cross_check(
    run_id: str, label: str, environment: Mapping[str, Any], attempts: Sequence[AttemptFacts]
) -> LatencyCrossCheck | None:
    """The run's cross-check from what it stored; None when its server reported nothing usable."""
    client = [a.ttft_ms for a in attempts if a.ttft_ms is not None]
    recorded = environment.get("server_latency")
    if isinstance(recorded, Mapping) and recorded.get("source") == VLLM and client:
        return _from_vllm(run_id, label, recorded, client)
    pairs = [(a.ttft_ms, a.server_ttft_ms) for a in attempts if a.ttft_ms is not None and a.server_ttft_ms is not None]
    if not pairs:
        return None
    ours, theirs = [c for c, _ in pairs], [s for _, s in pairs]
    return LatencyCrossCheck(
        run_id,
        label,
        LLAMA,
        len(pairs),
        statistics.median(theirs),
        None,
        statistics.fmean(theirs),
        statistics.median(ours),
        statistics.fmean(ours),
    )


def _from_vllm(run_id: str, label: str, recorded: Mapping[str, Any], client: list[float]) -> LatencyCrossCheck | None:
    raw = recorded.get("ttft")
    if not isinstance(raw, Mapping):
        return None
    hist = Histogram.from_dict(raw)
    median = quantile(hist, 0.5)
    if median is None or hist.count <= 0:
        return None
    answered = int(recorded.get("requests_answered") or 0)
    return LatencyCrossCheck(
        run_id,
        label,
        VLLM,
        int(hist.count),
        median.value * 1000,
        (median.lower * 1000, median.upper * 1000),
        hist.sum / hist.count * 1000,
        statistics.median(client),
        statistics.fmean(client),
        other_requests=max(0, int(hist.count) - answered),
    )


def cross_check_caveats(check: LatencyCrossCheck) -> list[Caveat]:
    """A caveat when the client's TTFT is far from the server's, or another client shared it."""
    out = []
    if check.large:
        out.append(
            Caveat(
                "ttft_cross_check",
                f"{check.label}'s mean TTFT as the client measured it ({check.client_mean_ms:.0f} ms) differs from "
                f"the server's own ({check.server_mean_ms:.0f} ms, {check.source}) by {number(check.difference_ms, '+.0f')} ms, "
                f"more than {LARGE_MS:.0f} ms and {LARGE_FRACTION:.0%} of the client's: the client's TTFT includes "
                f"time the server did not spend on the request ({_waits(check.source)}), so read it as the "
                "latency a client sees, not the model's own",
            )
        )
    if check.other_requests:
        out.append(
            Caveat(
                "ttft_cross_check_shared",
                f"{check.label}'s server counted {check.other_requests} requests besides the run's own while it "
                "ran (another client used it): its server-side latency figures are not this run's alone",
            )
        )
    return out


def _waits(source: str) -> str:
    """Where the time the server did not count may have gone, by what counted it."""
    common = "queued in the client or a gateway, a busy client, a network between them"
    if source == LLAMA:
        # `prompt_ms` starts when a slot takes the request: a run whose concurrency exceeds the
        # server's slots waits for a free one, and that wait is in the client's figure only.
        return f"waiting for a free server slot when the run's concurrency exceeds the server's slots; {common}"
    return common
