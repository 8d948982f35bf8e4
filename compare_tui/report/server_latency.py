"""The TTFT cross-check: the server's own time to first token beside the client's, per run (pure).

The client's TTFT runs from sending the request to the first token arriving; a server's own
figure starts when it has the request. On loopback the two differ by the HTTP exchange, the chat
template and tokenization: milliseconds to tens of milliseconds. A larger gap means the client
measured waiting that the server did not see (requests queued in the client or a gateway, a
client slowed by its own load, a network between them), and then the report's TTFT is the
client's latency, not the model server's.

Two sources, which measure different spans and are labelled so (`MEASURES`), never both
called "server-side TTFT":
- vLLM: its `/metrics` histograms read before and after the run (`engine.server_latency`): the
  span from the request's arrival at the server to its first token (its queue included). The
  requests' mean is exact (the histogram's sum over its count); the median only estimated, and
  only known to lie in its bucket (vLLM's TTFT buckets are 0.1–0.25 s, 0.25–0.5 s, …). An
  execution that was interrupted records none, so a resumed run's figure may cover only some
  of its executions: the line and a caveat say so (`executions`, `executions_total`).
- llama.cpp: each answer's own `timings.prompt_ms`, per request: the prompt's processing
  alone, from the moment a slot starts on it; the wait for a free slot and the request's time
  in the server before that (parsing, the chat template, tokenization, its turn in the
  server's batch loop beside the other slots' steps) are not in it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compare_tui.endpoint.account import StoredServerLatency
from compare_tui.endpoint.prometheus import VLLM_METRICS, quantile
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
MEASURES = {
    VLLM: "vLLM's own TTFT (arrival at the server to first token, its queue included)",
    LLAMA: "llama.cpp prompt processing (timings.prompt_ms: from a slot starting on the prompt; no queue)",
}
"""What each source's figure spans, as every surface names it."""


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
    executions: int = 1
    """vLLM: the run's executions whose requests the histograms cover (one that was interrupted
    recorded none)."""
    executions_total: int = 1
    """The run's executions in all (its first start and each resume)."""
    concurrency: int | None = None
    """The run's concurrency (requests in flight at once), when recorded."""
    slots: int | None = None
    """llama.cpp: the server's slots at the run's start, when it reported them."""

    @property
    def measure(self) -> str:
        """What the server's figure spans (`MEASURES`)."""
        return MEASURES.get(self.source, self.source)

    @property
    def partial(self) -> bool:
        """The server's figure covers fewer executions than the run had."""
        return self.executions < self.executions_total

    @property
    def difference_ms(self) -> float:
        """The client's mean TTFT minus the server's (both exact)."""
        return self.client_mean_ms - self.server_mean_ms

    @property
    def large(self) -> bool:
        return abs(self.difference_ms) > max(LARGE_MS, LARGE_FRACTION * self.client_mean_ms)

    def line(self) -> str:
        """`m, every request (not only the completed tasks above): vLLM's own TTFT (arrival at the
        server to first token, …) (vLLM /metrics, 18 requests) p50 ≈ 142 ms (in 100–250 ms), mean
        131 ms; client p50 …; client − server (means) …`

        It says whose requests it covers: the latency table beside it counts one value per
        completed task, so its client TTFT p50 differs from this line's whenever a task failed;
        and what the server's figure spans, which is not the same on the two stacks."""
        bucket = (
            f" (in {self.server_bucket_ms[0]:.0f}–{self.server_bucket_ms[1]:.0f} ms)"
            if self.server_bucket_ms is not None
            else ""
        )
        approx = "≈ " if self.server_bucket_ms is not None else ""
        partial = f", {self.executions} of the run's {self.executions_total} executions" if self.partial else ""
        return (
            f"{self.label}, every request (not only the completed tasks above): {self.measure} "
            f"({self.source}, {self.requests} requests{partial}) p50 {approx}{self.server_p50_ms:.0f} ms{bucket}, mean "
            f"{self.server_mean_ms:.0f} ms; client p50 {self.client_p50_ms:.0f} ms, mean {self.client_mean_ms:.0f} ms; "
            f"client − server (means) {number(self.difference_ms, '+.0f')} ms"
        )


def cross_check(
    run_id: str,
    label: str,
    environment: Mapping[str, Any],
    attempts: Sequence[AttemptFacts],
    *,
    concurrency: int | None = None,
    slots: int | None = None,
) -> LatencyCrossCheck | None:
    """The run's cross-check from what it stored; None when its server reported nothing usable.
    `concurrency` (the run's setting) and `slots` (the server's, from its reading) decide whether
    a llama.cpp gap can be a wait for a free slot."""
    client = [a.ttft_ms for a in attempts if a.ttft_ms is not None]
    recorded = StoredServerLatency.from_stored(environment.get("server_latency"))
    resumes = environment.get("resumes")
    total = 1 + (len(resumes) if isinstance(resumes, list) else 0)
    if recorded is not None and recorded.source == VLLM and client:
        check = _from_vllm(run_id, label, recorded, client)
        if check is None:
            return None
        return replace(
            check, executions=min(recorded.executions, total), executions_total=total, concurrency=concurrency
        )
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
        executions_total=total,
        executions=total,  # each answer carries its own timings: every execution is in it
        concurrency=concurrency,
        slots=slots,
    )


def _from_vllm(run_id: str, label: str, recorded: StoredServerLatency, client: list[float]) -> LatencyCrossCheck | None:
    hist = recorded.ttft
    if hist is None:
        return None
    median = quantile(hist, 0.5)
    if median is None or hist.count <= 0:
        return None
    answered = recorded.requests_answered
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
    """A caveat when the client's TTFT is far from the server's, when another client shared the
    server, and when the server's figure covers only some of a resumed run's executions."""
    out = []
    if check.large:
        out.append(
            Caveat(
                "ttft_cross_check",
                f"{check.label}'s mean TTFT as the client measured it ({check.client_mean_ms:.0f} ms) differs from "
                f"the server's figure ({check.server_mean_ms:.0f} ms, {check.measure}) by "
                f"{number(check.difference_ms, '+.0f')} ms, more than {LARGE_MS:.0f} ms and {LARGE_FRACTION:.0%} of "
                f"the client's: the client's TTFT includes time the server's figure does not count ({_waits(check)}), "
                "so read it as the latency a client sees, not the model's own",
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
    if check.partial:
        out.append(
            Caveat(
                "ttft_cross_check_partial",
                f"{check.label}'s vLLM figure covers {check.executions} of the run's {check.executions_total} "
                f"executions ({check.requests} requests): an execution that was interrupted records no histogram, "
                "so its requests are in the client's TTFT but not in the server's, and the two are over "
                "different requests",
            )
        )
    return out


def _waits(check: LatencyCrossCheck) -> str:
    """Where the time the server's figure did not count may have gone, by what counted it."""
    common = "queued in the client or a gateway, a busy client, a network between them"
    if check.source != LLAMA:
        return common
    # `prompt_ms` starts when a slot starts on the prompt. Only a run with more requests in
    # flight than the server has slots waits for a free one; at or under the slots the gap is
    # elsewhere: the server's own work before the slot starts (the template, tokenization, its
    # turn in the batch loop beside the other slots' decoding).
    server = (
        "the request's time in the server before a slot starts on its prompt (parsing, the chat template, "
        "tokenization, its turn in the batch loop beside the other slots' steps), which prompt_ms leaves out"
    )
    if check.concurrency is not None and check.slots is not None and check.concurrency <= check.slots:
        return (
            f"not a wait for a free slot: the run's concurrency {check.concurrency} is within the server's "
            f"{check.slots} slots; {server}; {common}"
        )
    if check.concurrency is not None and check.slots is not None:
        wait = (
            f"waiting for a free server slot (the run's concurrency {check.concurrency} exceeds the server's "
            f"{check.slots} slots)"
        )
    else:
        wait = "waiting for a free server slot, if the run's concurrency exceeded the server's slots"
    return f"{wait}; {server}; {common}"
