"""What the engine tells its observers. The engine knows no UI: the CLI prints these with
Rich, the TUI bridges them to Textual messages, tests collect them in a list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


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
class RunStarted:
    run_id: str
    model_name: str
    goldset_name: str
    task_count: int
    tasks_done: int
    """Tasks already finished by an earlier process (a resumed run)."""
    provenance: str
    estimate: str


@dataclass(frozen=True, slots=True)
class AttemptFinished:
    run_id: str
    model_name: str
    task_id: str
    attempt: int
    outcome: str
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
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None


EngineEvent = RunRefused | VerificationProgressed | RunStarted | AttemptFinished | RunFinished


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
