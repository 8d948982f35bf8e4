"""The TUI's side of the engine: `TallyObserver` turns the core session's events
(`compare_tui.engine.session`) into the Live screen's `LiveTally` and a few milestone messages;
`ThreadEngineSession` runs the core session in this process (the default runs it in a child
process, `engine_process`). Nothing here decides anything about a run: the session reports
every step itself, refusals and verification progress included.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from compare_tui.engine import (
    EngineEvent,
    EngineSession,
    ModelsResolved,
    NewRunPlan,
    ResumePlan,
    RunFinished,
    RunRefused,
    RunsPrepared,
    SessionEnded,
    SessionPlan,
)
from compare_tui.engine.events import BaselineChosen, LeaseTakenOver, ModelsSkipped
from compare_tui.engine.gpu import nvml_unavailable
from compare_tui.report import formatting as fmt
from compare_tui.report.figures import gpu_memory
from compare_tui.report.sequential import look_at
from compare_tui.tui import messages
from compare_tui.tui.live_tally import LiveTally
from compare_tui.tui.workspace import Workspace
from compare_tui.vocabulary import ModelKind

__all__ = ["NewRunPlan", "ResumePlan", "TallyObserver", "ThreadEngineSession", "gpu_before_run"]


class TallyObserver:
    """The observer the TUI gives the engine: progress goes to the tally (read on a timer), and
    only a session's milestones become messages. Called on the engine's thread; `post` must be
    thread-safe (`post_message` is)."""

    def __init__(self, tally: LiveTally, post: Callable[[Message], object]) -> None:
        self.tally, self.post = tally, post
        self.comparison_id: str | None = None
        self.run_ids: tuple[str, ...] = ()
        self.ended = False

    def on_event(self, event: EngineEvent) -> None:
        if isinstance(event, ModelsResolved):
            for name, kind in event.kinds.items():
                telemetry = event.gpu_telemetry.get(name)
                if telemetry:
                    self.tally.set_gpu(
                        name, f"being read from {telemetry} by the engine; the peak shows when the run ends"
                    )
                    continue
                self.tally.set_gpu(name, gpu_before_run(kind, None if kind == ModelKind.HOSTED else nvml_unavailable()))
        elif isinstance(event, RunsPrepared):
            self.comparison_id, self.run_ids = event.comparison_id, event.run_ids
            self.post(messages.RunsPrepared(event.comparison_id, event.run_ids, event.interleaved))
        elif isinstance(event, SessionEnded):
            self.ended = True
            self.post(messages.SessionEnded(event.statuses, event.cancelled))
        elif isinstance(event, BaselineChosen):
            pass  # the comparison records it; the report shows it
        elif isinstance(event, LeaseTakenOver):
            self.post(messages.LeaseTakenOver(event.sentence))
        elif isinstance(event, ModelsSkipped):
            self.post(messages.ModelsSkipped(event.warning))
        else:
            self.tally.on_event(event)
            if isinstance(event, RunRefused):
                self.post(messages.SessionRefused(event.model_name, event.reason))
            elif isinstance(event, RunFinished):
                self.tally.set_gpu(event.model_name, fmt.gpu(gpu_memory(event.gpu, event.model_kind)))
                self.post(messages.RunEnded(event.model_name, event.run_id, event.status, event.error))


class ThreadEngineSession:
    """The core session in this process, for a worker thread: `run()` blocks, `cancel()` may be
    called from any thread. Same interface as `ProcessEngineSession`."""

    def __init__(
        self, workspace: Workspace, plan: SessionPlan, tally: LiveTally, post: Callable[[Message], object]
    ) -> None:
        self.observer = TallyObserver(tally, post)
        self.session = EngineSession(workspace.store, plan, workspace.catalogue_path, self.observer, stop_rule=look_at)

    @property
    def comparison_id(self) -> str | None:
        return self.session.comparison_id

    def cancel(self) -> None:
        self.session.cancel()

    def run(self) -> tuple[str, ...]:
        return self.session.run()


def gpu_before_run(kind: str, unavailable: str | None = None) -> str:
    """The GPU memory line while a run goes: the engine samples it and the report shows the
    peak, unless the model is hosted or `unavailable` says why nothing can be sampled here
    (`engine.gpu.nvml_unavailable`)."""
    if kind == ModelKind.HOSTED:
        return "n/a (hosted: the GPU is not on this machine)"
    if unavailable:
        return f"not measured ({unavailable})"
    return "being sampled by the engine; the peak shows when the run ends"
