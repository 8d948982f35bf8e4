"""Live progress: the engine runs in one worker; this screen repaints from the tally a few
times a second (never once per attempt), so it stays responsive at any attempt rate."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static
from textual.worker import WorkerCancelled, WorkerFailed

from compare_tui.tui import messages
from compare_tui.tui.engine_bridge import NewRunPlan, ResumePlan, ThreadEngineSession
from compare_tui.tui.engine_process import ProcessEngineSession
from compare_tui.tui.live_tally import LiveTally
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.confirm import ConfirmScreen
from compare_tui.tui.screens.refusal import RefusalScreen
from compare_tui.tui.widgets.model_progress import ModelProgress
from compare_tui.vocabulary import RunStatus

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.worker import Worker

REPAINT_S = 0.25
RUN_STOP_TEXT = (
    "The run stops: attempts in flight finish, it is marked interrupted and keeps every "
    "finished attempt. Resume it later with r here, R on Home, or `compare-tui run --resume RUN_ID`."
)
"""What cancelling (or quitting during) a run does, as the confirmation says it."""


class LiveScreen(CompareScreen):
    CSS_PATH = "live.tcss"
    BINDINGS = [
        Binding("c", "cancel_run", "Cancel"),
        Binding("r", "resume", "Resume"),
        Binding("o", "report", "Report"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(
        self,
        plan: NewRunPlan | ResumePlan,
        *,
        session_factory: type[ThreadEngineSession] | type[ProcessEngineSession] = ProcessEngineSession,
    ) -> None:
        """`session_factory` builds the engine session: by default in a child process (see
        `engine_process`); `ThreadEngineSession` runs it in this process; tests inject a scripted one."""
        super().__init__()
        self.plan = plan
        self.session_factory = session_factory
        names = plan.model_names if isinstance(plan, NewRunPlan) else ()
        self.tally = LiveTally([(name, 0, "") for name in names])
        self.session: ThreadEngineSession | ProcessEngineSession | None = None
        self.running = False
        self.comparison_id: str | None = None
        self.run_ids: tuple[str, ...] = ()
        self.statuses: tuple[RunStatus, ...] = ()
        self._painted = -1

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="panels"):
            # Panels of the models known up front are built now, not in the middle of the run.
            for view in self.tally.snapshot():
                yield ModelProgress(view.model_name, id=_panel_id(view.model_name))
        yield Static("preparing: checking models and pins…", id="session-line", classes="status-line", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "live progress"
        self.set_interval(REPAINT_S, self._repaint)
        self._start(self.plan)

    def _start(self, plan: NewRunPlan | ResumePlan) -> None:
        self.session = self.session_factory(self.workspace, plan, self.tally, self.post_message)
        self.running = True
        self.run_engine(self.session)

    @work(thread=True, exit_on_error=False, group="engine", description="the run engine")
    def run_engine(self, session: ThreadEngineSession | ProcessEngineSession) -> None:
        session.run()

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.running = False
        self._line(
            "The engine stopped on an error (see the notification); every finished attempt is stored. r resumes."
        )

    # ------------------------------------------------------------------ repainting

    def _repaint(self) -> None:
        if self.tally.version == self._painted:
            return
        self._painted = self.tally.version
        panels = self.query_one("#panels", VerticalScroll)
        for view in self.tally.snapshot():
            key = _panel_id(view.model_name)
            found = panels.query(f"#{key}")
            if found:
                panel = found.first(ModelProgress)
                if panel.composed:
                    panel.show(view)
                else:  # mounted a moment ago (a model the session resumed beside): paint it next tick
                    self._painted = -1
            else:
                panel = ModelProgress(view.model_name, id=key)
                panels.mount(panel)
                self.call_after_refresh(panel.show, view)

    def _line(self, text: str) -> None:
        self.query_one("#session-line", Static).update(text)

    # ------------------------------------------------------------------ the session's milestones

    def on_runs_prepared(self, message: messages.RunsPrepared) -> None:
        self.workspace.edits += 1  # new runs exist: lists elsewhere read them again
        self.comparison_id = message.comparison_id
        self.run_ids = message.run_ids
        runs = len(message.run_ids)
        how = "interleaved, until settled" if message.interleaved else "one model at a time"
        self._line(f"running {runs} run{'s' if runs != 1 else ''}, {how} · c cancels (resumable) · o report")

    def on_run_ended(self, message: messages.RunEnded) -> None:
        done = message.status in (RunStatus.COMPLETED, RunStatus.SETTLED)
        severity: SeverityLevel = "information" if done else "warning"
        self.notify(f"{message.model_name}: run {message.run_id[:8]} {message.status}", severity=severity)

    def on_lease_taken_over(self, message: messages.LeaseTakenOver) -> None:
        self.notify(message.sentence[:1].upper() + message.sentence[1:], severity="warning")

    def on_models_skipped(self, message: messages.ModelsSkipped) -> None:
        self.notify(message.warning[:1].upper() + message.warning[1:], severity="warning", timeout=15)

    def on_session_refused(self, message: messages.SessionRefused) -> None:
        self.app.push_screen(RefusalScreen(f"Refused: {message.model_name} (nothing was sent)", message.reason))

    def on_session_ended(self, message: messages.SessionEnded) -> None:
        self.workspace.edits += 1
        self.running = False
        self.statuses = message.statuses
        self._repaint()
        if not message.statuses:
            self._line("Nothing was run. Esc goes back.")
        elif all(s == RunStatus.COMPLETED for s in message.statuses):
            self._line("Every run completed · o opens the report · Esc goes back")
        elif all(s in (RunStatus.COMPLETED, RunStatus.SETTLED) for s in message.statuses):
            self._line("Every verdict settled: the rest was not sent · o opens the report · Esc back")
        elif RunStatus.INCOMPLETE in message.statuses and not self._cancelled_session(message):
            self._line(
                "Some tasks measured nothing (the endpoint failed): they are not done and not in any "
                "figure · start the server, then r retries exactly those · o opens the report so far"
            )
        else:
            self._line("Stopped: every finished attempt is kept · r resumes · o report so far")

    @staticmethod
    def _cancelled_session(message: messages.SessionEnded) -> bool:
        return RunStatus.INTERRUPTED in message.statuses

    # ------------------------------------------------------------------ actions

    def action_cancel_run(self) -> None:
        if not self.running or self.session is None:
            self.notify("No run is in progress.", severity="warning")
            return

        def answered(cancel: bool | None) -> None:
            if cancel and self.running and self.session is not None:
                self._cancel_now()

        self.app.push_screen(
            ConfirmScreen("Cancel the run?", RUN_STOP_TEXT, "Cancel the run", "Keep running"), answered
        )

    def _cancel_now(self) -> None:
        assert self.session is not None
        self.session.cancel()
        self._line("Cancelling: attempts in flight finish, then the run is marked interrupted (resumable)…")

    def action_resume(self) -> None:
        if self.running:
            self.notify("The run is still going.", severity="warning")
            return
        run_ids = (
            self.run_ids or self.tally.run_ids() or (self.plan.run_ids if isinstance(self.plan, ResumePlan) else ())
        )
        statuses = self.statuses or (RunStatus.INTERRUPTED,) * len(run_ids)
        pending = tuple(r for r, s in zip(run_ids, statuses) if s != RunStatus.COMPLETED)
        if not pending:
            self.notify("Nothing to resume: every run completed.", severity="information")
            return
        self._line("resuming: re-checking models and pins…")
        self._start(ResumePlan(pending))

    def action_report(self) -> None:
        ref = self.comparison_id or (self.run_ids[0] if self.run_ids else None)
        if ref is None:
            self.notify("No run has been prepared yet.", severity="warning")
            return
        self.nav.open_report(ref)

    async def stop_for_exit(self, timeout_s: float = 60.0) -> None:
        """Cancel a running session and wait until its run is marked interrupted (resumable),
        so quitting the app never leaves a run that looks still running."""
        if not self.running or self.session is None:
            return
        self.session.cancel()
        for worker in list(self.workers):
            if worker.group == "engine" and worker.node is self:
                try:
                    await asyncio.wait_for(worker.wait(), timeout_s)
                except (TimeoutError, WorkerFailed, WorkerCancelled):
                    pass

    def action_back(self) -> None:
        if self.running:
            self.notify(
                "A run is in progress: c cancels it (it stays resumable), then Esc goes back.", severity="warning"
            )
            return
        self.app.pop_screen()


def _panel_id(model_name: str) -> str:
    return "model-" + re.sub(r"[^A-Za-z0-9_-]", "_", model_name)
