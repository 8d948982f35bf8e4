"""What `compare-tui sample` was asked for (`SampleOptions`): read by the pipeline and written
into the sampled set's description."""

from __future__ import annotations

from dataclasses import dataclass

from .window import DEFAULT_WINDOW


@dataclass(frozen=True)
class SampleOptions:
    """What `compare-tui sample` was asked for."""

    samples: int
    window: str = DEFAULT_WINDOW
    seed: str = "0"
    models: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    redact: tuple[str, ...] = ()
    now: str | None = None
    """ISO 8601 end of the window; None: the newest usable timestamp in the logs."""
    text_scorer: str = "human"
    workload_id: str = "sampled-traffic"
    tool_match: str | None = None
    """The `tool_call` scorer's argument match, `exact` or `subset`; None: `exact` for turns,
    `subset` for whole runs."""
