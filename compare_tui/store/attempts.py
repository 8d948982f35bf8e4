"""Attempt and audit accessors: what the engine writes as each request finishes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import cast

from compare_tui.store import rows
from compare_tui.store.base import StoreBase
from compare_tui.store.connection import Busy
from compare_tui.store.errors import StoreError
from compare_tui.store.leases import LeaseLostError, fenced
from compare_tui.store.records import AttemptCells, AttemptRecord, AuditRow
from compare_tui.vocabulary import AuditState

_NARROW = frozenset(rows.NARROW_COLUMNS)


class AttemptAccessors(StoreBase):
    """Attempts (one request for one task) and the request audit log."""

    def record_attempt(self, attempt: AttemptRecord) -> None:
        """Write one finished attempt in its own short transaction.

        Idempotent: keyed by the deterministic id `run:task:attempt`, so writing it again
        (a resumed run, a retried write) replaces the row instead of adding one.
        """
        row = rows.attempt_row(attempt)
        self._write(lambda conn: self._upsert(conn, [row]))

    def record_attempts(self, attempts: Iterable[AttemptRecord]) -> int:
        """Write many attempts in one transaction (imports, tests); returns how many."""
        batch = [rows.attempt_row(attempt) for attempt in attempts]
        self._write(lambda conn: self._upsert(conn, batch))
        return len(batch)

    def open_request(self, row: rows.AuditValues, *, lease_token: str | None = None, wait: bool = True) -> int | None:
        """Write a request's audit row as `sent`, before the request goes out, and return its id
        (`record_outcomes` completes it). With `lease_token`, only while that token holds the
        lease of the row's run (else `LeaseLostError`, nothing written). With `wait=False`,
        None when another writer holds the lock (nothing written)."""
        opened = self.open_requests([row], lease_token=lease_token, wait=wait)
        return None if opened is None else opened[0]

    def open_requests(
        self, batch: Sequence[rows.AuditValues], *, lease_token: str | None = None, wait: bool = True
    ) -> list[int] | None:
        """`open_request` for several rows in one transaction (the engine's group commit); their ids."""
        return self.commit_requests(batch, (), lease_token=lease_token, wait=wait)

    def record_outcomes(
        self,
        outcomes: Sequence[tuple[Sequence[AuditRow | rows.AuditValues], AttemptRecord | rows.AttemptValues]],
        *,
        wait: bool = True,
        lease_token: str | None = None,
    ) -> int | None:
        """Write finished attempts, each with the audit rows of its requests, in one transaction
        (the engine's group commit): an attempt and its requests land together or not at all,
        so the audit ledger always matches the attempts. Returns how many attempts. Each
        attempt and audit row is a record, or a row already made (`rows.attempt_values`,
        `rows.audit_values`: the engine's hot path).

        With `wait=False` nothing waits for the write lock: when another thread or process holds
        it, nothing is written and this returns None (the engine's event loop then hands the
        write to a thread, which waits).

        An audit row carrying the `id` of a row written before its request went out
        (`open_request`) completes that row instead of adding one. With `lease_token`, nothing
        is written unless that token holds the lease of every run in the batch
        (`LeaseLostError`)."""
        committed = self.commit_requests((), outcomes, lease_token=lease_token, wait=wait)
        return None if committed is None else len(outcomes)

    def commit_requests(
        self,
        opened: Sequence[rows.AuditValues],
        outcomes: Sequence[tuple[Sequence[AuditRow | rows.AuditValues], AttemptRecord | rows.AttemptValues]],
        *,
        lease_token: str | None = None,
        wait: bool = True,
    ) -> list[int] | None:
        """`open_requests(opened)` and `record_outcomes(outcomes)` in one transaction (the
        engine's group commit: the requests about to go out and the attempts just finished
        cost one commit, not two); the ids of the `opened` rows, in order. Both land together
        or not at all; `lease_token` and `wait` as for those two."""
        values: list[rows.AuditValues] = [{**row, "state": AuditState.SENT.value} for row in opened]
        audits = [row if isinstance(row, dict) else rows.audit_row(row) for requests, _ in outcomes for row in requests]
        batch = [attempt if isinstance(attempt, dict) else rows.attempt_row(attempt) for _, attempt in outcomes]
        owners = {str(owner) for row in values if (owner := row.get("run_id") or row.get("toolcall_run_id"))}
        owners |= {str(row["run_id"]) for row in batch}

        def work(conn: sqlite3.Connection) -> list[int]:
            if lease_token is not None:
                for owner in sorted(owners):
                    if not fenced(conn, owner, lease_token):
                        raise LeaseLostError(
                            f"run {owner}: this process no longer holds its lease; nothing more is sent or written"
                        )
            if audits:
                done = [row for row in audits if row.get("id") is not None]
                if done:
                    conn.executemany(rows.COMPLETE_AUDIT, [(*rows.audit_params(row), row["id"]) for row in done])
                try:
                    conn.executemany(
                        rows.INSERT_AUDIT, [rows.audit_params(row) for row in audits if row.get("id") is None]
                    )
                except sqlite3.IntegrityError:
                    run_ids = sorted({str(row["run_id"]) for row in audits})
                    raise StoreError(
                        f"cannot audit requests of run {', '.join(run_ids)}: no such run in {self.path}"
                    ) from None
            if batch:
                self._upsert(conn, batch)
            return [int(conn.execute(rows.INSERT_AUDIT, rows.audit_params(row)).lastrowid or 0) for row in values]

        if wait:
            return self._write(work)
        try:
            return self._write_if_free(work)
        except Busy:
            return None

    def _upsert(self, conn: sqlite3.Connection, batch: list[rows.AttemptValues]) -> None:
        try:
            conn.executemany(rows.UPSERT_ATTEMPT, [rows.attempt_params(row) for row in batch])
        except sqlite3.IntegrityError:
            run_ids = sorted({row["run_id"] for row in batch})
            raise StoreError(
                f"cannot record attempts for run {', '.join(run_ids)}: no such run in {self.path} "
                "(create the run before recording its attempts)"
            ) from None

    def attempts_for_run(self, run_id: str) -> list[AttemptRecord]:
        """Every recorded attempt of a run, ordered by task id, then attempt number."""
        found = self._read("SELECT * FROM attempts WHERE run_id = ? ORDER BY task_id, attempt", [run_id])
        return [rows.attempt_from(row) for row in found]

    def attempt_columns(self, run_id: str, columns: Sequence[str]) -> list[AttemptCells]:
        """Only `columns` of a run's attempts (`AttemptCells`), ordered by task then attempt.

        For readers of many rows (the report), which cannot afford to validate whole records:
        the outcome and error class become their enums here, once; JSON columns stay text.
        """
        unknown = set(columns) - _NARROW
        if unknown:
            raise ValueError(f"not a readable attempt column: {', '.join(sorted(unknown))}")
        sql = f"SELECT {', '.join(columns)} FROM attempts WHERE run_id = ? ORDER BY task_id, attempt"
        # Each row's typed cells converted as the row is made (one pass over the rows: a
        # 10,000-row report reads every row through here).
        return cast(list[AttemptCells], self._read(sql, [run_id], typed=rows.CELL_TYPES))

    def completed_keys(self, run_id: str, *, include_errors: bool = True) -> set[tuple[str, int]]:
        """`(task_id, attempt)` of every recorded attempt: the work a resumed run skips.

        With `include_errors=False`, attempts whose outcome is `error` are left out, so a
        resume can try them again (their rows are replaced when they finish).
        """
        sql = "SELECT task_id, attempt FROM attempts WHERE run_id = ?"
        if not include_errors:
            sql += " AND outcome != 'error'"
        return {(row["task_id"], row["attempt"]) for row in self._read(sql, [run_id])}

    def record_audit(self, row: AuditRow) -> AuditRow:
        """Append one request to the audit log; returns it with its assigned id. A row with an
        `id` completes the row `open_request` wrote before the request went out."""
        data = rows.audit_row(row)

        def work(conn: sqlite3.Connection) -> int:
            if row.id is not None:
                conn.execute(rows.COMPLETE_AUDIT, (*rows.audit_params(data), row.id))
                return row.id
            try:
                return int(conn.execute(rows.INSERT_AUDIT, rows.audit_params(data)).lastrowid or 0)
            except sqlite3.IntegrityError:
                raise StoreError(f"cannot audit a request of run {row.run_id}: no such run in {self.path}") from None

        return row.model_copy(update={"id": self._write(work)})

    def audit_for_run(self, run_id: str) -> list[AuditRow]:
        """A run's audit log in the order the requests were recorded."""
        found = self._read("SELECT * FROM audit WHERE run_id = ? ORDER BY id", [run_id])
        return [AuditRow.model_validate(row) for row in found]

    def audit_for_toolcall_run(self, toolcall_run_id: str) -> list[AuditRow]:
        """A tool-call run's audit log (one row per request) in the order recorded."""
        found = self._read("SELECT * FROM audit WHERE toolcall_run_id = ? ORDER BY id", [toolcall_run_id])
        return [AuditRow.model_validate(row) for row in found]
