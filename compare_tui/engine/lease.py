"""This process as a lease holder, and the leases it holds while it executes runs.

`store/leases.py` says what a lease is and the rule that makes two executors of one run
impossible. This module knows the process: its identity (host, pid, start time), whether
another holder on this host is still alive, and a heartbeat thread that renews every lease
held (a thread, so a busy event loop or a long scorer never lets a live lease expire).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Iterable

from compare_tui.store import Holder, Lease, Store, Takeover
from compare_tui.store.leases import HEARTBEAT_S, stale_reason

_HOLDER: Holder | None = None


def process_start(pid: int) -> str | None:
    """When process `pid` started, as the OS counts it (Linux `/proc/PID/stat` field 22,
    ticks since boot), or None where unknown. A pid names one process only with this."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def pid_alive(pid: int) -> bool:
    """True while a process with this pid exists on this host and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, alive
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def this_process() -> Holder:
    """This process as a lease holder (one token per process, made on first use)."""
    global _HOLDER
    pid = os.getpid()
    if _HOLDER is None or _HOLDER.pid != pid:  # a forked child is another holder
        _HOLDER = Holder(socket.gethostname(), pid, process_start(pid), secrets.token_hex(16))
    return _HOLDER


def is_stale(lease: Lease, now_s: float) -> str | None:
    """Why `lease` is stale (its holder is gone), or None while its holder may be alive."""
    here = socket.gethostname()
    local = lease.host == here
    alive = pid_alive(lease.pid) if local else True
    start = process_start(lease.pid) if local and alive else None
    return stale_reason(lease, here, alive, start, now_s)


def live_lease(store: Store, run_id: str) -> Lease | None:
    """The run's lease when a live holder has it (a report says "running since …"), else None."""
    lease = store.lease_of(run_id)
    if lease is None or is_stale(lease, time.time()) is not None:
        return None
    return lease


class HeldLeases:
    """The leases this process holds for a session of runs, renewed by one heartbeat thread.

    `take(run_id)` raises `RunLeasedError` when a live holder has it; `release(run_id)` gives
    one back; `close()` stops the heartbeat and releases every lease still held (however the
    session stopped). `lost` holds the runs whose lease was taken over meanwhile."""

    def __init__(self, store: Store, *, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.store = store
        self.holder = this_process()
        self.heartbeat_s = heartbeat_s
        self.takeovers: list[Takeover] = []
        self.lost: set[str] = set()
        self._held: list[str] = []
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def token(self) -> str:
        return self.holder.token

    def held(self) -> list[str]:
        with self._guard:
            return list(self._held)

    def take(self, run_id: str) -> Takeover | None:
        takeover = self.store.take_lease(run_id, self.holder, is_stale=is_stale)
        if takeover is not None:
            self.takeovers.append(takeover)
        with self._guard:
            if run_id not in self._held:
                self._held.append(run_id)
        self._start()
        return takeover

    def take_all(self, run_ids: Iterable[str]) -> list[Takeover]:
        """Take every lease, or none: a refusal gives back those already taken."""
        taken: list[Takeover] = []
        try:
            for run_id in run_ids:
                takeover = self.take(run_id)
                if takeover is not None:
                    taken.append(takeover)
        except BaseException:
            self.close()
            raise
        return taken

    def release(self, run_id: str) -> None:
        with self._guard:
            if run_id not in self._held:
                return
            self._held.remove(run_id)
        try:
            self.store.release_lease(run_id, self.holder)
        except Exception:  # noqa: BLE001 - the store may be what failed; the lease then goes stale
            pass

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        for run_id in self.held():
            self.release(run_id)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="compare-tui lease heartbeat", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            held = self.held()
            if not held:
                continue
            try:
                self.lost.update(self.store.renew_leases(held, self.holder))
            except Exception:  # noqa: BLE001 - a failing store stops the run elsewhere; keep trying
                continue
