"""The engine as one worker: prepare every model of a session, then execute the runs one model
at a time on an event loop of the worker's own thread, reporting through the observer protocol.

The UI thread never waits on the engine. `cancel()` may be called from any thread: it cancels
the running executor, which marks its run `interrupted` (resumable); runs not yet started stay
`pending`, which a resume accepts too.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from textual.message import Message

from compare_tui.catalogue import Catalogue
from compare_tui.engine import (
    PreparedRun,
    RunExecutor,
    RunOverrides,
    RunRefused,
    RunRefusedError,
    VerificationProgressed,
    prepare_resume,
    prepare_run,
    refuse_unreachable,
)
from compare_tui.engine.events import EngineEvent, RunFinished, RunStarted
from compare_tui.goldset import GoldenSetError, load_golden_set
from compare_tui.report.figures import gpu_memory
from compare_tui.report import formatting as fmt
from compare_tui.store import ComparisonRecord, RunNotFoundError, RunStatus
from compare_tui.tui import messages
from compare_tui.tui.live_tally import LiveTally
from compare_tui.tui.workspace import Workspace


@dataclass(frozen=True, slots=True)
class NewRunPlan:
    """What the New run screen asks for: one set, one or more models, the settings, a cap."""

    set_path: Path
    model_names: tuple[str, ...]
    overrides: RunOverrides
    max_cost: float | None = None
    baseline: str | None = None
    """The model the others are judged against (None: the workload's promoted one, if run)."""


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """Runs to finish, in order (interrupted, pending or killed ones)."""

    run_ids: tuple[str, ...]


class _Refused(Exception):
    def __init__(self, model_name: str, reason: str) -> None:
        super().__init__(reason)
        self.model_name, self.reason = model_name, reason


class EngineSession:
    """One session of runs. `run()` is the worker's body (blocking, in a worker thread)."""

    def __init__(self, workspace: Workspace, plan: NewRunPlan | ResumePlan, tally: LiveTally,
                 post: Callable[[Message], None]) -> None:
        self.workspace, self.plan, self.tally, self.post = workspace, plan, tally, post
        self.comparison_id: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._cancelled = threading.Event()
        self._guard = threading.Lock()

    # ------------------------------------------------------------------ any thread

    def cancel(self) -> None:
        """Stop after the attempts in flight; the current run becomes `interrupted`."""
        self._cancelled.set()
        with self._guard:
            if self._loop is not None and self._task is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._task.cancel)

    def on_event(self, event: EngineEvent) -> None:
        """The observer protocol: tally every event; post only a run's end."""
        self.tally.on_event(event)
        if isinstance(event, RunStarted) and event.tasks_done:
            s = self.workspace.store.pass_rate_summary(event.run_id)
            self.tally.seed(event.model_name, {"pass": s.passed, "fail": s.failed, "review": s.review,
                                               "error": s.errored})
        if isinstance(event, RunFinished):
            self.post(messages.RunEnded(event.model_name, event.run_id, event.status, event.error))

    # ------------------------------------------------------------------ the worker thread

    def run(self) -> tuple[str, ...]:
        statuses: list[str] = []
        try:
            prepared = self._prepare()
        except _Refused as refused:
            self.tally.on_event(RunRefused(refused.model_name, refused.reason))
            self.post(messages.SessionRefused(refused.model_name, refused.reason))
            self.post(messages.SessionEnded((), False))
            return ()
        self.post(messages.RunsPrepared(self.comparison_id, tuple(p.run.id for p in prepared)))
        try:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._execute_all(loop, prepared, statuses))
            finally:
                with self._guard:
                    self._loop = None
                loop.close()
        finally:
            statuses += ["pending"] * (len(prepared) - len(statuses))
            self.post(messages.SessionEnded(tuple(statuses), self._cancelled.is_set()))
        return tuple(statuses)

    async def _execute_all(self, loop: asyncio.AbstractEventLoop, prepared: list[PreparedRun],
                           statuses: list[str]) -> None:
        with self._guard:
            self._loop, self._task = loop, asyncio.current_task()
        for p in prepared:  # one model at a time, so runs never compete for the machine
            if self._cancelled.is_set():
                return
            try:
                statuses.append(await RunExecutor(self.workspace.store, p, observer=self).execute())
            except asyncio.CancelledError:
                statuses.append("interrupted")
                return
            except Exception:  # the store failed, or a bug: the executor marked the run interrupted
                statuses.append("interrupted")
                raise
            finally:
                self.tally.set_gpu(p.run.model_name, self._gpu_line(p.run.id))

    def _progress(self, model_name: str) -> Callable[[str, int, int], None]:
        def report(file: str, done: int, total: int) -> None:
            self.tally.on_event(VerificationProgressed(model_name, file, done, total))
        return report

    def _prepare(self) -> list[PreparedRun]:
        catalogue = self._catalogue()
        if isinstance(self.plan, ResumePlan):
            return self._prepare_resume(catalogue)
        return self._prepare_new(catalogue, self.plan)

    def _catalogue(self) -> Catalogue:
        read = self.workspace.read_catalogue()
        if read.catalogue is None:
            raise _Refused("catalogue", read.problem or "no model catalogue")
        return read.catalogue

    def _entry(self, catalogue: Catalogue, name: str):
        if name not in catalogue:
            raise _Refused(name, f"{name} is not in the catalogue at {catalogue.path}; add it or pick another model")
        return catalogue.get(name)

    def _prepare_new(self, catalogue: Catalogue, plan: NewRunPlan) -> list[PreparedRun]:
        store = self.workspace.store
        goldset = self._goldset(plan.set_path, plan.model_names[0])
        entries = [self._entry(catalogue, name) for name in plan.model_names]
        self._refuse_unreachable(entries)
        for entry in entries:
            self.tally.set_gpu(entry.name, gpu_before_run(entry.kind))
        name = f"{goldset.manifest.workload_id} {datetime.now(UTC):%Y-%m-%d %H:%M}"
        baseline = plan.baseline
        if baseline is None:
            current = store.current_baseline(goldset.manifest.workload_id)
            baseline = current.model if current is not None and current.model in plan.model_names else None
        self.comparison_id = store.create_comparison(ComparisonRecord(name=name, baseline=baseline)).id
        prepared: list[PreparedRun] = []
        try:
            for entry in entries:
                prepared.append(prepare_run(store, goldset, entry, plan.overrides, max_cost=plan.max_cost,
                                            comparison_id=self.comparison_id, progress=self._progress(entry.name)))
        except RunRefusedError as exc:
            for p in prepared:  # refuse the whole session before any request is sent
                store.delete_run(p.run.id)
            store.delete_comparison(self.comparison_id)
            self.comparison_id = None
            raise _Refused(exc.model_name, exc.reason) from None
        store.set_comparison_runs(self.comparison_id, [p.run.id for p in prepared])
        return prepared

    def _prepare_resume(self, catalogue: Catalogue) -> list[PreparedRun]:
        store = self.workspace.store
        prepared = []
        for run_id in self.plan.run_ids:
            run = store.get_run(run_id)
            if run.status == RunStatus.COMPLETED:
                continue
            self.comparison_id = self.comparison_id or run.comparison_id
            goldset = self._goldset(Path(run.goldset_path), run.model_name)
            self.tally.set_gpu(run.model_name, gpu_before_run(run.model_entry.get("kind", "local")))
            entry = self._entry(catalogue, run.model_name)
            self._refuse_unreachable([entry])
            try:
                prepared.append(prepare_resume(store, run.id, goldset, entry, progress=self._progress(run.model_name)))
            except RunRefusedError as exc:
                raise _Refused(exc.model_name, exc.reason) from None
        if not prepared:
            raise _Refused("resume", "every run of this session is already completed; nothing to resume")
        return prepared

    @staticmethod
    def _refuse_unreachable(entries) -> None:
        """The engine's pre-flight check: an endpoint that does not answer refuses the session."""
        try:
            refuse_unreachable(entries)
        except RunRefusedError as exc:
            raise _Refused(exc.model_name, exc.reason) from None

    def _goldset(self, path: Path, model_name: str):
        # Read from disk now, not from the session's cache: a run records exactly the set it ran.
        try:
            return load_golden_set(path)
        except GoldenSetError as exc:
            raise _Refused(model_name, str(exc)) from None
        except OSError as exc:
            raise _Refused(model_name, f"{path}: {exc.strerror or exc}") from None

    def _gpu_line(self, run_id: str) -> str:
        """The run's GPU memory as its report shows it, from the run record alone (building the
        whole report here would read every attempt: ~140 MiB and seconds for 50,000 tasks)."""
        try:
            run = self.workspace.store.get_run_exact(run_id)
        except RunNotFoundError:
            return "not recorded"
        return fmt.gpu(gpu_memory(run.gpu, (run.model_entry or {}).get("kind")))


def gpu_before_run(kind: str) -> str:
    """The GPU memory line while a run goes: the engine samples it; the report shows the peak."""
    if kind == "hosted":
        return "n/a (hosted: the GPU is not on this machine)"
    return "being sampled by the engine; the peak shows when the run ends"
