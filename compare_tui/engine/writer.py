"""Group commit for finished attempts: workers hand an attempt (with the audit rows of its
requests) to one writer and await its commit; the writer writes every attempt that queued up
meanwhile in one transaction, on a thread, so the event loop never waits on SQLite.

With one request in flight (`inline=True`, concurrency 1) there is nothing to group and
nobody else on the loop to wait: the attempt is written at once, which is cheaper than the
thread hop (bench/bench_engine_overhead.py at concurrency 1: 449 req/s inline, 302 through
the thread).

Why: at high concurrency two short transactions per attempt on the event loop queued every
request behind the disk (bench/bench_engine_overhead.py: +43 ms p99 at concurrency 64), and a
busy store (the TUI saving a review label) stalled the whole loop in SQLite's busy handler.
An attempt still counts as recorded only once its transaction has committed: a worker's
`write` returns after that, and a failure (disk full, read-only) is raised to every worker
whose attempt was in the failed batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from compare_tui.store import AttemptRecord, AuditRow, Store

MAX_BATCH = 512
"""At most this many attempts per transaction (keeps one commit short)."""


class AttemptWriter:
    """One per run, used from that run's event loop only."""

    def __init__(self, store: Store, *, max_batch: int = MAX_BATCH, inline: bool = False) -> None:
        self.store = store
        self.inline = inline
        self.max_batch = max_batch
        self._queue: list[tuple[Sequence[AuditRow], AttemptRecord, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches = 0
        """Transactions committed (tests and benchmarks read it)."""

    async def write(self, audits: Sequence[AuditRow], attempt: AttemptRecord) -> None:
        """Queue `attempt` and its requests' audit rows; return once they are committed."""
        if self.inline:
            self.store.record_outcomes([(audits, attempt)])
            self.batches += 1
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((audits, attempt, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        # Shielded: a worker cancelled while waiting must not cancel the commit of the others.
        await asyncio.shield(done)

    async def drain(self) -> None:
        """Wait until everything queued so far is committed or has failed (errors stay with
        the workers that wrote them)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait({self._flusher})

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch:]
            try:
                await asyncio.to_thread(self.store.record_outcomes, [(audits, attempt) for audits, attempt, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to each waiting worker
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                        done.exception()  # a worker cancelled meanwhile never reads it: no "never retrieved" noise
                continue
            self.batches += 1
            for *_, done in batch:
                if not done.done():
                    done.set_result(None)
