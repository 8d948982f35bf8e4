"""Live progress of a run session, fed by engine events and read by the screen on a timer.

The engine calls `LiveTally.on_event` from its own thread, up to hundreds of times a second;
the Live screen calls `snapshot()` a few times a second and repaints only when `version`
moved. Events are never forwarded one by one to the UI. Pure Python: no Textual here.

The rolling figures are progress indicators over the latest attempts, not report figures
(the report computes its own, once, from the stored rows).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from compare_tui.engine.events import (
    AttemptFinished,
    ModelEvent,
    RunFinished,
    RunRefused,
    RunStarted,
    SequenceLooked,
    VerificationProgressed,
)
from compare_tui.report.sequential_run import evidence_words
from compare_tui.vocabulary import FINISHED_STATUSES, RunStatus


class ModelState(StrEnum):
    """Where one model of a session stands on the Live screen: before its run (waiting its
    turn, verifying its weights, refused), then its run's own status (`vocabulary.RunStatus`)."""

    WAITING = "waiting"
    VERIFYING = "verifying"
    REFUSED = "refused"
    RUNNING = RunStatus.RUNNING.value
    COMPLETED = RunStatus.COMPLETED.value
    INCOMPLETE = RunStatus.INCOMPLETE.value
    INTERRUPTED = RunStatus.INTERRUPTED.value
    SETTLED = RunStatus.SETTLED.value


ROLLING_ATTEMPTS = 100
"""TTFT and end-to-end medians are over this many latest attempts."""
RATE_WINDOW_S = 10.0
"""Tokens per second are over the completion tokens of this many latest seconds."""
RECENT_ERRORS = 4


@dataclass(frozen=True, slots=True)
class ModelView:
    """One model's progress as the screen shows it (an immutable copy)."""

    model_name: str
    run_id: str | None
    state: ModelState
    total: int
    done: int
    counts: dict[str, int]
    ttft_p50_ms: float | None
    e2e_p50_ms: float | None
    tokens_per_s: float | None
    """Completion tokens per second over the latest `RATE_WINDOW_S` (None when idle)."""
    run_tokens_per_s: float | None
    """Completion tokens per second over this session's part of the run so far (kept after it
    ends): the whole run, or only its part since the resume when `resumed_after` is not 0."""
    eta_s: float | None
    """Seconds until the run's last task, at the task rate seen so far (None until known)."""
    recent_errors: tuple[str, ...]
    detail: str
    """A line under the bar: provenance and estimate, verification progress, or the refusal."""
    gpu: str
    resumed_after: int = 0
    """Tasks an earlier process had finished when this session resumed the run (0: not resumed)."""
    evidence: str = ""
    """A candidate's confidence sequence after its latest look (`--stop-when-settled`), else ""."""


@dataclass
class _Model:
    name: str
    run_id: str | None = None
    state: ModelState = ModelState.WAITING
    total: int = 0
    done: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    ttft: deque[float] = field(default_factory=lambda: deque(maxlen=ROLLING_ATTEMPTS))
    e2e: deque[float] = field(default_factory=lambda: deque(maxlen=ROLLING_ATTEMPTS))
    tokens: deque[tuple[float, int]] = field(default_factory=deque)
    """(monotonic time, completion tokens) of the attempts in the rate window."""
    errors: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_ERRORS))
    detail: str = ""
    gpu: str = ""
    started: float | None = None
    """Clock time this session's run started (RunStarted)."""
    ended: float | None = None
    done_at_start: int = 0
    """Tasks already done when this session's run started (a resume)."""
    tokens_total: int = 0
    """Completion tokens of this session's run."""
    hashing: dict[str, bool] = field(default_factory=dict)
    """file → whether it is hashed, while the weights are verified."""
    evidence: str = ""


def eta_after(to_do: int) -> int:
    """Tasks that must finish before an ETA is shown (until then it says "estimating"). The first
    to finish are the quick ones (several run at once, and short answers end first): 3 of 11
    done in 3 s once gave "ETA 3 s" for a run that took 60 s. A third of the tasks, at least 3."""
    return max(3, -(-to_do // 3)) if to_do > 3 else max(1, to_do)


class LiveTally:
    """Thread-safe progress of the models of one session, in the order they will run."""

    def __init__(self, models: list[tuple[str, int, str]], clock: Callable[[], float] = time.monotonic) -> None:
        """`models`: (model name, task count, GPU line before the run) per model."""
        self._lock = threading.Lock()
        self._clock = clock
        self._models = {name: _Model(name, total=total, gpu=gpu) for name, total, gpu in models}
        self.version = 0
        """Moves on every change; the screen repaints only when it differs from the last paint."""

    def on_event(self, event: ModelEvent) -> None:
        with self._lock:
            model = self._models.get(event.model_name)
            if model is None:
                model = self._models[event.model_name] = _Model(event.model_name)
            self._apply(model, event)
            self.version += 1

    def set_gpu(self, model_name: str, text: str) -> None:
        """The GPU memory line of a model (adding the model when it is new)."""
        with self._lock:
            self._models.setdefault(model_name, _Model(model_name)).gpu = text
            self.version += 1

    def _apply(self, model: _Model, event: ModelEvent) -> None:
        if isinstance(event, VerificationProgressed):
            share = event.bytes_done / event.bytes_total if event.bytes_total else 1.0
            model.hashing[event.file] = share >= 1.0
            if all(model.hashing.values()):
                # Hashed: it only waits for the models before it (runs are one at a time).
                model.state = ModelState.WAITING
                files = len(model.hashing)
                model.detail = f"weights hashed ({files} file{'s' if files != 1 else ''}); waiting for its turn"
            else:
                model.state = ModelState.VERIFYING
                model.detail = f"hashing weights: {event.file} {share:.0%}"
        elif isinstance(event, RunStarted):
            # A new run starts from nothing; a resumed one from what the store had recorded.
            model.counts = Counter({k: v for k, v in event.prior_counts.items() if v})
            model.run_id, model.state = event.run_id, ModelState.RUNNING
            model.total, model.done = event.task_count, event.tasks_done
            model.started, model.ended = self._clock(), None
            model.done_at_start, model.tokens_total = event.tasks_done, 0
            resumed = f"; resumed after {event.tasks_done} done" if event.tasks_done else ""
            model.detail = f"{event.provenance}; estimate {event.estimate}{resumed}"
        elif isinstance(event, AttemptFinished):
            self._attempt(model, event)
        elif isinstance(event, RunFinished):
            model.state = ModelState(event.status) if event.status in FINISHED_STATUSES else ModelState.INTERRUPTED
            model.ended = self._clock()
            if event.error:
                model.detail = event.error
        elif isinstance(event, RunRefused):
            model.state, model.detail = ModelState.REFUSED, event.reason
        elif isinstance(event, SequenceLooked):
            model.evidence = evidence_words(
                event.tasks, event.total, event.low, event.high, event.verdict, event.settled
            )

    def _attempt(self, model: _Model, event: AttemptFinished) -> None:
        now = self._clock()
        if event.task_done:
            model.done += 1
            model.counts[event.outcome] += 1
        if event.ttft_ms is not None:
            model.ttft.append(event.ttft_ms)
        if event.e2e_ms is not None:
            model.e2e.append(event.e2e_ms)
        if event.completion_tokens:
            model.tokens.append((now, event.completion_tokens))
            model.tokens_total += event.completion_tokens
        while model.tokens and model.tokens[0][0] < now - RATE_WINDOW_S:
            model.tokens.popleft()
        if event.error:
            model.errors.append(f"{event.task_id} #{event.attempt}: {event.error}")

    def snapshot(self) -> tuple[ModelView, ...]:
        with self._lock:
            now = self._clock()
            return tuple(self._view(model, now) for model in self._models.values())

    def _view(self, m: _Model, now: float) -> ModelView:
        recent = [n for t, n in m.tokens if t >= now - RATE_WINDOW_S]
        if recent and m.tokens:
            span = max(now - m.tokens[0][0], 1.0)
            rate: float | None = sum(recent) / min(span, RATE_WINDOW_S)
        else:
            rate = None
        if m.state != ModelState.RUNNING:
            rate = None  # nothing is being generated now; the whole-run rate stays
        run_rate, eta = None, None
        if m.started is not None:
            elapsed = (m.ended if m.ended is not None else now) - m.started
            if elapsed > 0 and m.tokens_total:
                run_rate = m.tokens_total / elapsed
            finished = m.done - m.done_at_start
            if m.state == ModelState.RUNNING and finished >= eta_after(m.total - m.done_at_start) and elapsed > 0:
                eta = max(0, m.total - m.done) * elapsed / finished
        return ModelView(
            m.name,
            m.run_id,
            m.state,
            m.total,
            m.done,
            dict(m.counts),
            statistics.median(m.ttft) if m.ttft else None,
            statistics.median(m.e2e) if m.e2e else None,
            rate,
            run_rate,
            eta,
            tuple(m.errors),
            m.detail,
            m.gpu,
            m.done_at_start,
            m.evidence,
        )

    def run_ids(self) -> list[str]:
        with self._lock:
            return [m.run_id for m in self._models.values() if m.run_id]
