"""What can go wrong with the run store, in words a user can act on.

Every SQLite failure that reaches a caller of the store arrives as a `StoreError` (or one of
its subclasses) whose message names the store file and says what to do. Raw `sqlite3`
exceptions never escape: a user should not have to read an SQLite error code.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from compare_tui.errors import CompareTuiError


class StoreError(CompareTuiError):
    """The run store cannot do what was asked; the message says why and what to do."""


class RunNotFoundError(StoreError):
    """No run (or comparison) has the id or id prefix that was given."""


class AmbiguousIdError(StoreError):
    """An id prefix matches more than one run (or comparison); the message lists them."""


def _error_name(exc: sqlite3.Error) -> str:
    # Python 3.11 exposes the SQLite result code name; older messages are matched as a fallback.
    return getattr(exc, "sqlite_errorname", "") or ""


def is_busy(exc: sqlite3.Error) -> bool:
    """True when another connection holds the lock: the write may simply be tried again."""
    name = _error_name(exc)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return True
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "table is locked" in text


def translate(exc: sqlite3.Error, path: Path | str) -> StoreError:
    """A `StoreError` that says, for the store at `path`, what `exc` means and what to do."""
    name = _error_name(exc)
    text = str(exc).lower()
    if name == "SQLITE_FULL" or "disk is full" in text:
        return StoreError(
            f"the store's disk is full ({path}): free space and resume the run with `compare-tui run --resume RUN_ID`"
        )
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return StoreError(
            f"the store at {path} is read-only: check the file's and its folder's permissions, "
            "or pass --store to use another file"
        )
    if is_busy(exc):
        return StoreError(f"the store at {path} stayed locked by another process; wait for it to finish and try again")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text:
        return StoreError(
            f"the store at {path} is damaged (SQLite: {exc}); move it aside and pass --store, "
            "or restore it from a backup"
        )
    if name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")):
        return StoreError(f"cannot read or write the store at {path} (SQLite: {exc})")
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"the store at {path} refused the write: {exc}")
    return StoreError(f"the store at {path} failed: {exc}")
