"""vLLM's KV-cache use during a run, read beside the GPU memory figure and labelled as what it is.

vLLM reports on `GET /metrics` how full its KV cache is, `vllm:kv_cache_usage_perc` (a gauge,
0 to 1, per served model; the older `vllm:gpu_cache_usage_perc` was removed). It is the share
of the cache vLLM reserved at start-up that holds tokens, not device memory: vLLM reserves its
memory up front (`--gpu-memory-utilization`), so the device's use barely moves while this gauge
does. Read every `interval_s` between `start()` and `stop()` from one background thread, only for
a server the run's serving reading says is vLLM; the run keeps the first and highest readings.
Never raises into a run: a server that does not answer leaves the figure absent with the reason.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import TypedDict

import httpx

from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.client import probe_client
from compare_tui.endpoint.prometheus import VLLM_METRICS, parse_exposition

KV_CACHE_METRIC = "vllm:kv_cache_usage_perc"


def kv_cache_usage(text: str, model_id: str) -> float | None:
    """The KV cache's fill (0–1) for `model_id` in a metrics text (the only one when none is
    labelled with it); None when the text has no such gauge. ValueError on malformed text."""
    samples = [s for s in parse_exposition(text) if s.name == KV_CACHE_METRIC and math.isfinite(s.value)]
    mine = [s for s in samples if s.label("model_name") == model_id] or samples
    return max((s.value for s in mine), default=None)


class KvCacheRead(TypedDict):
    """What `KvCacheSampler.stop` read: the first and highest fill of vLLM's KV cache (0–1)."""

    source: str
    metric: str
    baseline: float | None
    peak: float
    samples: int


class KvCacheUnread(TypedDict):
    """`KvCacheSampler.stop` when the gauge was never read: why."""

    source: str
    metric: str
    reason: str


class KvCacheSampler:
    """Reads `vllm:kv_cache_usage_perc` from the server at `base_url` between start() and stop()."""

    def __init__(
        self, base_url: str, model_id: str, headers: Mapping[str, str] | None = None, *, interval_s: float = 0.5
    ) -> None:
        self.url = Endpoint(base_url).metrics_url
        self.model_id = model_id
        self.interval_s = interval_s
        self._headers = dict(headers or {})
        self._baseline: float | None = None
        self._peak: float | None = None
        self._samples = 0
        self._reason: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: httpx.Client | None = None

    def _read(self) -> None:
        assert self._client is not None
        response = self._client.get(self.url)
        response.raise_for_status()
        usage = kv_cache_usage(response.text, self.model_id)
        if usage is None:
            raise ValueError(f"no {KV_CACHE_METRIC} on the server's /metrics")
        self._baseline = usage if self._baseline is None else self._baseline
        self._peak = usage if self._peak is None else max(self._peak, usage)
        self._samples += 1

    def _try_read(self) -> bool:
        try:
            self._read()
        except (httpx.HTTPError, ValueError) as exc:
            self._reason = self._reason or f"{type(exc).__name__}: {exc}"
            return False
        return True

    def start(self) -> None:
        """The first reading, then the thread. Never raises."""
        self._client = probe_client(timeout_s=5.0, headers=self._headers)
        if self._try_read():
            self._thread = threading.Thread(target=self._loop, name="kv-cache-sampler", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._try_read()

    def stop(self) -> KvCacheRead | KvCacheUnread:
        """What was read, JSON-ready: the first and highest fill, or why there is none."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._try_read()
        if self._client is not None:
            self._client.close()
        if self._peak is None:
            return {"source": VLLM_METRICS, "metric": KV_CACHE_METRIC, "reason": self._reason or "not read"}
        return {
            "source": VLLM_METRICS,
            "metric": KV_CACHE_METRIC,
            "baseline": self._baseline,
            "peak": self._peak,
            "samples": self._samples,
        }
