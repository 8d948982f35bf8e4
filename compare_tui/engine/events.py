"""What the engine tells its observers. The engine knows no UI: the CLI prints these with
Rich, the TUI bridges them to Textual messages, tests collect them in a list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from compare_tui.vocabulary import ModelKind, NotDone, Outcome, RunStatus


@dataclass(frozen=True, slots=True)
class RunRefused:
    model_name: str
    reason: str


@dataclass(frozen=True, slots=True)
class VerificationProgressed:
    model_name: str
    file: str
    bytes_done: int
    bytes_total: int


@dataclass(frozen=True, slots=True)
class ModelsResolved:
    """Every model of a session is in the catalogue and its endpoint answered; nothing is hashed
    or written yet. `kinds`: model name → catalogue kind (`local` or `hosted`), in run order."""

    kinds: dict[str, ModelKind]
    gpu_telemetry: dict[str, str] = field(default_factory=dict)
    """Model name → the DCGM exporter its GPU memory will be read from (`dcgm=HOST:PORT`), for
    the models not read by NVML on this machine."""


@dataclass(frozen=True, slots=True)
class BaselineChosen:
    """The baseline a new session's comparison records (`baseline`), and the workload's promoted
    baseline (`promoted`) when there is one, so an observer can say where the choice came from."""

    workload_id: str
    baseline: str | None
    promoted: str | None
    named: bool
    """True when the caller named the baseline; False when it came from the workload."""


@dataclass(frozen=True, slots=True)
class ModelsSkipped:
    """Before anything is prepared or sent: models of a new session left out because their spend
    estimate would exceed today's eval budget (`engine/budget.py`), each with the reason the
    comparison records, and the warning in one sentence."""

    skipped: dict[str, str]
    warning: str


@dataclass(frozen=True, slots=True)
class RunsPrepared:
    """Every model of a session passed its checks and has a run record; requests start now."""

    comparison_id: str | None
    run_ids: tuple[str, ...]
    interleaved: bool = False
    """A `--stop-when-settled` session (`engine.sequential`): the runs go at once, interleaved."""


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """The session is done with every run: `statuses` in run order (`pending` for a run it never
    started); `cancelled` when `cancel()` was called. A refused session ends with no statuses."""

    statuses: tuple[RunStatus, ...]
    cancelled: bool


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    model_name: str
    goldset_name: str
    task_count: int
    tasks_done: int
    """Tasks already finished by an earlier process (a resumed run)."""
    provenance: str
    estimate: str
    prior_counts: dict[str, int] = field(default_factory=dict)
    """Task outcomes (`pass`, `fail`, `review`, `error`) recorded before this execution (a resumed run)."""


@dataclass(frozen=True, slots=True)
class AttemptFinished:
    run_id: str
    model_name: str
    task_id: str
    attempt: int
    outcome: Outcome | NotDone
    task_done: bool
    """True when this attempt ended the task (passed, needs review, or was its last)."""
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    retries: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    run_id: str
    model_name: str
    status: RunStatus
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    gpu: dict[str, Any] | None = None
    """What the GPU sampler recorded for the run (`RunRecord.gpu`), as stored."""
    model_kind: ModelKind | None = None
    """The catalogue kind of the run's model (`local` or `hosted`)."""


@dataclass(frozen=True, slots=True)
class LeaseTakenOver:
    """A run's lease was held by a process that is gone; this session took it over."""

    run_id: str
    sentence: str
    """What happened, in words (who held it, why it was stale, requests left unknown)."""


@dataclass(frozen=True, slots=True)
class SequenceLooked:
    """A candidate's confidence sequence after a look of a `--stop-when-settled` comparison:
    the bounds of Δ (candidate − baseline, a share), the verdict they give, and whether it has
    settled (its requests stop)."""

    model_name: str
    tasks: int
    """Paired outcomes looked at (tasks in the recorded order)."""
    total: int
    """Tasks in the set: the sequence closes on the exact Δ there."""
    low: float
    high: float
    verdict: str
    settled: bool


ModelEvent = RunRefused | VerificationProgressed | RunStarted | AttemptFinished | RunFinished | SequenceLooked
"""The events about one model (each has `model_name`)."""
SessionEvent = ModelsResolved | BaselineChosen | ModelsSkipped | RunsPrepared | SessionEnded | LeaseTakenOver
"""The events about a whole session (`engine/session.py`)."""
EngineEvent = ModelEvent | SessionEvent


class RunObserver(Protocol):
    """Anything that wants to follow a run. Called on the engine's event loop thread: keep it
    quick, and hop threads yourself (the TUI posts a message)."""

    def on_event(self, event: EngineEvent) -> None: ...


class CollectingObserver:
    """Keeps every event; for tests and headless summaries."""

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []

    def on_event(self, event: EngineEvent) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[EngineEvent]:
        return [e for e in self.events if isinstance(e, kind)]
