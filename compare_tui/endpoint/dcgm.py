"""A remote GPU's memory, read from NVIDIA's DCGM exporter (pure, apart from `read_dcgm`).

When the model is served on another host than the one compare-tui runs on, NVML here sees
nothing of it. The DCGM exporter on the serving host publishes Prometheus text (default port
9400) with each GPU's framebuffer use, `DCGM_FI_DEV_FB_USED` (MiB), labelled by `gpu` (its
index), `UUID`, `modelName` and `Hostname`. `--gpu-telemetry dcgm=HOST:PORT` (or the catalogue's
`[model.serving] gpu_telemetry`) names the exporter; `engine.gpu_dcgm.DcgmSampler` reads it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compare_tui.endpoint.prometheus import parse_exposition

if TYPE_CHECKING:
    import httpx

USED_METRIC = "DCGM_FI_DEV_FB_USED"
"""Framebuffer memory in use, MiB, per GPU: the figure nvidia-smi's `memory.used` shows."""
_MiB = 1 << 20
_SPEC = re.compile(r"^dcgm=(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?P<port>\d{1,5})$")


@dataclass(frozen=True, slots=True)
class GpuTelemetry:
    """Where a remote GPU's memory is read: a DCGM exporter at `host:port`."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    @property
    def spec(self) -> str:
        """As the user writes it: `dcgm=HOST:PORT`."""
        return f"dcgm={self.host}:{self.port}"


def parse_gpu_telemetry(spec: str) -> GpuTelemetry:
    """`dcgm=HOST:PORT` → a `GpuTelemetry`; ValueError saying what to write otherwise."""
    match = _SPEC.match(spec.strip())
    port = int(match.group("port")) if match else 0
    if match is None or not 0 < port < 65536:
        raise ValueError(
            f"GPU telemetry is written dcgm=HOST:PORT, the DCGM exporter serving the GPUs "
            f"(e.g. dcgm=gpu-box:9400), got {spec!r}"
        )
    return GpuTelemetry(match.group("host"), port)


@dataclass(frozen=True, slots=True)
class DcgmDevice:
    """One GPU as the exporter labels it, and its memory in use."""

    index: str
    uuid: str
    name: str
    hostname: str
    used_bytes: int


def dcgm_devices(text: str) -> list[DcgmDevice]:
    """Every GPU's memory in use in a DCGM exporter's exposition, in its order (one per UUID).
    ValueError when the text is not Prometheus exposition or holds no `DCGM_FI_DEV_FB_USED`."""
    devices: dict[str, DcgmDevice] = {}
    for sample in parse_exposition(text):
        if sample.name != USED_METRIC:
            continue
        if not math.isfinite(sample.value) or sample.value < 0:
            raise ValueError(f"{USED_METRIC} of GPU {sample.label('UUID')} is {sample.value}, not a size in MiB")
        uuid = sample.label("UUID") or f"gpu {sample.label('gpu')}"
        devices[uuid] = DcgmDevice(
            index=sample.label("gpu") or "",
            uuid=uuid,
            name=sample.label("modelName") or "",
            hostname=sample.label("Hostname") or "",
            used_bytes=round(sample.value * _MiB),
        )
    if not devices:
        raise ValueError(f"no {USED_METRIC} in the exposition: is this a DCGM exporter's /metrics?")
    return list(devices.values())


def read_dcgm(telemetry: GpuTelemetry, client: httpx.Client) -> list[DcgmDevice]:
    """One read of the exporter's `/metrics` through `client` (`endpoint.client.probe_client`).
    Raises httpx errors, or ValueError (see `dcgm_devices`) when the answer is not a DCGM
    exposition."""
    response = client.get(telemetry.url)
    response.raise_for_status()
    return dcgm_devices(response.text)
