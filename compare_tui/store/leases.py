"""Run leases: at most one process executes a run at a time.

Whoever executes a run (a golden-set run, a resume, the TUI's engine process, an experiment
cell, a tool-call run) first takes its lease: one `run_leases` row naming the holder (host,
pid, process start time, and a random token), written in one `BEGIN IMMEDIATE` transaction.
SQLite lets one writer in at a time, so of two processes taking the same lease one commits
first and the other then finds it held: a second holder is impossible, not unlikely.

A lease held by someone else is *live* unless its holder is provably gone: on this host, its
pid is dead or belongs to a process started at another time; on any host, its heartbeat is
older than `LEASE_EXPIRY_S`. A stale lease is taken over (the takeover is a `lease_takeovers`
row, and the requests its holder had in flight become audit rows of state `unknown`).

Why the expiry cannot give two live executors: a holder does nothing to its run (sends a
request, stores an attempt, writes the run's status) except after a transaction that found
its own token on the lease row (`fenced`), and a takeover replaces the token. A holder that
was frozen past the expiry (a suspended laptop) and wakes finds its token gone at its next
step and stops; only requests already written to the ledger before it froze can still leave
it, and each is an audit row. On one host the expiry is never needed: a live pid keeps its lease.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compare_tui.store.base import StoreBase
from compare_tui.store.errors import StoreError
from compare_tui.store.records import utc_now
from compare_tui.vocabulary import AuditState

LEASE_EXPIRY_S = 120.0
"""A lease whose heartbeat is older than this is stale, whoever holds it (20 missed beats)."""

HEARTBEAT_S = 5.0
"""How often a holder renews its heartbeat."""


@dataclass(frozen=True, slots=True)
class Holder:
    """A process that may hold leases."""

    host: str
    pid: int
    process_start: str | None
    """The process's start time as the OS counts it (Linux: ticks since boot), or None where
    unknown; with the pid it names one process, since pids are reused."""
    token: str
    """Random, per holder (a session of runs): what fenced writes check."""

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


@dataclass(frozen=True, slots=True)
class Lease:
    """A `run_leases` row."""

    run_id: str
    token: str
    host: str
    pid: int
    process_start: str | None
    taken_at: str
    heartbeat_s: float

    def heartbeat_age_s(self, now_s: float | None = None) -> float:
        return max(0.0, (time.time() if now_s is None else now_s) - self.heartbeat_s)

    def held_by(self, holder: Holder) -> bool:
        return self.token == holder.token

    def refusal(self, now_s: float | None = None) -> str:
        """The sentence a refused executor prints: who, since when, what to do."""
        return (
            f"run {self.run_id} is being executed by pid {self.pid} on {self.host} since {self.taken_at} "
            f"(heartbeat {self.heartbeat_age_s(now_s):.0f} s ago); wait for it, or stop it "
            f"(kill {self.pid} on {self.host}: it stops the run, resumable)"
        )

    def running_note(self) -> str:
        """How a report names a run being executed now."""
        return f"running since {self.taken_at}, pid {self.pid} on {self.host}"


class RunLeasedError(StoreError):
    """Someone else holds the run's lease and is alive; nothing was written or sent."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(lease.refusal())
        self.lease = lease


class LeaseLostError(StoreError):
    """This process's lease on a run was taken over (it was frozen past the expiry): it must stop."""


@dataclass(frozen=True, slots=True)
class Takeover:
    """A stale lease this process took over."""

    previous: Lease
    reason: str
    unknown_requests: int
    """Requests the previous holder had written to the ledger and never completed."""

    def sentence(self) -> str:
        return (
            f"took over run {self.previous.run_id} from pid {self.previous.pid} on {self.previous.host} "
            f"({self.reason}); {self.unknown_requests} request(s) it had in flight are audited as outcome unknown"
        )


@dataclass(frozen=True, slots=True)
class HolderSeen:
    """Who held (or took) a lease, as a takeover row names it."""

    host: str
    pid: int
    taken_at: str | None = None
    """When the previous holder took the lease (None for the one taking it over)."""


@dataclass(frozen=True, slots=True)
class TakeoverRecord:
    """A `lease_takeovers` row: a stale lease taken over, read back from the store."""

    id: int
    run_id: str
    at: str
    previous: HolderSeen
    holder: HolderSeen
    reason: str
    unknown_requests: int
    """Requests the previous holder had written to the ledger and never completed."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TakeoverRecord:
        """The record a row stores (the holders' JSON decoded here, once)."""
        return cls(
            **{
                **row,
                "previous": HolderSeen(**json.loads(row["previous"])),
                "holder": HolderSeen(**json.loads(row["holder"])),
            }
        )


StaleCheck = Callable[[Lease, float], "str | None"]
"""`(lease, now in Unix seconds) -> why it is stale, or None while live` (`engine/lease.py`)."""


def _lease(row: tuple[object, ...]) -> Lease:
    return Lease(*row)  # type: ignore[arg-type]


_COLUMNS = "run_id, token, host, pid, process_start, taken_at, heartbeat_s"


def stale_reason(lease: Lease, here: str, alive: bool, start_now: str | None, now_s: float) -> str | None:
    """Why `lease` is stale (its holder is gone), or None while it is live. `alive` and
    `start_now` describe the lease's pid on this host (`here`); they are ignored elsewhere."""
    if lease.host == here:
        if not alive:
            return f"pid {lease.pid} is not running"
        if lease.process_start and start_now and start_now != lease.process_start:
            return f"pid {lease.pid} is now another process"
    age = now_s - lease.heartbeat_s
    if age > LEASE_EXPIRY_S:
        return f"no heartbeat for {age:.0f} s (expiry {LEASE_EXPIRY_S:.0f} s)"
    return None


class LeaseAccessors(StoreBase):
    def lease_of(self, run_id: str) -> Lease | None:
        """The run's lease as stored (live or stale), or None."""
        rows = self._read(f"SELECT {_COLUMNS} FROM run_leases WHERE run_id = ?", [run_id])
        return Lease(**rows[0]) if rows else None

    def take_lease(self, run_id: str, holder: Holder, *, is_stale: StaleCheck) -> Takeover | None:
        """Take the run's lease for `holder` in one transaction; return the takeover when a stale
        lease was replaced (None when the run had none, or `holder` held it already). Raise
        `RunLeasedError` when a live holder has it (nothing written)."""

        def work(conn: sqlite3.Connection) -> Takeover | None:
            row = conn.execute(f"SELECT {_COLUMNS} FROM run_leases WHERE run_id = ?", (run_id,)).fetchone()
            now_s = time.time()
            takeover = None
            if row is not None:
                current = _lease(row)
                if current.held_by(holder):
                    conn.execute("UPDATE run_leases SET heartbeat_s = ? WHERE run_id = ?", (now_s, run_id))
                    return None
                reason = is_stale(current, now_s)
                if reason is None:
                    raise RunLeasedError(current)
                unknown = conn.execute(
                    "UPDATE audit SET state = ? WHERE (run_id = ? OR toolcall_run_id = ?) AND state = ?",
                    (AuditState.UNKNOWN.value, run_id, run_id, AuditState.SENT.value),
                ).rowcount
                conn.execute(
                    "INSERT INTO lease_takeovers (run_id, at, previous, holder, reason, unknown_requests) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        utc_now(),
                        json.dumps({"host": current.host, "pid": current.pid, "taken_at": current.taken_at}),
                        json.dumps({"host": holder.host, "pid": holder.pid}),
                        reason,
                        unknown,
                    ),
                )
                takeover = Takeover(current, reason, unknown)
            conn.execute(
                f"INSERT OR REPLACE INTO run_leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, holder.token, holder.host, holder.pid, holder.process_start, utc_now(), now_s),
            )
            return takeover

        return self._write(work)

    def renew_leases(self, run_ids: list[str], holder: Holder) -> list[str]:
        """Renew the heartbeat of each of `run_ids` still held by `holder`; return those lost."""

        def work(conn: sqlite3.Connection) -> list[str]:
            now_s = time.time()
            lost = []
            for run_id in run_ids:
                changed = conn.execute(
                    "UPDATE run_leases SET heartbeat_s = ? WHERE run_id = ? AND token = ?",
                    (now_s, run_id, holder.token),
                ).rowcount
                if not changed:
                    lost.append(run_id)
            return lost

        return self._write(work)

    def release_lease(self, run_id: str, holder: Holder) -> None:
        """Give up the lease (if still held); requests still `sent` become `cancelled` (this
        process stopped reading them)."""

        def work(conn: sqlite3.Connection) -> None:
            if fenced(conn, run_id, holder.token):
                conn.execute(
                    "UPDATE audit SET state = ? WHERE (run_id = ? OR toolcall_run_id = ?) AND state = ?",
                    (AuditState.CANCELLED.value, run_id, run_id, AuditState.SENT.value),
                )
                conn.execute("DELETE FROM run_leases WHERE run_id = ? AND token = ?", (run_id, holder.token))

        self._write(work)

    def takeovers_of(self, run_id: str) -> list[TakeoverRecord]:
        """Every takeover of the run's lease, oldest first."""
        rows = self._read("SELECT * FROM lease_takeovers WHERE run_id = ? ORDER BY id", [run_id])
        return [TakeoverRecord.from_row(row) for row in rows]


def fenced(conn: sqlite3.Connection, run_id: str, token: str) -> bool:
    """True when `token` holds the run's lease (inside the caller's write transaction)."""
    return (
        conn.execute("SELECT 1 FROM run_leases WHERE run_id = ? AND token = ?", (run_id, token)).fetchone() is not None
    )
