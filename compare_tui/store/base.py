"""The store's connection: opening, closing, and the two ways every accessor touches SQLite.

Accessors live in small mixins (`runs.py`, `attempts.py`, `reviews.py`, `comparisons.py`)
over this base; `store.Store` puts them together.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from compare_tui.paths import store_path
from compare_tui.store.connection import Busy, open_database, with_retry, write_if_free
from compare_tui.store.errors import AmbiguousIdError, RunNotFoundError, StoreError, translate

T = TypeVar("T")


class StoreBase:
    """An open store file. Thread-safe: one lock serialises use of the one connection."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        """Use `Store.open(path)`; this wraps an already opened and migrated database."""
        self._db: sqlite3.Connection | None = db
        self._path = path
        self._lock = threading.RLock()

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Self:
        """Open the store at `path` (default: `paths.store_path()`), creating it if absent.

        Raises `StoreError` for a file that is not SQLite, someone else's SQLite database, a
        damaged file or a store from a newer compare-tui; such files are never modified.
        """
        resolved = store_path(path).expanduser()
        return cls(open_database(resolved), resolved)

    @property
    def path(self) -> Path:
        """The store file."""
        return self._path

    @property
    def schema_version(self) -> int:
        """The schema version this store is at (always the current one once open)."""
        rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(rows[0]["value"]) if rows else 0

    def close(self) -> None:
        """Close the connection. Safe to call twice; any later use raises `StoreError`."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- plumbing

    def _database(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"the store at {self._path} is closed")
        return self._db

    def _read(
        self,
        sql: str,
        params: Sequence[Any] | dict[str, Any] = (),
        *,
        typed: Mapping[str, tuple[Mapping[object, object], object]] | None = None,
    ) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts, fully fetched (the lock is not held past the call). `typed`:
        column → (stored value → typed value, the value of one not there), applied as each row is made."""
        with self._lock:
            try:
                cursor = self._database().execute(sql, params)
                names = [column[0] for column in cursor.description or ()]
                fetched = cursor.fetchall()
            except sqlite3.Error as exc:
                raise translate(exc, self._path) from exc
        cells = [(name, known.get, other) for name, (known, other) in (typed or {}).items() if name in names]
        if not cells:
            return [dict(zip(names, row)) for row in fetched]
        found = []
        for row in fetched:
            values = dict(zip(names, row))
            for name, convert, other in cells:
                values[name] = convert(values[name], other)
            found.append(values)
        return found

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` as one short write transaction, retried while another writer holds the lock."""
        with self._lock:
            return with_retry(self._database(), self._path, work)

    def _write_if_free(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`_write`, but only if nobody holds the lock now (another thread of this process, or
        another writer of the file); else raise `connection.Busy` at once, having written and
        waited for nothing."""
        if not self._lock.acquire(blocking=False):
            raise Busy(f"the store at {self._path} is being written by another thread")
        try:
            return write_if_free(self._database(), self._path, work)
        finally:
            self._lock.release()

    # For modules that keep tables of their own in this file (tool-call runs): the store's
    # lock, transaction and busy retry, and its translation of SQLite errors.

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts, fully fetched."""
        return self._read(sql, params)

    def write_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` as one short write transaction (retried while another writer holds the lock)."""
        return self._write(work)

    def _resolve(self, table: str, id_or_prefix: str, noun: str) -> dict[str, Any]:
        """The one row of `table` whose id is, or starts with, `id_or_prefix`."""
        if not id_or_prefix:
            raise RunNotFoundError(f"no {noun} id given")
        rows = self._read(f"SELECT * FROM {table} WHERE id = ?", [id_or_prefix])
        if not rows:
            rows = self._read(
                f"SELECT * FROM {table} WHERE substr(id, 1, ?) = ? ORDER BY created_at DESC LIMIT 6",
                [len(id_or_prefix), id_or_prefix],
            )
        if not rows:
            raise RunNotFoundError(f"no {noun} with id {id_or_prefix!r} in the store at {self._path}")
        if len(rows) > 1:
            shown = ", ".join(row["id"] for row in rows[:5]) + (", …" if len(rows) > 5 else "")
            raise AmbiguousIdError(
                f"{noun} id prefix {id_or_prefix!r} matches several {noun}s ({shown}); type more of it"
            )
        return rows[0]
