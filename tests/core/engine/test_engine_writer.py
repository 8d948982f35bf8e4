"""The engine's group commit (`AttemptWriter`) over a real WAL store: attempts queued together
land in one transaction with their audit rows, a worker's write returns only once committed,
a failed commit reaches every worker of its batch, and a cancelled waiter loses nothing."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from compare_tui.engine.writer import AttemptWriter
from compare_tui.store import AuditRow, Store, StoreError
from tests.core.store.test_store import attempt, full_run


def audit(task_id: str, n: int = 1) -> AuditRow:
    return AuditRow(
        run_id="run-aaaa",
        task_id=task_id,
        attempt=n,
        endpoint="http://e/v1",
        model="m",
        status=200,
        bytes_in=1,
        bytes_out=2,
        prompt_tokens=3,
        completion_tokens=4,
        duration_ms=1.0,
        error_class=None,
    )


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "runs.sqlite") as opened:
        opened.create_run(full_run())
        yield opened


async def test_attempts_queued_together_commit_together_with_their_audit_rows(store):
    writer = AttemptWriter(store)
    tasks = [f"t{i:03d}" for i in range(200)]

    async def one(task_id: str) -> int:
        await writer.write([audit(task_id), audit(task_id)], attempt("run-aaaa", task_id))
        # Returned: it is committed, readable by another connection.
        with sqlite3.connect(store.path) as other:
            return other.execute("SELECT count(*) FROM attempts WHERE task_id = ?", [task_id]).fetchone()[0]

    seen = await asyncio.gather(*(one(t) for t in tasks))
    assert seen == [1] * len(tasks)
    assert 1 <= writer.batches < len(tasks)  # grouped: far fewer transactions than attempts
    assert writer.waited == 0  # nobody else held the lock: every batch committed on the loop
    assert sorted(a.task_id for a in store.attempts_for_run("run-aaaa")) == tasks
    ledger = [row.task_id for row in store.audit_for_run("run-aaaa")]
    assert sorted(ledger) == sorted(tasks * 2)


async def test_batches_are_bounded(store):
    writer = AttemptWriter(store, max_batch=7)
    await asyncio.gather(*(writer.write([], attempt("run-aaaa", f"t{i}")) for i in range(50)))
    assert writer.batches >= 50 // 7 and len(store.attempts_for_run("run-aaaa")) == 50


async def test_a_failed_commit_reaches_every_worker_of_its_batch_and_writes_nothing(store):
    writer = AttemptWriter(store)
    # One attempt of an unknown run: the whole transaction is refused (attempt and audit rows).
    stray = attempt("run-nope", "x")
    results = await asyncio.gather(
        writer.write([audit("a")], attempt("run-aaaa", "a")), writer.write([], stray), return_exceptions=True
    )
    assert all(isinstance(r, StoreError) for r in results), results
    assert "no such run" in str(results[1])
    assert store.attempts_for_run("run-aaaa") == [] and store.audit_for_run("run-aaaa") == []
    # The writer goes on afterwards.
    await writer.write([audit("b")], attempt("run-aaaa", "b"))
    assert [a.task_id for a in store.attempts_for_run("run-aaaa")] == ["b"]


async def test_inline_writes_each_attempt_at_once(store):
    writer = AttemptWriter(store, inline=True)
    await asyncio.gather(*(writer.write([audit(f"t{i}")], attempt("run-aaaa", f"t{i}")) for i in range(5)))
    assert writer.batches == 5 and len(store.audit_for_run("run-aaaa")) == 5
    with pytest.raises(StoreError, match="no such run"):
        await writer.write([], attempt("run-nope", "x"))


async def test_a_cancelled_waiter_still_has_its_attempt_committed(store):
    writer = AttemptWriter(store)
    waiter = asyncio.create_task(writer.write([audit("c")], attempt("run-aaaa", "c")))
    await asyncio.sleep(0)  # queued, the commit under way
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await writer.drain()
    assert [a.task_id for a in store.attempts_for_run("run-aaaa")] == ["c"]
    assert [r.task_id for r in store.audit_for_run("run-aaaa")] == ["c"]


async def test_a_store_locked_by_another_writer_is_waited_for_on_a_thread_never_on_the_loop(store):
    writer = AttemptWriter(store)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer (the TUI saving a label) holds the lock
    try:
        pending = asyncio.create_task(writer.write([audit("d")], attempt("run-aaaa", "d")))
        # The loop goes on: were it waiting in SQLite's busy handler, this sleep would not end
        # before the lock is released, which happens only after it.
        await asyncio.sleep(0.2)
        assert not pending.done()
        assert other.execute("SELECT count(*) FROM attempts").fetchone()[0] == 0
    finally:
        other.execute("COMMIT")
        other.close()
    await pending  # committed once the lock came free
    assert writer.waited == 1
    assert [a.task_id for a in store.attempts_for_run("run-aaaa")] == ["d"]
    assert [r.task_id for r in store.audit_for_run("run-aaaa")] == ["d"]


def test_a_write_that_must_not_wait_writes_nothing_while_the_store_is_locked(store):
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert store.record_outcomes([([audit("e")], attempt("run-aaaa", "e"))], wait=False) is None
    finally:
        other.execute("COMMIT")
        other.close()
    assert store.attempts_for_run("run-aaaa") == [] and store.audit_for_run("run-aaaa") == []
    assert store.record_outcomes([([audit("e")], attempt("run-aaaa", "e"))], wait=False) == 1
    assert [a.task_id for a in store.attempts_for_run("run-aaaa")] == ["e"]


async def test_a_submitted_attempt_and_the_next_requests_sent_row_share_one_commit_then_observers_hear(store):
    writer = AttemptWriter(store)
    heard: list[int] = []

    def then() -> None:
        # Called once committed: another connection already reads the attempt.
        with sqlite3.connect(store.path) as other:
            heard.append(other.execute("SELECT count(*) FROM attempts WHERE task_id = 'a'").fetchone()[0])

    confirmed = writer.submit([audit("a")], attempt("run-aaaa", "a"), then=then)
    assert heard == [] and not confirmed.done()  # nothing committed yet: nobody told
    opened = await writer.open(endpoint="http://e/v1", model="m", task_id="b", attempt=1, run_id="run-aaaa")
    assert confirmed.done() and heard == [1]
    assert writer.batches == 1  # the attempt and the next request's `sent` row: one transaction
    with sqlite3.connect(store.path) as other:
        assert other.execute("SELECT state FROM audit WHERE id = ?", [opened]).fetchone() == ("sent",)
    assert writer.failed is None


async def test_a_failed_submit_tells_nobody_and_is_kept(store):
    writer = AttemptWriter(store)
    heard: list[str] = []
    confirmed = writer.submit([], attempt("run-nope", "x"), then=lambda: heard.append("x"))
    with pytest.raises(StoreError, match="no such run"):
        await writer.open(endpoint="http://e/v1", model="m", task_id="y", attempt=1, run_id="run-aaaa")
    await writer.drain()
    assert heard == [] and isinstance(confirmed.exception(), StoreError)
    assert isinstance(writer.failed, StoreError)
    assert store.audit_for_run("run-aaaa") == []  # the `sent` row of the same batch was not written either
