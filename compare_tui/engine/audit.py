"""The audit-ledger row of one chat request, made in one place for every sender.

Golden-set attempts, judge calls and tool-call scenarios each send through `client.py` and
record each request as one `AuditRow`: no headers, no body, only its measure (status, bytes,
tokens as the server reported them, duration and the `ErrorClass`).

A run's requests are written twice (`RequestLedger`; a golden-set run's through its group
commit, `writer.AttemptWriter.open`): the row is committed as `sent` before
the request goes out, and completed (`done`, with its measure) in the transaction that stores
the attempt. So a request that left the process is a row whatever happens next: a process
killed meanwhile leaves it `sent` (the next holder of the run's lease marks it `unknown`), one
that stops reading (Ctrl-C, SIGTERM) marks it `cancelled` as it releases the lease."""

from __future__ import annotations

import asyncio

from compare_tui.engine.exchange import Exchange
from compare_tui.store import AuditRow, Store, utc_now
from compare_tui.store.rows import AuditValues, audit_values
from compare_tui.vocabulary import AuditState


def audit_row(
    ex: Exchange,
    *,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None = None,
    run_id: str | None = None,
    toolcall_run_id: str | None = None,
) -> AuditRow:
    """The row for the request `ex` sent to `endpoint` for `model`, owned by a golden-set run
    (`run_id`), a tool-call run (`toolcall_run_id`) or neither (a judge call)."""
    return AuditRow.model_validate(_fields(ex, endpoint, model, task_id, attempt, run_id, toolcall_run_id))


def audit_values_of(
    ex: Exchange,
    *,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None = None,
    run_id: str | None = None,
) -> AuditValues:
    """`audit_row` as the row itself, unvalidated (as `store.rows.audit_values` makes one; its
    fields are every column): a golden-set run's hot path."""
    return _fields(ex, endpoint, model, task_id, attempt, run_id, None)


def _fields(
    ex: Exchange,
    endpoint: str,
    model: str,
    task_id: str | None,
    attempt: int | None,
    run_id: str | None,
    toolcall_run_id: str | None,
) -> AuditValues:
    prompt, completion = ex.tokens()
    return {
        "at": utc_now(),
        "run_id": run_id,
        "toolcall_run_id": toolcall_run_id,
        "task_id": task_id,
        "attempt": attempt,
        "endpoint": endpoint,
        "model": model,
        "status": ex.status,
        "bytes_in": ex.bytes_in,
        "bytes_out": ex.bytes_out,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "duration_ms": round(ex.duration_ms, 3),
        "error_class": ex.error_class,
        "state": AuditState.DONE.value,
    }


class RequestLedger:
    """Opens each request's audit row before it is sent, through the run's lease: a process
    that lost its lease can send nothing more (`LeaseLostError`). Used from one event loop.

    Group commit, as `writer.AttemptWriter` does for attempts: the rows of every request about
    to go out at the same moment are committed in one transaction (on the loop when the store's
    lock is free, else on a thread), so many requests in flight cost one commit, not one each."""

    MAX_BATCH = 512

    def __init__(self, store: Store, *, lease_token: str | None) -> None:
        self.store, self.lease_token = store, lease_token
        self._queue: list[tuple[AuditValues, asyncio.Future[int]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def open(
        self,
        *,
        endpoint: str,
        model: str,
        task_id: str | None,
        attempt: int | None = None,
        run_id: str | None = None,
        toolcall_run_id: str | None = None,
    ) -> int:
        """Commit the row (state `sent`) and return its id: put it in the completed row as `id`."""
        row = audit_values(
            run_id=run_id,
            toolcall_run_id=toolcall_run_id,
            task_id=task_id,
            attempt=attempt,
            endpoint=endpoint,
            model=model,
            at=utc_now(),
        )
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.append((row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await done

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[: self.MAX_BATCH], self._queue[self.MAX_BATCH :]
            rows = [row for row, _ in batch]
            try:
                # On the loop when the write lock is free (no wait), else on a thread.
                ids = self.store.open_requests(rows, lease_token=self.lease_token, wait=False)
                if ids is None:
                    ids = await asyncio.to_thread(self.store.open_requests, rows, lease_token=self.lease_token)
            except Exception as exc:  # noqa: BLE001 - handed to each waiting sender (a lost lease)
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                        done.exception()  # a sender cancelled meanwhile never reads it
                continue
            assert ids is not None
            for (_, done), opened in zip(batch, ids, strict=True):
                if not done.done():
                    done.set_result(opened)  # a cancelled sender's row stays `sent`, then `cancelled`
