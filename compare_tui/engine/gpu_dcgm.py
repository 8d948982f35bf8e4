"""GPU memory high-water mark of a remote serving host, read from its DCGM exporter.

The same figure as `gpu.GpuSampler` (docs/measurement.md §4): device-wide memory in use, the
reading at `start()` as baseline, the highest reading until `stop()` as peak, read every
`interval_s` from one background thread. The devices are every GPU the exporter lists, each
named by UUID and host label. The exporter itself refreshes its readings on its own interval
(DCGM's default is 30 s; `dcgm-exporter -c 1000` reads every second), so a peak shorter than
that is missed whatever this sampler's interval: the report's scope caveat says so.

Like the NVML sampler it never raises into a run: an exporter that does not answer, or answers
something other than DCGM exposition, gives `measured=False` with the reason; a read that fails
mid-run is counted in a note and sampling goes on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import httpx

from compare_tui.endpoint.client import probe_client
from compare_tui.endpoint.dcgm import GpuTelemetry, parse_gpu_telemetry, read_dcgm
from compare_tui.engine.gpu import GpuDevice, GpuReport, GpuSampler, MemorySampler, reported, track
from compare_tui.vocabulary import GpuSource


def _why(telemetry: GpuTelemetry, exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return f"the DCGM exporter at {telemetry.host}:{telemetry.port} answered no GPU memory figures ({exc})"
    return f"the DCGM exporter at {telemetry.host}:{telemetry.port} did not answer ({type(exc).__name__}: {exc})"


@dataclass
class DcgmSampler:
    """Samples every GPU the exporter at `telemetry` lists, between start() and stop()."""

    telemetry: GpuTelemetry
    interval_s: float = 0.1
    timeout_s: float = 2.0
    _devices: dict[str, GpuDevice] = field(default_factory=dict, init=False)
    _samples: int = field(default=0, init=False)
    _failed: int = field(default=0, init=False)
    _first_failure: str | None = field(default=None, init=False)
    _reason: str | None = field(default="sampler was not started", init=False)
    _client: httpx.Client | None = field(default=None, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _report: GpuReport | None = field(default=None, init=False)

    def start(self) -> bool:
        """Read the baseline and start the thread. Returns whether memory is being measured;
        never raises."""
        if self._client is not None or self._report is not None:
            return self._reason is None
        self._client = probe_client(timeout_s=self.timeout_s)
        try:
            self._sample()
        except Exception as exc:  # noqa: BLE001 - any failure becomes a reason, never a crash
            self._reason = _why(self.telemetry, exc)
            return False
        self._reason = None
        self._thread = threading.Thread(target=self._loop, name="gpu-sampler", daemon=True)
        self._thread.start()
        return True

    def _sample(self) -> None:
        assert self._client is not None
        for gpu in read_dcgm(self.telemetry, self._client):
            device = self._devices.setdefault(
                gpu.uuid,
                {
                    "index": gpu.index,
                    "name": gpu.name,
                    "uuid": gpu.uuid,
                    "hostname": gpu.hostname,
                    "baseline_bytes": None,
                    "peak_bytes": None,
                },
            )
            track(device, gpu.used_bytes)
        self._samples += 1

    def _try_sample(self) -> None:
        try:
            self._sample()
        except Exception as exc:  # noqa: BLE001 - a remote read can fail once; keep sampling
            self._failed += 1
            self._first_failure = self._first_failure or _why(self.telemetry, exc)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._try_sample()

    def stop(self) -> GpuReport:
        """Stop sampling (one last read first) and return the report; later calls return the
        same report. Never raises."""
        if self._report is not None:
            return self._report
        self._stop.set()
        if self._thread is not None:
            self._thread.join(max(self.timeout_s + 1.0, 10 * self.interval_s))
            self._try_sample()  # the state at the end of the run counts toward the peak
        if self._client is not None:
            self._client.close()
        measured = self._reason is None
        notes = []
        if self._failed:
            notes.append(
                f"{self._failed} of {self._samples + self._failed} reads failed, the first: {self._first_failure}"
            )
        self._report = GpuReport(
            measured=measured,
            reason=self._reason,
            devices=[reported(d) for d in self._devices.values()] if measured else [],
            samples=self._samples,
            interval_s=self.interval_s,
            scope="device",
            notes=notes,
            source=GpuSource.DCGM,
            host=f"{self.telemetry.host}:{self.telemetry.port}",
        )
        return self._report


def memory_sampler(gpu_telemetry: str | None, interval_s: float = 0.1) -> MemorySampler:
    """The run's sampler: the DCGM exporter named by `gpu_telemetry` (`dcgm=HOST:PORT`, already
    validated by the catalogue or the command line), else NVML on this machine."""
    if gpu_telemetry:
        return DcgmSampler(parse_gpu_telemetry(gpu_telemetry), interval_s)
    return GpuSampler(interval_s)
