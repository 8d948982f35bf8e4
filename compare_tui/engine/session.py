"""A session of runs: one golden set against several models (or the unfinished runs of earlier
sessions), prepared together and executed one model at a time, reporting every step through
the observer protocol (`events`). The CLI's `run`, the TUI (in its engine process) and
experiments are callers and observers of this one implementation.

Preparing a new session: read the set, find every model in the catalogue, probe every endpoint
(`ModelsResolved`), choose the baseline (`BaselineChosen`), create the comparison, prepare each
model (`VerificationProgressed` while weights are hashed) and link the runs (`RunsPrepared`).
A refusal anywhere (`RunRefused`) rolls back whatever was written, so nothing is left behind
and nothing was sent. Executing: `RunExecutor` per run (`RunStarted`, `AttemptFinished`,
`RunFinished`), then `SessionEnded`.

The session holds the lease of every run it will execute from the moment it prepares it until
that run stops (or the session ends): a resume of a run that a live process is executing is
refused (`RunRefused`, before any weights are hashed or anything is written), and a stale
lease is taken over (`LeaseTakenOver`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from compare_tui.catalogue import Catalogue, CatalogueError, ModelEntry, load_catalogue
from compare_tui.engine.budget import DailyBudget, plan_within_budget, spent_today
from compare_tui.engine.estimate import estimate_spend
from compare_tui.engine.events import (
    BaselineChosen,
    LeaseTakenOver,
    ModelsResolved,
    ModelsSkipped,
    RunObserver,
    RunRefused,
    RunsPrepared,
    SessionEnded,
    VerificationProgressed,
)
from compare_tui.engine.lease import HeldLeases
from compare_tui.engine.prepare import (
    PreparedRun,
    Progress,
    RunRefusedError,
    prepare_resume,
    prepare_run,
)
from compare_tui.engine.reachability import refuse_unreachable
from compare_tui.engine.runner import RunExecutor, ended_tasks
from compare_tui.engine.sequential import SequentialSchedule, StopRule, sequential_order
from compare_tui.engine.settings import RunOverrides, resolve_settings
from compare_tui.goldset import GoldenSet, GoldenSetError, load_golden_set
from compare_tui.goldset.models import DecisionSettings
from compare_tui.scoring.executor import ScorerExecutor
from compare_tui.store import (
    ComparisonRecord,
    RunLeasedError,
    RunNotFoundError,
    RunRecord,
    RunStatus,
    Store,
    Takeover,
)
from compare_tui.vocabulary import ModelKind


@dataclass(frozen=True, slots=True)
class NewRunPlan:
    """A new session: one set, one or more models (in run order), the settings, a spend cap."""

    set_path: Path
    model_names: tuple[str, ...]
    overrides: RunOverrides
    max_cost: float | None = None
    baseline: str | None = None
    """The model the others are judged against (None: the workload's promoted one, if run)."""
    name: str | None = None
    """The comparison's name (None: the workload id and the time)."""
    strict_serving: bool = False
    """Refuse a model whose server's settings differ from its catalogue entry's."""
    margin_pp: float | None = None
    """The verdict's margin, recorded on the comparison before the data (None: the manifest's
    `[decision] margin_pp`, else 5)."""
    gpu_telemetry: str | None = None
    """`dcgm=HOST:PORT`: read every local model's GPU memory from this DCGM exporter instead of
    NVML on this machine (None: each entry's `[model.serving] gpu_telemetry`, else NVML)."""
    budget: DailyBudget | None = None
    """Today's eval budget (`[budget]` in the user's config): models that would exceed it are
    skipped before anything is sent, with the reason recorded on the comparison."""
    sequential: bool = False
    """`--stop-when-settled`: tasks in a seeded random order recorded on the comparison, every
    model sent them interleaved, and each candidate stopped once its verdict has settled
    (`engine.sequential`; needs a baseline and the session's `stop_rule`)."""


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """Runs to finish, in order (interrupted, pending or killed ones); completed ones are skipped."""

    run_ids: tuple[str, ...]
    set_path: Path | None = None
    """Read the set from here instead of where each run recorded it."""
    strict_serving: bool = False
    """Refuse a model whose server's settings differ from its catalogue entry's."""
    gpu_telemetry: str | None = None
    """As `NewRunPlan.gpu_telemetry`."""
    full_set: bool = False
    """Send a `--stop-when-settled` comparison's runs the tasks they were not sent (settled runs
    included), one model at a time, to the full set. Without it a run of such a comparison resumes
    the whole comparison's interleaved schedule."""


SessionPlan = NewRunPlan | ResumePlan


def no_catalogue_reason(path: Path) -> str:
    """Why a session cannot start when the catalogue file is missing, and what to do."""
    return f"no model catalogue at {path}: start the bundled models with `compare-tui local up`, or pass --models FILE"


class EngineSession:
    """One session of runs over one store. `prepare()` then `await execute()`, or `run()` for
    both on an event loop of the calling thread; `cancel()` may be called from any thread."""

    def __init__(
        self,
        store: Store,
        plan: SessionPlan,
        catalogue: Catalogue | Path,
        observer: RunObserver,
        *,
        goldset: GoldenSet | None = None,
        environ: Mapping[str, str] | None = None,
        scorers: ScorerExecutor | None = None,
        stop_rule: StopRule | None = None,
    ) -> None:
        """`stop_rule`: the look of a candidate's confidence sequence (`report.sequential.look_at`),
        needed by a sequential session (the engine does not import the report).
        `catalogue`: the catalogue, or its file (read when the session prepares: a missing or
        malformed file is a refusal). `goldset`: the plan's set when the caller has already read
        it (else it is read from disk when the session prepares). `environ`: where virtual keys
        are read (default os.environ). `scorers`: where command scorers run, shared by every run
        of the session and closed by the caller (None: this machine, one per core)."""
        self.store, self.plan, self.observer, self.environ = store, plan, observer, environ
        self.scorers = scorers
        self._goldset_given = goldset
        self._catalogue_source = catalogue
        self.comparison_id: str | None = None
        self.prepared: list[PreparedRun] = []
        self.statuses: list[RunStatus] = []
        """The final status of each run executed so far, in order."""
        self.stopped_run_id: str | None = None
        """The run that was executing when the store or a bug stopped the session."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancelled = threading.Event()
        self._guard = threading.Lock()
        self.leases: HeldLeases | None = None
        """The leases of the runs this session prepared (None until it takes them)."""
        self.stop_rule = stop_rule
        self.schedule: SequentialSchedule | None = None
        """A sequential comparison's interleaved schedule (None: one model at a time)."""

    @classmethod
    def of_prepared(
        cls,
        store: Store,
        prepared: list[PreparedRun],
        observer: RunObserver,
        *,
        scorers: ScorerExecutor | None = None,
        stop_rule: StopRule | None = None,
    ) -> EngineSession:
        """A session over runs prepared elsewhere (an experiment prepares one run at a time);
        `run()` and `execute()` skip preparing. When the runs make a sequential comparison (an
        experiment's arms with `--stop-when-settled`), they go interleaved under `stop_rule`."""
        session = cls(
            store, ResumePlan(tuple(p.run.id for p in prepared)), Path(), observer, scorers=scorers, stop_rule=stop_rule
        )
        session.prepared = list(prepared)
        session.comparison_id = prepared[0].run.comparison_id if prepared else None
        session.schedule = session._schedule()
        return session

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # ------------------------------------------------------------------ any thread

    def cancel(self) -> None:
        """Stop after the attempts in flight; the current run becomes `interrupted` (resumable) and
        the runs not yet started stay `pending` (a resume accepts those too)."""
        self._cancelled.set()
        with self._guard:
            if self._loop is not None and self._task is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._task.cancel)

    # ------------------------------------------------------------------ blocking

    def run(self) -> tuple[str, ...]:
        """Prepare (unless prepared already) and execute on a new event loop of this thread;
        return the statuses (empty when
        refused: the refusal was reported as `RunRefused`). Other errors propagate, after
        `SessionEnded`."""
        if not self.prepared:
            try:
                self.prepare()
            except RunRefusedError:
                self.observer.on_event(SessionEnded((), False))
                return ()
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._execute_on(loop))
        except asyncio.CancelledError:
            pass  # cancelled before the first run began: the session ended all the same
        finally:
            with self._guard:
                self._loop = None
            loop.close()
        return self.final_statuses()

    async def _execute_on(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._guard:
            self._loop, self._task = loop, asyncio.current_task()
        if self._cancelled.is_set():
            self.observer.on_event(SessionEnded(self.final_statuses(), True))
            return
        await self.execute()

    def final_statuses(self) -> tuple[RunStatus, ...]:
        """Every run's status, `pending` for those never started."""
        return tuple(self.statuses) + (RunStatus.PENDING,) * (len(self.prepared) - len(self.statuses))

    # ------------------------------------------------------------------ preparing

    def prepare(self) -> list[PreparedRun]:
        """Check and record every run of the plan. On a refusal, report `RunRefused`, undo what was
        written, and raise `RunRefusedError` (nothing was sent)."""
        self.leases = HeldLeases(self.store)
        try:
            if isinstance(self.plan, ResumePlan):
                self.prepared = self._prepare_resume(self.plan)
            else:
                self.prepared = self._prepare_new(self.plan)
        except RunRefusedError as exc:
            self.leases.close()
            self.observer.on_event(RunRefused(exc.model_name, exc.reason))
            raise
        except BaseException:
            self.leases.close()
            raise
        self.schedule = self._schedule()
        ids = tuple(p.run.id for p in self.prepared)
        self.observer.on_event(RunsPrepared(self.comparison_id, ids, self.schedule is not None))
        return self.prepared

    def _schedule(self) -> SequentialSchedule | None:
        """The interleaved schedule when the comparison is sequential (and not sent to the full set)."""
        if self.comparison_id is None or (isinstance(self.plan, ResumePlan) and self.plan.full_set):
            return None
        comparison = self.store.get_comparison(self.comparison_id)
        if comparison.sequential is None:
            return None
        if self.stop_rule is None:
            raise RunRefusedError("sequential", "a --stop-when-settled comparison needs the stop rule of its verdicts")
        runs = [self.store.get_run_exact(run_id) for run_id in comparison.run_ids]
        window = {p.run.id: p.settings.concurrency for p in self.prepared}
        members = [(r.id, r.model_name, window.get(r.id, 1)) for r in runs]
        baseline = next(m for m in members if m[1] == comparison.baseline)
        schedule = SequentialSchedule(
            comparison.sequential.order,
            baseline,
            [m for m in members if m is not baseline],
            self.stop_rule,
            margin_pp=comparison.margin_pp if comparison.margin_pp is not None else DecisionSettings().margin_pp,
            prior={r.id: ended_tasks(self.store, r.id) for r in runs},
            observer=self.observer,
        )
        for run in runs:  # a run this session does not execute holds nobody back
            if run.id not in window:
                schedule.run_stopped(run.id)
        return schedule

    def _catalogue(self) -> Catalogue:
        source = self._catalogue_source
        if isinstance(source, Catalogue):
            return source
        if not source.exists():
            raise RunRefusedError("catalogue", no_catalogue_reason(source))
        try:
            return load_catalogue(source)
        except CatalogueError as exc:
            raise RunRefusedError("catalogue", str(exc)) from None

    @staticmethod
    def _entry(catalogue: Catalogue, name: str) -> ModelEntry:
        try:
            return catalogue.get(name)
        except CatalogueError as exc:
            raise RunRefusedError(name, str(exc)) from None

    def _goldset(self, path: Path, model_name: str) -> GoldenSet:
        if self._goldset_given is not None:
            return self._goldset_given
        # Read from disk now, never from a cache: a run records exactly the set it ran.
        try:
            return load_golden_set(path)
        except GoldenSetError as exc:
            raise RunRefusedError(model_name, str(exc)) from None
        except OSError as exc:
            raise RunRefusedError(model_name, f"{path}: {exc.strerror or exc}") from None

    def _progress(self, model_name: str) -> Progress:
        def report(file: str, done: int, total: int) -> None:
            self.observer.on_event(VerificationProgressed(model_name, file, done, total))

        return report

    def _prepare_new(self, plan: NewRunPlan) -> list[PreparedRun]:
        store = self.store
        catalogue = self._catalogue()
        goldset = self._goldset(plan.set_path, plan.model_names[0] if plan.model_names else "session")
        entries = [self._entry(catalogue, name) for name in plan.model_names]
        refuse_unreachable(entries)  # before hashing weights or writing anything
        self.observer.on_event(ModelsResolved({e.name: e.kind for e in entries}, self._telemetry(entries)))
        baseline = self._baseline(goldset.manifest.workload_id, plan)
        name = plan.name or f"{goldset.manifest.workload_id} {datetime.now(UTC):%Y-%m-%d %H:%M}"
        # The verdict's margin is fixed before the data (a report may ask for another, labelled so).
        margin = (
            plan.margin_pp
            if plan.margin_pp is not None
            else (goldset.manifest.decision or DecisionSettings()).margin_pp
        )
        skipped = self._over_budget(goldset, catalogue, entries, baseline, plan)
        entries = [entry for entry in entries if entry.name not in skipped]
        _refuse_what_the_budget_leaves(skipped, [entry.name for entry in entries], baseline, plan.sequential)
        order = sequential_order(goldset, plan.model_names, baseline) if plan.sequential else None
        self.comparison_id = store.create_comparison(
            ComparisonRecord(name=name, baseline=baseline, margin_pp=margin, sequential=order)
        ).id
        store.record_skips(self.comparison_id, skipped)
        prepared: list[PreparedRun] = []
        try:
            for entry in entries:
                prepared.append(
                    prepare_run(
                        store,
                        goldset,
                        entry,
                        plan.overrides,
                        max_cost=plan.max_cost,
                        comparison_id=self.comparison_id,
                        environ=self.environ,
                        progress=self._progress(entry.name),
                        strict_serving=plan.strict_serving,
                    )
                )
                self._take_lease(prepared[-1].run)  # a new run: nobody else has it yet
        except RunRefusedError:
            for p in prepared:  # refuse the whole session before any request is sent
                store.delete_run(p.run.id)
            store.delete_comparison(self.comparison_id)
            self.comparison_id = None
            raise
        store.set_comparison_runs(self.comparison_id, [p.run.id for p in prepared])
        return prepared

    def _over_budget(
        self,
        goldset: GoldenSet,
        catalogue: Catalogue,
        entries: list[ModelEntry],
        baseline: str | None,
        plan: NewRunPlan,
    ) -> dict[str, str]:
        """The models whose spend estimate would exceed today's budget, with the reason (the
        baseline is weighed first); `ModelsSkipped` tells the observer before anything starts."""
        budget = plan.budget
        if budget is None or not budget.set:
            return {}
        try:
            settings = resolve_settings(goldset, plan.overrides)
        except ValueError:
            return {}  # prepare_run refuses it with the reason
        ordered = sorted(entries, key=lambda entry: entry.name != baseline)
        now = datetime.now(UTC)
        workload = goldset.manifest.workload_id
        verdict = plan_within_budget(
            [(entry.name, estimate_spend(goldset, entry.cost, settings)) for entry in ordered],
            budget=budget,
            spent=spent_today(self.store, catalogue, now),
            spent_workload=spent_today(self.store, catalogue, now, workload),
            workload_id=workload,
            now=now,
        )
        if verdict.warning:
            self.observer.on_event(ModelsSkipped(verdict.skipped, verdict.warning))
        return verdict.skipped

    def _telemetry(self, entries: list[ModelEntry]) -> dict[str, str]:
        """Each local model's DCGM exporter, as its run will read it (the plan's, else the entry's)."""
        return {
            e.name: telemetry
            for e in entries
            if e.kind == ModelKind.LOCAL and (telemetry := self.plan.gpu_telemetry or e.serving.gpu_telemetry)
        }

    def _baseline(self, workload_id: str, plan: NewRunPlan) -> str | None:
        """The one named, else the workload's promoted baseline when it is among the models run."""
        current = self.store.current_baseline(workload_id)
        promoted = current.model if current is not None else None
        if plan.baseline:
            chosen: str | None = plan.baseline
        else:
            chosen = promoted if promoted in plan.model_names else None
        self.observer.on_event(BaselineChosen(workload_id, chosen, promoted, bool(plan.baseline)))
        return chosen

    def _prepare_resume(self, plan: ResumePlan) -> list[PreparedRun]:
        store = self.store
        catalogue = self._catalogue()
        prepared: list[PreparedRun] = []
        finished: list[RunRecord] = []
        for run_id in self._resumed_ids(plan):
            try:
                run = store.get_run(run_id)
            except RunNotFoundError as exc:
                raise RunRefusedError("resume", str(exc)) from None
            if run.status == RunStatus.COMPLETED or (run.status == RunStatus.SETTLED and not plan.full_set):
                finished.append(run)
                continue
            self._take_lease(run)  # before hashing weights: a live executor's run is refused now
            self.comparison_id = self.comparison_id or run.comparison_id
            goldset = self._goldset(plan.set_path or Path(run.goldset_path), run.model_name)
            entry = self._entry(catalogue, run.model_name)
            refuse_unreachable([entry])
            self.observer.on_event(ModelsResolved({entry.name: entry.kind}, self._telemetry([entry])))
            prepared.append(
                prepare_resume(
                    store,
                    run.id,
                    goldset,
                    entry,
                    environ=self.environ,
                    progress=self._progress(run.model_name),
                    strict_serving=plan.strict_serving,
                )
            )
        if not prepared:
            if len(finished) == 1:
                raise RunRefusedError(
                    finished[0].model_name, f"run {finished[0].id} is already completed; nothing to resume"
                )
            if any(run.status == RunStatus.SETTLED for run in finished):
                raise RunRefusedError(
                    "resume",
                    "every verdict of this comparison has settled; nothing to resume "
                    "(`--full-set` sends the tasks that were not sent)",
                )
            raise RunRefusedError("resume", "every run of this session is already completed; nothing to resume")
        return prepared

    def _resumed_ids(self, plan: ResumePlan) -> list[str]:
        """The plan's runs; for a run of a sequential comparison, every run of it (the schedule
        pairs them; sent to the full set, the fixed-N figures need every one)."""
        ids: list[str] = []
        for run_id in plan.run_ids:
            try:
                run = self.store.get_run(run_id)
            except RunNotFoundError as exc:
                raise RunRefusedError("resume", str(exc)) from None
            members = [run.id]
            if run.comparison_id is not None:
                comparison = self.store.get_comparison(run.comparison_id)
                if comparison.sequential is not None:
                    members = comparison.run_ids
            ids += [m for m in members if m not in ids]
        return ids

    def _take_lease(self, run: RunRecord) -> None:
        assert self.leases is not None
        try:
            takeover = self.leases.take(run.id)
        except RunLeasedError as exc:
            raise RunRefusedError(run.model_name, str(exc)) from None
        if takeover is not None:
            self.observer.on_event(_taken_over(takeover))

    # ------------------------------------------------------------------ executing

    async def execute(
        self, executor: Callable[[PreparedRun], RunExecutor] | None = None, *, together: bool = False
    ) -> list[str]:
        """Run every prepared run to its end, one model at a time (runs never compete for the
        machine), and report `SessionEnded`. Cancelling marks the current run `interrupted`; an
        error (the store failed) marks it so too and propagates, naming it in `stopped_run_id`.

        `together`: run them all at the same time instead (an experiment's round, whose runs ask
        different endpoints); statuses stay in the prepared order."""
        if self.leases is None:  # prepared elsewhere (an experiment): take the leases now
            self.leases = HeldLeases(self.store)
            try:
                for p in self.prepared:
                    self._take_lease(p.run)
            except BaseException:
                self.leases.close()
                raise
        leases = self.leases
        make = executor or (
            lambda p: RunExecutor(
                self.store,
                p,
                observer=self.observer,
                leases=leases,
                scorers=self.scorers,
                gpu_telemetry=self.plan.gpu_telemetry,
                schedule=self.schedule,
            )
        )
        together = together or self.schedule is not None  # interleaved: every model at once
        with self._guard:
            if self._loop is None:
                self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            if together:
                await self._execute_together(make)
                return list(self.statuses)
            for p in self.prepared:
                if self._cancelled.is_set():
                    break
                try:
                    self.statuses.append(await make(p).execute())
                except asyncio.CancelledError:
                    self.statuses.append(RunStatus.INTERRUPTED)
                    raise
                except Exception:
                    self.statuses.append(RunStatus.INTERRUPTED)
                    self.stopped_run_id = p.run.id
                    raise
        finally:
            leases.close()
            self.observer.on_event(SessionEnded(self.final_statuses(), self._cancelled.is_set()))
        return list(self.statuses)

    async def _execute_together(self, make: Callable[[PreparedRun], RunExecutor]) -> None:
        try:
            ended = await asyncio.gather(*(make(p).execute() for p in self.prepared), return_exceptions=True)
        except asyncio.CancelledError:  # every run stopped where it was: each is interrupted
            self.statuses[:] = [RunStatus.INTERRUPTED] * len(self.prepared)
            raise
        for p, status in zip(self.prepared, ended, strict=True):
            self.statuses.append(status if isinstance(status, RunStatus) else RunStatus.INTERRUPTED)
            if isinstance(status, Exception) and self.stopped_run_id is None:
                self.stopped_run_id = p.run.id
        for status in ended:  # cancellation first (Ctrl-C), then the first error
            if isinstance(status, asyncio.CancelledError):
                raise status
        for status in ended:
            if isinstance(status, BaseException):
                raise status


def _refuse_what_the_budget_leaves(
    skipped: dict[str, str], left: list[str], baseline: str | None, sequential: bool
) -> None:
    """Refuse, before anything is stored or sent, a session the daily budget leaves nothing to
    do: every model skipped, or (`--stop-when-settled`) no baseline and candidate to pair."""
    if not skipped:
        return
    reasons = "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
    if not left:
        raise RunRefusedError(
            "budget", f"every model would exceed today's eval budget, so nothing was sent ({reasons})"
        )
    if sequential and (baseline not in left or len(left) < 2):
        raise RunRefusedError(
            "budget",
            "--stop-when-settled pairs each candidate with the baseline, and today's eval budget leaves "
            f"only {', '.join(left)}, so nothing was sent ({reasons}); run without --stop-when-settled to "
            "run what fits, or raise [budget] usd_per_day",
        )


def _taken_over(takeover: Takeover) -> LeaseTakenOver:
    return LeaseTakenOver(takeover.previous.run_id, takeover.sentence())
