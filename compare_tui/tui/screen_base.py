"""What every screen of the app shares: the workspace, navigation, and the one handler that
turns any worker failure into a notification (a worker never crashes the app)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.screen import Screen
from textual.worker import Worker, WorkerState

from compare_tui.tui.workspace import Workspace

if TYPE_CHECKING:
    from compare_tui.tui.engine_bridge import NewRunPlan, ResumePlan


class Navigator(Protocol):
    """The screen changes the app offers (implemented by `app.CompareApp`)."""

    workspace: Workspace

    def open_home(self) -> None: ...
    def open_new_run(self, set_path: str | None = None) -> None: ...
    def open_live(self, plan: NewRunPlan | ResumePlan) -> None: ...
    def open_report(self, ref: str) -> None: ...
    def open_task(self, run_ids: tuple[str, ...], task_id: str, task_ids: tuple[str, ...] = ()) -> None: ...
    def open_diff(self, run_a: str | None = None, run_b: str | None = None) -> None: ...
    def open_review(self, ref: str) -> None: ...
    def open_triage(self, judging: str = "latest", current: str | None = None) -> None: ...
    def open_experiments(self) -> None: ...
    def open_live_switches(self) -> None: ...
    def open_toolcall(self) -> None: ...
    def open_models(self, highlight: str | None = None) -> None: ...
    def open_help(self) -> None: ...


def failure_text(worker: Worker[Any]) -> str:
    error = worker.error
    what = f"{type(error).__name__}: {error}" if error is not None else "unknown error"
    return f"{worker.description or worker.name or 'a background task'} failed: {what}"


class CompareScreen(Screen[Any]):
    """Base of the app's screens (not a screen of its own)."""

    @property
    def nav(self) -> Navigator:
        return self.app  # type: ignore[return-value]

    @property
    def workspace(self) -> Workspace:
        return self.nav.workspace

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.app.notify(failure_text(event.worker), title="Error", severity="error", timeout=12)
            self.worker_failed(event.worker)

    def worker_failed(self, worker: Worker[Any]) -> None:
        """Hook: a screen resets what was waiting on `worker` (e.g. hides a loading indicator)."""
