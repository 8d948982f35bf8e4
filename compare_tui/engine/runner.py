"""Execute a prepared run: stream every task's attempts, score them, and write each attempt
the moment it is scored under its deterministic id `(run, task, attempt)`.

A resumed run reads what is stored and does only what is missing, so an interrupted run
(Ctrl-C, SIGTERM, or kill -9) finishes with nothing repeated and nothing lost. Memory stays
flat however large the set: `concurrency` workers pull tasks from one iterator.

An attempt that measured nothing (the endpoint failed: `store.NOT_MEASURED_CLASSES`) is
stored with its audit rows as evidence but leaves its task *not done*: the run ends
`incomplete` with the count and the reasons, and a resume retries exactly those tasks. After
`OUTAGE_AFTER` attempts in a row that could not connect at all (or whose gateway could not
connect to its upstream: `vocabulary.CONNECTION_CLASSES`), the run stops handing out
tasks: the server is gone, and asking it every remaining task would only turn each into the
same error (a task-specific failure, such as one request that always gets a 500, does not
count towards this).

A run is executed under its lease (`engine/lease.py`): taken before anything is written or
sent (`RunLeasedError` when a live process holds it), renewed while it runs, released however
it stops. Every request's audit row is committed before the request goes out
(`writer.AttemptWriter.open`, in the group commit of the run's attempts), and every write of the run (request rows, attempts, its status) is
fenced by the lease, so a process that lost it stops at its next step.
"""

from __future__ import annotations

import asyncio
import gc
import random
from collections import Counter
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import asdict
from functools import partial
from typing import Any

from compare_tui.endpoint.account import stack_of
from compare_tui.endpoint.client import TRANSPORT, ChatClient, chat_client
from compare_tui.engine.audit import audit_values_of
from compare_tui.engine.environment import capture_environment, fetch_server_identity
from compare_tui.engine.events import AttemptFinished, RunFinished, RunObserver, RunStarted
from compare_tui.engine.exchange import Exchange, stream_chat
from compare_tui.engine.gpu import MemorySampler
from compare_tui.engine.gpu_dcgm import memory_sampler
from compare_tui.engine.kv_cache import KvCacheSampler
from compare_tui.engine.lease import HeldLeases
from compare_tui.engine.prepare import PreparedRun
from compare_tui.engine.request import chat_body, hold_prompt_cache
from compare_tui.engine.retry import RetryPolicy, with_retries
from compare_tui.engine.sequential import PlainSource, SequentialSchedule, TaskSource
from compare_tui.engine.server_latency import HistogramReading, merged, read_histograms, serves_vllm
from compare_tui.engine.tools_reach import ToolsReachEntry, tools_reach
from compare_tui.engine.writer import AttemptWriter
from compare_tui.goldset.models import Task
from compare_tui.scoring.executor import LocalScorers, ScoreItem, ScorerExecutor
from compare_tui.scoring.result import Answer, Outcome, ScoreResult
from compare_tui.store import RunStatus, Store, measured
from compare_tui.store import utc_now as now_iso
from compare_tui.store.rows import AuditValues, attempt_values
from compare_tui.vocabulary import (
    CONNECTION_CLASSES,
    NOT_DONE,
    TASK_ENDING_OUTCOMES,
    ErrorClass,
    ModelKind,
    NotDone,
    task_outcome,
)

OUTAGE_AFTER = 5
"""Attempts in a row that could not connect after which a run stops sending (the server is gone)."""


_RUNNING = 0
"""Runs executing in this process (`RunExecutor.execute` tunes the collector while any is)."""
_THRESHOLDS: tuple[int, ...] = gc.get_threshold()


class _Quiet:
    def on_event(self, event: object) -> None:
        pass


class RunExecutor:
    """Runs one prepared run to its end. Create one per run."""

    def __init__(
        self,
        store: Store,
        prepared: PreparedRun,
        *,
        observer: RunObserver | None = None,
        retry: RetryPolicy | None = None,
        gpu_sampler: MemorySampler | None = None,
        gpu_telemetry: str | None = None,
        leases: HeldLeases | None = None,
        scorers: ScorerExecutor | None = None,
        schedule: SequentialSchedule | None = None,
    ) -> None:
        """`schedule`: the interleaved schedule of a `--stop-when-settled` comparison, which
        orders, paces and stops this run's tasks (None: every pending task, in the set's order).
        `leases`: the session's leases (this run's is taken if not held yet, and released
        when the run stops); None: the executor takes and releases the run's lease itself.
        `scorers`: where command scorers run (None: this machine, one per core, closed when the
        run ends; one given is the caller's to close). `gpu_telemetry`: `dcgm=HOST:PORT`, the
        DCGM exporter to read GPU memory from instead of NVML on this machine (`run
        --gpu-telemetry`; None: the entry's `[model.serving] gpu_telemetry`, if any)."""
        self.store = store
        self.leases = leases
        self._own_scorers = scorers is None
        self.scorers: ScorerExecutor = scorers or LocalScorers()
        self.p = prepared
        self.observer = observer or _Quiet()
        self.retry = retry or RetryPolicy()
        self.gpu_sampler = gpu_sampler
        self.gpu_telemetry = gpu_telemetry
        self._rng = random.Random()
        self._cache = hold_prompt_cache(prepared.settings.prompt_cache, stack_of(prepared.run.serving))
        """How every request carries the run's prompt-cache condition on its server's stack."""
        self._counts: Counter[str] = Counter()
        self._not_measured: Counter[str] = Counter()
        """Error class → tasks whose latest attempt in this execution measured nothing."""
        self._not_measured_example: dict[str, str] = {}
        self._in_a_row = 0
        self._outage = False
        self._tried = 0
        self._answered = 0
        """Requests of this execution the server answered 200 (for the server-side cross-check:
        it counts no latency for a request it refused)."""
        self._writer: AttemptWriter
        self.schedule = schedule
        self._task_outcomes: dict[str, list[str]] = {}
        """task id → its measured attempts' outcomes (kept only for a schedule)."""

    async def execute(self) -> RunStatus:
        """Run to the end; return the final status: `completed`, or `incomplete` when some task
        measured nothing. Cancelling marks the run `interrupted`."""
        # What exists now (the golden set, the store, the UI) lives as long as the run: out of
        # the collector's full scans meanwhile, which otherwise cost a twentieth of a run's CPU
        # at 64 requests in flight (bench/RESULTS.md, "Engine overhead").
        # And the young generation is collected a tenth as often: a request leaves about a
        # hundred short-lived containers, which reference counting frees anyway.
        # Runs in the same process share the setting: the first to start sets it, the last
        # to end restores it.
        global _RUNNING, _THRESHOLDS
        leases = self.leases or HeldLeases(self.store)
        leases.take(self.p.run.id)  # RunLeasedError before anything is written or sent
        token = leases.token
        # Never inline, even with one request in flight: a worker hands its attempt over and goes
        # on, so its next request's `sent` row shares the attempt's commit.
        self._writer = AttemptWriter(self.store, lease_token=token)
        if _RUNNING == 0:
            _THRESHOLDS = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_THRESHOLDS[0], 10 * 700), *_THRESHOLDS[1:])
        _RUNNING += 1
        try:
            return await self._execute(token)
        finally:
            if self.leases is None:
                leases.close()
            else:
                leases.release(self.p.run.id)
            _RUNNING -= 1
            if _RUNNING == 0:
                gc.set_threshold(*_THRESHOLDS)
                gc.unfreeze()
            if self._own_scorers:
                self.scorers.close()

    async def _execute(self, token: str) -> RunStatus:
        run, settings = self.p.run, self.p.settings
        recorded = self._recorded()
        pending = [t for t in self.p.goldset.tasks if not _task_done(recorded.get(t.id, {}), settings.attempts)]
        self.store.update_run_status(
            run.id, RunStatus.RUNNING, started_at=run.started_at or now_iso(), lease_token=token
        )
        sampler = self._sampler()
        kv_cache = self._kv_cache_sampler()
        status, error = RunStatus.INTERRUPTED, None
        async with chat_client(timeout_s=settings.timeout_s, concurrency=settings.concurrency) as chat:
            try:
                # The serving reading at prepare already read /v1/models and /props: one read feeds both.
                identity = self.p.server_identity
                if identity is None:
                    identity = await fetch_server_identity(self.p.entry.endpoint, self.p.headers)
                # A run started before is being resumed: each resume is kept (the report says the
                # run was interrupted, and that its hardware time includes the pause).
                resumes = list(run.environment.get("resumes", []))
                if run.started_at is not None:
                    resumes.append(now_iso())
                environment = (
                    capture_environment(server_identity=identity, settings=settings.as_dict())
                    | {"http_transport": TRANSPORT, "key_check": self.p.key_check, "scorers": self.scorers.describe()}
                    | ({"resumes": resumes} if resumes else {})
                    | {"prompt_cache": self._cache.as_dict()}
                )
                reach = await self._tools_reach(pending)
                if reach is not None:
                    environment["tools_reach"] = reach
                if run.environment.get("server_latency"):  # an earlier execution's, added up below
                    environment["server_latency"] = run.environment["server_latency"]
                self.store.update_run(run.id, lease_token=token, environment=environment)
                latency_before = await self._scrape_latency()
                done_before = len(self.p.goldset.tasks) - len(pending)
                self.observer.on_event(
                    RunStarted(
                        run.id,
                        run.model_name,
                        run.goldset_name,
                        len(self.p.goldset.tasks),
                        done_before,
                        run.provenance or "",
                        self.p.estimate.text(),
                        self._prior_counts() if done_before else {},
                    )
                )
                source = PlainSource(pending) if self.schedule is None else self.schedule.source(run.id, pending)
                self._task_outcomes = {task_id: list(by.values()) for task_id, by in recorded.items()}
                workers = [
                    self._worker(chat, source, recorded) for _ in range(min(settings.concurrency, len(pending) or 1))
                ]
                try:
                    await asyncio.gather(*workers)
                finally:
                    if self.schedule is not None:
                        self.schedule.run_stopped(run.id)
                await self._writer.drain()  # every attempt handed over is committed (or failed)
                if self._writer.failed is not None:
                    raise self._writer.failed
                if latency_before is not None:
                    await self._record_latency(latency_before, environment, token)
                status, error = self._outcome(len(pending))
            except asyncio.CancelledError:
                status, error = (
                    RunStatus.INTERRUPTED,
                    "interrupted by the user; resume with `compare-tui run --resume " + run.id + "`",
                )
                raise
            except Exception as exc:  # a store failure (disk full) or a bug: stop, keep what is stored
                status, error = RunStatus.INTERRUPTED, f"{type(exc).__name__}: {exc}"
                raise
            finally:
                try:
                    await self._writer.drain()  # attempts already handed over are committed first
                finally:
                    self._finish(status, error, sampler, token, kv_cache)
        return status

    async def _tools_reach(self, pending: Sequence[Task]) -> ToolsReachEntry | None:
        """Whether the tools of the run's tool tasks reach the prompt as the server renders it
        (`engine.tools_reach`): asked of llama.cpp and vLLM only (no token is generated), once
        per execution, with the first pending tool task's tools; None otherwise."""
        stack = stack_of(self.p.run.serving) or ""
        tools = next((t.input.tools for t in pending if t.input.tools), None)
        if not tools or not (stack.startswith("llama.cpp") or stack == "vLLM"):
            return None
        reach = await tools_reach(self.p.entry.endpoint, self.p.entry.model, tools, self.p.headers)
        return None if reach is None else reach.as_dict()

    async def _scrape_latency(self) -> HistogramReading | None:
        """vLLM's latency histograms now (None for any other server, or when unreadable)."""
        if not serves_vllm(self.p.run.serving):
            return None
        entry = self.p.entry
        return await asyncio.to_thread(read_histograms, entry.endpoint, entry.model, self.p.headers)

    async def _record_latency(self, before: HistogramReading, environment: dict[str, Any], token: str) -> None:
        """Add what the server counted during this execution to the run's `server_latency`.
        The server may count a request a moment after its last byte went out: the scrape is
        repeated (for at most a second) until it has counted as many as it answered."""
        delta = None
        for _ in range(5):
            after = await self._scrape_latency()
            delta = after.since(before) if after is not None else None
            if delta is None or (delta["ttft"]["buckets"] and delta["ttft"]["buckets"][-1][1] >= self._answered):
                break
            await asyncio.sleep(0.2)
        if delta is None:
            return
        environment["server_latency"] = merged(environment.get("server_latency"), delta, self._answered)
        self.store.update_run(self.p.run.id, lease_token=token, environment=environment)

    async def _worker(
        self, client: ChatClient, tasks: PlainSource | TaskSource, recorded: dict[str, dict[int, str]]
    ) -> None:
        while not self._outage:  # once the endpoint is down, the remaining tasks stay not done
            task = await tasks.next()  # a shared source: each task goes to exactly one worker
            if task is None:
                return
            await self._run_task(client, task, recorded.get(task.id, {}))

    async def _run_task(self, client: ChatClient, task: Task, prior: dict[int, str]) -> None:
        self._tried += 1
        attempts = self.p.settings.attempts
        first = max(prior, default=0) + 1
        for number in range(first, attempts + 1):
            outcome, error_class, error = await self._attempt(client, task, number)
            if not measured(outcome, error_class):
                # Nothing measured: the task stays not done (a resume retries this attempt
                # number), and asking again now would only meet the same failure.
                self._not_measured[error_class or ""] += 1
                self._not_measured_example.setdefault(error_class or "", error or "")
                self._in_a_row = self._in_a_row + 1 if error_class in CONNECTION_CLASSES else 0
                self._outage = self._outage or self._in_a_row >= OUTAGE_AFTER
                return
            self._in_a_row = 0
            if outcome in TASK_ENDING_OUTCOMES:
                return

    async def _attempt(
        self, client: ChatClient, task: Task, number: int
    ) -> tuple[Outcome, ErrorClass | None, str | None]:
        run, entry = self.p.run, self.p.entry
        started = now_iso()
        body = chat_body(task, entry.model, self.p.settings, self._cache)

        send = partial(
            stream_chat, client, entry.endpoint, body, headers=self.p.headers, timeout_s=self.p.settings.timeout_s
        )

        requests: list[AuditValues] = []
        opened: list[int] = []

        async def send_audited() -> Exchange:
            if self._writer.failed is not None:
                raise self._writer.failed  # an earlier attempt could not be stored: nothing more is sent
            # The request's row is committed before it goes out (and fenced by the lease).
            opened.append(
                await self._writer.open(
                    endpoint=entry.endpoint, model=entry.model, task_id=task.id, attempt=number, run_id=run.id
                )
            )
            exchange = await send()
            self._answered += exchange.status == 200
            return exchange

        def audit(ex: Exchange) -> None:
            values = audit_values_of(
                ex, endpoint=entry.endpoint, model=entry.model, task_id=task.id, attempt=number, run_id=run.id
            )
            values["id"] = opened[-1]  # completes the row opened before sending
            requests.append(values)

        exchange, retries = await with_retries(send_audited, self.retry, on_exchange=audit, rng=self._rng)
        result, answer, unavailable = await self._score(task, number, exchange)
        acc = exchange.acc
        prompt, completion = acc.tokens() if acc else (None, None)
        notes = exchange.notes + (acc.notes if acc else [])
        outcome, error_class, error = result.outcome, exchange.error_class, exchange.error
        if unavailable is not None:
            # The model answered but no scorer could be run: nothing measured, the task stays
            # not done (a resume asks again), and the answer is kept as evidence.
            error_class, error = ErrorClass.SCORER_UNAVAILABLE, unavailable
        ttft, e2e = (_round(acc.ttft_ms()), _round(acc.e2e_ms())) if acc else (None, None)
        # The row itself, not a validated `AttemptRecord` (a sixth of an attempt's CPU at 64
        # in flight): every value is typed here, and the store validates each row it reads back.
        row = attempt_values(
            run_id=run.id,
            task_id=task.id,
            attempt=number,
            outcome=outcome,
            answer_text=answer.text,
            tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in answer.tool_calls],
            reasoning=answer.reasoning,
            score_detail=result.detail,
            score_data=result.data | ({"notes": notes} if notes else {}),
            isolation=result.isolation,
            error_class=error_class,
            error=error,
            ttft_ms=ttft,
            e2e_ms=e2e,
            prompt_tokens=prompt,
            completion_tokens=completion,
            usage_missing=error_class is None and (acc is None or acc.usage is None),
            server_timings=acc.timings if acc else None,
            started_at=started,
            finished_at=now_iso(),
            retries=retries,
            finish_reason=acc.finish_reason if acc else None,
            cached_tokens=acc.cached_tokens() if acc else None,
        )
        # Observers see an attempt that measured nothing as `not_done`, ending its task for
        # this execution (the store keeps the error for the report's caveat and the resume).
        shown: Outcome | NotDone = outcome if measured(outcome, error_class) else NOT_DONE
        done = shown in TASK_ENDING_OUTCOMES or shown == NOT_DONE or number >= self.p.settings.attempts
        finished = AttemptFinished(
            run.id, run.model_name, task.id, number, shown, done, ttft, e2e, prompt, completion, retries, error
        )

        def committed() -> None:
            self._counts[shown] += 1
            self.observer.on_event(finished)
            if self.schedule is not None:
                self._tell_schedule(task.id, shown, done)

        # With its requests' audit rows, in one transaction; told to observers once committed.
        # The worker goes on meanwhile: its next request's `sent` row joins that transaction.
        self._writer.submit(requests, row, then=committed)
        return outcome, error_class, error

    def _tell_schedule(self, task_id: str, shown: Outcome | NotDone, done: bool) -> None:
        """Hand the schedule the task's outcome once the task has ended and is stored."""
        assert self.schedule is not None
        if shown != NOT_DONE:
            self._task_outcomes.setdefault(task_id, []).append(shown)
        if done:
            ended = NOT_DONE if shown == NOT_DONE else task_outcome(self._task_outcomes[task_id])
            self.schedule.task_ended(self.p.run.id, task_id, ended)

    async def _score(self, task: Task, number: int, exchange: Exchange) -> tuple[ScoreResult, Answer, str | None]:
        """The scorer's result, the answer, and why no scorer could be run (None when one was)."""
        if exchange.error_class is not None or exchange.acc is None:
            return ScoreResult(Outcome.ERROR, exchange.error or "no answer"), Answer(), None
        answer = exchange.acc.answer()
        item = ScoreItem(task, number, answer, self.p.goldset.scorer_for(task))
        async with aclosing(self.scorers.score_batch(self.p.goldset, [item])) as results:
            async for scored in results:
                if scored.result is not None:
                    return scored.result, answer, None
                reason = scored.unavailable or "no scorer could be run"
                return ScoreResult(Outcome.ERROR, reason), answer, reason
        raise AssertionError("a scorer executor returned nothing for an item")  # the seam's contract

    def _recorded(self) -> dict[str, dict[int, str]]:
        """task id → attempt number → outcome, for the attempts that measured something."""
        recorded: dict[str, dict[int, str]] = {}
        for attempt in self.store.attempts_for_run(self.p.run.id):
            if measured(attempt.outcome, attempt.error_class):
                recorded.setdefault(attempt.task_id, {})[attempt.attempt] = attempt.outcome
        return recorded

    def _outcome(self, pending: int) -> tuple[RunStatus, str | None]:
        """The status a run ends in once its workers finish, and why when not `completed`."""
        not_done = self._not_measured.total()
        unsent = 0 if self.schedule is None else self.schedule.unsent(self.p.run.id, pending, self._tried)
        skipped = pending - self._tried - unsent
        if unsent and not not_done and not skipped:
            return RunStatus.SETTLED, (
                f"{unsent} of {len(self.p.goldset.tasks)} tasks not sent: every verdict it serves had settled "
                "(not failures); "
                f"`compare-tui run --resume {self.p.run.id} --full-set` sends them"
            )
        if not not_done and not skipped:
            return RunStatus.COMPLETED, None
        reasons = "; ".join(
            f"{cls or 'unclassified'} ×{n} ({self._not_measured_example[cls]})"
            for cls, n in self._not_measured.most_common()
        )
        text = f"{not_done + skipped} of {len(self.p.goldset.tasks)} tasks not done: nothing was measured"
        if reasons:
            text += f" ({reasons})"
        if skipped:
            text += f"; {skipped} not tried after {OUTAGE_AFTER} failed connections in a row (the server, or the one behind the gateway, looks down)"
        return (
            RunStatus.INCOMPLETE,
            text + f"; resume with `compare-tui run --resume {self.p.run.id}` once it answers",
        )

    def _sampler(self) -> MemorySampler | None:
        if self.p.entry.kind != ModelKind.LOCAL:
            return None
        sampler = self.gpu_sampler or memory_sampler(self.gpu_telemetry or self.p.entry.serving.gpu_telemetry)
        sampler.start()
        return sampler

    def _kv_cache_sampler(self) -> KvCacheSampler | None:
        """vLLM's KV-cache fill, read beside the GPU figure (None for any other server)."""
        if not serves_vllm(self.p.run.serving):
            return None
        sampler = KvCacheSampler(self.p.entry.endpoint, self.p.entry.model, self.p.headers)
        sampler.start()
        return sampler

    def _finish(
        self,
        status: RunStatus,
        error: str | None,
        sampler: MemorySampler | None,
        token: str,
        kv_cache: KvCacheSampler | None = None,
    ) -> None:
        run = self.p.run
        if sampler is not None:
            gpu: dict[str, Any] = asdict(sampler.stop())
        else:
            gpu = {"measured": False, "reason": "hosted model: the GPU is not on this machine"}
        if kv_cache is not None:
            gpu["kv_cache"] = kv_cache.stop()
        try:
            # Only the lease holder writes the run's status (a process that lost it writes nothing).
            self.store.update_run(run.id, gpu=gpu, lease_token=token)
            self.store.update_run_status(run.id, status, finished_at=now_iso(), error=error, lease_token=token)
        except Exception:  # noqa: BLE001 - the store may be the thing that failed (disk full), or the lease lost
            pass
        self.observer.on_event(
            RunFinished(
                run.id, run.model_name, status, dict(self._counts), error, gpu=gpu, model_kind=self.p.entry.kind
            )
        )

    def _prior_counts(self) -> dict[str, int]:
        """Task outcomes an earlier execution of this run recorded, as the store tallies them."""
        s = self.store.pass_rate_summary(self.p.run.id)
        return {"pass": s.passed, "fail": s.failed, "review": s.review, "error": s.errored}


def ended_tasks(store: Store, run_id: str) -> dict[str, str]:
    """task id → outcome of the run's tasks that have ended (as a resume would not send them again)."""
    run = store.get_run_exact(run_id)
    attempts = int(run.settings.get("attempts", 1))
    recorded: dict[str, dict[int, str]] = {}
    for attempt in store.attempts_for_run(run_id):
        if measured(attempt.outcome, attempt.error_class):
            recorded.setdefault(attempt.task_id, {})[attempt.attempt] = attempt.outcome
    return {task_id: task_outcome(by.values()) for task_id, by in recorded.items() if _task_done(by, attempts)}


def _task_done(prior: dict[int, str], attempts: int) -> bool:
    return (
        any(outcome in TASK_ENDING_OUTCOMES for outcome in prior.values())
        or len(prior) >= attempts
        and max(prior, default=0) >= attempts
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
