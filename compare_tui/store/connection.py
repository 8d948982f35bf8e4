"""Opening a store file safely, and write transactions that survive a second writer.

Opening never writes to a file until it is known to be an empty file or one of our stores:
someone else's database, a damaged file or a store from a newer compare-tui is refused with a
`StoreError` and left byte-for-byte as it was. (`journal_mode=WAL` is persistent in the file
header, so it is switched on only after that check.)
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from compare_tui.store import schema
from compare_tui.store.errors import StoreError, is_busy, translate

T = TypeVar("T")

BUSY_TIMEOUT_S = 10.0
"""How long SQLite itself waits for another writer before reporting the store busy."""
WRITE_RETRIES = 6
"""Further tries, with jittered backoff, after SQLite's own wait has run out."""

_SQLITE_HEADER = b"SQLite format 3\x00"


def _check_header(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a compare-tui store; pass --store with a file path")
    if not path.exists():
        return
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read the store at {path}: {exc.strerror or exc}") from exc
    # An empty file is an empty SQLite database (SQLite itself treats it so).
    if head and head != _SQLITE_HEADER:
        raise StoreError(f"{path} is not a compare-tui store (not an SQLite database); move it aside or pass --store")


def _refuse(path: Path, found: schema.Inspection) -> None:
    if found.kind == "foreign":
        shown = ", ".join(found.tables[:6]) + (", …" if len(found.tables) > 6 else "")
        raise StoreError(
            f"{path} is an SQLite database but not a compare-tui store (it has tables: {shown}); "
            "it was left untouched: pass --store to use another file"
        )
    if found.kind == "store" and found.version > schema.CURRENT_VERSION:
        raise StoreError(
            f"{path} was written by a newer compare-tui (store schema v{found.version}; this "
            f"version reads up to v{schema.CURRENT_VERSION}): upgrade compare-tui to open it"
        )


def open_database(path: Path) -> sqlite3.Connection:
    """Open (creating if absent) and migrate the store at `path`; `StoreError` if refused."""
    _check_header(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder for the store {path}: {exc.strerror or exc}") from exc
    try:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves (BEGIN IMMEDIATE for writes).
        # check_same_thread=False: TUI workers use the store from threads; `Store` serialises.
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    try:
        # Per-connection settings only: none of these writes to the file.
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        found = schema.inspect(conn)
        _refuse(path, found)
        with_retry(conn, path, lambda c: c.execute("PRAGMA journal_mode = WAL").fetchone(), transaction=False)
        conn.execute("PRAGMA synchronous = NORMAL")
        if found.kind == "empty" or found.version < schema.CURRENT_VERSION:
            with_retry(conn, path, lambda c: _migrate_locked(c, path))
    except sqlite3.Error as exc:
        conn.close()
        raise translate(exc, path) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate_locked(conn: sqlite3.Connection, path: Path) -> None:
    # Look again under the write lock: another process may have created or migrated the
    # store between our first look and now.
    found = schema.inspect(conn)
    _refuse(path, found)
    if found.kind == "empty":
        schema.migrate(conn, 0)
    elif found.version < schema.CURRENT_VERSION:
        schema.migrate(conn, found.version)


def _commit(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """Inside a transaction just begun: `work`, then COMMIT, or ROLLBACK on any failure."""
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def with_retry(
    conn: sqlite3.Connection, path: Path | str, work: Callable[[sqlite3.Connection], T], *, transaction: bool = True
) -> T:
    """Run `work` in one `BEGIN IMMEDIATE` transaction, retrying while another writer holds
    the lock. Other SQLite failures (disk full, read-only, damaged) become `StoreError`.

    BEGIN IMMEDIATE takes the write lock up front, so SQLite's busy handler does the waiting;
    a deferred transaction that upgrades from read to write would fail at once instead.
    """
    delay = 0.02
    for remaining in range(WRITE_RETRIES, -1, -1):
        try:
            if not transaction:
                return work(conn)
            conn.execute("BEGIN IMMEDIATE")
            return _commit(conn, work)
        except sqlite3.Error as exc:
            if remaining and is_busy(exc):
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
                continue
            raise translate(exc, path) from exc
    raise AssertionError("unreachable")  # the loop returns or raises


class Busy(StoreError):
    """`write_if_free` found the write lock taken: nothing was written, nothing waited for
    (caught by the store's own callers; it never reaches a user)."""


def write_if_free(conn: sqlite3.Connection, path: Path | str, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run `work` in one `BEGIN IMMEDIATE` transaction only if the write lock is free now:
    SQLite's busy handler is off for this transaction, so when another connection holds the
    lock this raises `Busy` at once instead of waiting (the caller then writes with
    `with_retry`, somewhere waiting is harmless). Other SQLite failures become `StoreError`."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise Busy(f"the store at {path} is being written by another connection") from exc
            raise translate(exc, path) from exc
        return _commit(conn, work)
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
