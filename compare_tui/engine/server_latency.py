"""The server's own view of a run's latency, read beside the client's (the TTFT cross-check).

vLLM counts every request's time to first token and end-to-end latency in histograms on
`GET /metrics` (`vllm:time_to_first_token_seconds`, `vllm:e2e_request_latency_seconds`,
labelled with the served model name). A run reads them before its first request and after its
last (`read_histograms`); the difference is what the server counted for this run's requests
(`HistogramReading.since`), kept on the run's environment as `server_latency` and added up over
the run's executions (`merged`). The report turns it into the server's TTFT median beside the
client's (`report.server_latency`). llama.cpp needs none of this: it returns each request's own
`timings` in the answer, kept per attempt.

A scrape is a small GET of the server's metrics, not a model request: no tokens, no audit row.
Only a server whose reading at the run's start says vLLM is asked (a hosted provider is never
sent a GET for `/metrics` with the key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.account import StoredServerLatency, latest_reading
from compare_tui.endpoint.client import probe_client
from compare_tui.endpoint.prometheus import VLLM_METRICS, Histogram, histogram, parse_exposition

VLLM_TTFT = "vllm:time_to_first_token_seconds"
VLLM_E2E = "vllm:e2e_request_latency_seconds"
SCRAPE_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class HistogramReading:
    """The two histograms as one scrape found them (either may be missing)."""

    ttft: Histogram | None
    e2e: Histogram | None

    def since(self, before: HistogramReading) -> dict[str, Any] | None:
        """What the server counted between `before` and this reading, JSON-ready; None when
        there is no TTFT histogram in both or the server restarted in between."""
        if self.ttft is None or before.ttft is None:
            return None
        ttft = self.ttft.minus(before.ttft)
        if ttft is None:
            return None
        e2e = self.e2e.minus(before.e2e) if self.e2e is not None and before.e2e is not None else None
        return {"source": VLLM_METRICS, "ttft": ttft.as_dict(), "e2e": e2e.as_dict() if e2e is not None else None}


def serves_vllm(serving: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the run's latest serving reading says the server is vLLM."""
    latest = latest_reading(serving)
    return latest is not None and latest.stack == "vLLM"


def histograms_in(text: str, model_id: str) -> HistogramReading:
    """The two histograms for `model_id` in a metrics text (all models' when none is labelled)."""
    samples = parse_exposition(text)
    labelled = any(s.label("model_name") == model_id for s in samples)
    where = {"model_name": model_id} if labelled else None
    return HistogramReading(histogram(samples, VLLM_TTFT, where), histogram(samples, VLLM_E2E, where))


def read_histograms(
    base_url: str, model_id: str, headers: Mapping[str, str], *, transport: httpx.BaseTransport | None = None
) -> HistogramReading | None:
    """One scrape of the server's `/metrics`; None when it cannot be read or parsed (the
    cross-check is then absent, never guessed). Blocking: call it in a thread."""
    url = Endpoint(base_url).metrics_url
    try:
        with probe_client(timeout_s=SCRAPE_TIMEOUT_S, headers=headers, transport=transport) as client:
            response = client.get(url)
        if response.status_code != 200:
            return None
        return histograms_in(response.text, model_id)
    except (httpx.HTTPError, ValueError):
        return None


def merged(previous: Mapping[str, Any] | None, delta: Mapping[str, Any], answered: int) -> dict[str, Any]:
    """`previous` (an earlier execution's `server_latency`) plus this execution's `delta`, with
    the requests of the run the server answered while it counted (`requests_answered`)."""
    out = {**delta, "requests_answered": answered, "executions": 1}
    earlier = StoredServerLatency.from_stored(previous) if previous else None
    now = StoredServerLatency.from_stored(delta)
    if earlier is None or now is None:
        return out
    for key, a, b in (("ttft", earlier.ttft, now.ttft), ("e2e", earlier.e2e, now.e2e)):
        total = b.plus(a) if a is not None and b is not None else None
        out[key] = total.as_dict() if total is not None else None
    out["requests_answered"] = answered + earlier.requests_answered
    out["executions"] = 1 + earlier.executions
    return out
