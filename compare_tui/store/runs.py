"""Run accessors: create, look up (by id or unique prefix), list, update, delete."""

from __future__ import annotations

import sqlite3
from typing import Any

from compare_tui.store import rows
from compare_tui.store.base import StoreBase
from compare_tui.store.errors import RunNotFoundError, StoreError
from compare_tui.store.leases import LeaseLostError, fenced
from compare_tui.store.records import RunRecord, utc_now
from compare_tui.vocabulary import FINISHED_STATUSES, RunStatus

# Identity and birth date are fixed once a run exists; everything else may be filled in later.
_IMMUTABLE = {"id", "created_at"}


class RunAccessors(StoreBase):
    """Runs: one golden set × one model × settings."""

    def create_run(self, run: RunRecord) -> RunRecord:
        """Store a new run; `StoreError` when a run with its id already exists."""
        row = rows.run_row(run)

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(rows.INSERT_RUN, row)
            except sqlite3.IntegrityError:
                raise StoreError(f"a run with id {run.id} already exists in {self.path}") from None

        self._write(work)
        return run

    def get_run(self, run_id: str) -> RunRecord:
        """The run with this id, or with this unique id prefix.

        Raises `RunNotFoundError` when none matches, `AmbiguousIdError` when several do.
        """
        return rows.run_from(self._resolve("runs", run_id, "run"))

    def list_runs(
        self,
        *,
        goldset_id: str | None = None,
        model: str | None = None,
        status: RunStatus | str | None = None,
        limit: int | None = None,
    ) -> list[RunRecord]:
        """Runs, newest first, optionally only those of one golden set, model or status."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("goldset_id", goldset_id), ("model_name", model), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(str(RunStatus(value)) if column == "status" else value)
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "")
        # rowid breaks ties between runs created in the same microsecond.
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [rows.run_from(row) for row in self._read(sql, params)]

    def update_run(self, run_id: str, *, lease_token: str | None = None, **fields: Any) -> RunRecord:
        """Change some fields of a run (gpu, environment, provenance, …) and return it.

        The result is validated as a whole before anything is written; `id` and `created_at`
        cannot change. `run_id` must be the exact id (no prefix: writes are never guessed).
        With `lease_token`, only while that token holds the run's lease (else `LeaseLostError`,
        nothing written): the run's executor writes through its lease.
        """
        unknown = set(fields) - set(RunRecord.model_fields)
        fixed = set(fields) & _IMMUTABLE
        if unknown or fixed:
            raise ValueError(f"cannot update run field(s): {', '.join(sorted(unknown | fixed))}")

        def work(conn: sqlite3.Connection) -> RunRecord:
            if lease_token is not None and not fenced(conn, run_id, lease_token):
                raise LeaseLostError(f"run {run_id}: this process no longer holds its lease; it stops here")
            cursor = conn.execute("SELECT * FROM runs WHERE id = ?", [run_id])
            found = cursor.fetchone()
            if found is None:
                raise RunNotFoundError(f"no run with id {run_id!r} in the store at {self.path}")
            current = rows.run_from(dict(zip([d[0] for d in cursor.description], found, strict=True)))
            updated = RunRecord.model_validate({**current.model_dump(), **fields})
            row = rows.run_row(updated)
            assignments = ", ".join(f"{name} = :{name}" for name in fields)
            if assignments:
                conn.execute(
                    f"UPDATE runs SET {assignments} WHERE id = :id",
                    {**{name: row[name] for name in fields}, "id": run_id},
                )
            return updated

        return self._write(work)

    def update_run_status(
        self,
        run_id: str,
        status: RunStatus | str,
        *,
        finished_at: str | None = None,
        error: str | None = None,
        started_at: str | None = None,
        lease_token: str | None = None,
    ) -> RunRecord:
        """Move a run to `status` and record `error` (None clears an earlier one).

        Entering `running` stamps `started_at` (the given time, else now; only when the run has
        none yet, so a resume keeps the first start) and clears `finished_at`, so a resumed run
        reads as running. Entering `interrupted`, `incomplete`, `completed`, `failed` or `cancelled` stamps
        `finished_at` (now, unless given).
        """
        status = RunStatus(status)
        changes: dict[str, Any] = {"status": status, "error": error}
        if status is RunStatus.RUNNING:
            changes["finished_at"] = None
            if self.get_run_exact(run_id).started_at is None:
                changes["started_at"] = started_at or utc_now()
        elif status in FINISHED_STATUSES:
            changes["finished_at"] = finished_at or utc_now()
        elif finished_at is not None:
            changes["finished_at"] = finished_at
        return self.update_run(run_id, lease_token=lease_token, **changes)

    def get_run_exact(self, run_id: str) -> RunRecord:
        """The run with exactly this id (no prefix matching); `RunNotFoundError` if absent."""
        found = self._read("SELECT * FROM runs WHERE id = ?", [run_id])
        if not found:
            raise RunNotFoundError(f"no run with id {run_id!r} in the store at {self.path}")
        return rows.run_from(found[0])

    def delete_run(self, run_id: str) -> None:
        """Delete a run with its attempts, audit rows, reviews and comparison memberships.

        Takes the exact id only: a deletion is never made on a guessed prefix.
        """

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM runs WHERE id = ?", [run_id]).rowcount

        if not self._write(work):
            raise RunNotFoundError(f"no run with id {run_id!r} in the store at {self.path}")
