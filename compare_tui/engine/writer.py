"""Group commit for a run's writes: workers hand an attempt (with the audit rows of its
requests) to one writer and await its commit, and open each request's audit row (`sent`)
through it before the request goes out (`open`); the writer writes every attempt and every
`sent` row that queued up meanwhile in one transaction. A request leaves only once its row is
committed, as with `engine.audit.RequestLedger`, but the rows of the requests about to go out
share their commit with the attempts just finished: one commit per loop tick instead of two.

The transaction runs on the event loop when the store's write lock is free at that moment
(`Store.commit_requests(wait=False)`: SQLite's busy handler off, nothing waited for), and on a
thread only when another writer holds the lock (the TUI saving a review label, a second run on
the same store), so the loop never waits in SQLite's busy handler. Why not always on a thread:
with the thread, the loop and the writer thread handed the GIL to each other on every row,
which cost more CPU per attempt than the request itself at high concurrency
(bench/RESULTS.md, "Engine overhead", measures it); a WAL commit at `synchronous = NORMAL` does not fsync,
so committing a batch on the loop costs its rows' CPU and no disk wait.

`inline=True` writes each attempt and `sent` row at once, in its own transaction. The engine
does not use it, even with one request in flight: there a worker hands its attempt over
(`submit`) and goes on, so its next request's `sent` row shares the attempt's commit (one
transaction per attempt instead of two).

An attempt still counts as recorded only once its transaction has committed: a worker's
`write` returns after that, `submit`'s `then` is called after it (the engine tells observers
there), and a failure (disk full, read-only, the lease lost) is raised to every worker whose
attempt or `sent` row was in the failed batch and kept in `failed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from compare_tui.store import AttemptRecord, AuditRow, Store, utc_now
from compare_tui.store.rows import AttemptValues, AuditValues, audit_values

Audits = Sequence[AuditRow | AuditValues]
Attempt = AttemptRecord | AttemptValues
"""A record, or its row already made (`store.rows.attempt_values`/`audit_values`)."""

MAX_BATCH = 512
"""At most this many attempts per transaction (keeps one commit short)."""


class AttemptWriter:
    """One per run, used from that run's event loop only."""

    def __init__(
        self, store: Store, *, max_batch: int = MAX_BATCH, inline: bool = False, lease_token: str | None = None
    ) -> None:
        """`lease_token`: write only while it holds the run's lease (`store.record_outcomes`)."""
        self.store = store
        self.lease_token = lease_token
        self.inline = inline
        self.max_batch = max_batch
        self._queue: list[tuple[Audits, Attempt, asyncio.Future[None], Callable[[], None] | None]] = []
        self._opening: list[tuple[AuditValues, asyncio.Future[int]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches = 0
        """Transactions committed (tests and benchmarks read it)."""
        self.waited = 0
        """Of those, committed on a thread because another writer held the lock."""
        self.failed: BaseException | None = None
        """The first failure of a batch (or of a `submit` callback), for callers that do not
        await each write."""

    async def write(self, audits: Audits, attempt: Attempt) -> None:
        """Queue `attempt` and its requests' audit rows; return once they are committed."""
        if self.inline:
            self.store.record_outcomes([(audits, attempt)], lease_token=self.lease_token)
            self.batches += 1
            return
        # A worker cancelled while waiting cancels only its own future: the batch it is in
        # still commits (the flusher is its own task and skips futures already done).
        await self.submit(audits, attempt)

    def submit(
        self, audits: Audits, attempt: Attempt, *, then: Callable[[], None] | None = None
    ) -> asyncio.Future[None]:
        """Queue `attempt` and its requests' audit rows without waiting: `then` is called right
        after they are committed (what must not happen before: telling observers), and the
        future is done then. A worker that goes on meanwhile has its next request's `sent` row
        (`open`) committed in the same transaction. A failure is the future's and `failed`'s."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((audits, attempt, done, then))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return done

    async def open(self, *, endpoint: str, model: str, task_id: str, attempt: int, run_id: str) -> int:
        """Commit a request's audit row as `sent` (fenced by the lease: `LeaseLostError` once
        lost, nothing written) and return its id, for the completed row's `id`. Call it right
        before the request goes out: it returns only once the row is committed."""
        row = audit_values(
            run_id=run_id, task_id=task_id, attempt=attempt, endpoint=endpoint, model=model, at=utc_now()
        )
        if self.inline:
            opened = self.store.open_requests([row], lease_token=self.lease_token)
            assert opened is not None  # waited for the lock
            return opened[0]
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._opening.append((row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await done

    async def drain(self) -> None:
        """Wait until everything queued so far is committed or has failed (errors stay with
        the workers that wrote them)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait({self._flusher})

    async def _flush(self) -> None:
        while self._queue or self._opening:
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            opening, self._opening = self._opening[: self.max_batch], self._opening[self.max_batch :]
            outcomes = [(audits, attempt) for audits, attempt, _, _ in batch]
            rows = [row for row, _ in opening]
            waiting: list[asyncio.Future[Any]] = [done for _, _, done, _ in batch] + [done for _, done in opening]
            try:
                ids = self.store.commit_requests(rows, outcomes, wait=False, lease_token=self.lease_token)
                if ids is None:
                    # Another writer holds the lock: wait for it on a thread, never on the loop.
                    ids = await asyncio.to_thread(
                        self.store.commit_requests, rows, outcomes, lease_token=self.lease_token
                    )
                    self.waited += 1
            except Exception as exc:  # noqa: BLE001 - handed to each waiting worker
                self.failed = self.failed or exc
                for done in waiting:
                    if not done.done():
                        done.set_exception(exc)
                        done.exception()  # a worker cancelled meanwhile never reads it: no "never retrieved" noise
                continue
            assert ids is not None
            self.batches += 1
            for _, _, done, then in batch:
                try:
                    if then is not None:
                        then()
                except Exception as exc:  # noqa: BLE001 - an observer's failure is its submitter's
                    self.failed = self.failed or exc
                    if not done.done():
                        done.set_exception(exc)
                        done.exception()
                    continue
                if not done.done():
                    done.set_result(None)
            for (_, opened), row_id in zip(opening, ids, strict=True):
                if not opened.done():
                    opened.set_result(row_id)  # a cancelled sender's row stays `sent`, then `cancelled`
