"""Lease holders as processes: who this process is (host, pid, start time, token), and
whether the holder a lease names is still alive (`is_stale`). Linux reads `/proc`; elsewhere
the start time is unknown and a holder on this host is judged by its pid alone.
"""

from __future__ import annotations

import os
import secrets
import socket
import time

from compare_tui.store.leases import Holder, Lease, LeaseAccessors, stale_reason


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


_OPEN_TOKENS: set[str] = set()
"""The tokens of this process's holders (`this_process`) until their session closes them. A lease that names this very
process with a token not among them was left behind by a session that ended without releasing
it (its store was full or read-only when it tried): nobody executes that run any more."""


def open_token(token: str) -> None:
    _OPEN_TOKENS.add(token)


def close_token(token: str) -> None:
    _OPEN_TOKENS.discard(token)


def this_process() -> Holder:
    """This process as a new lease holder: a fresh token each call, so two sessions in one
    process (the TUI's engine process runs one after another; a test may race two) are two
    holders, and the second is refused while the first holds the run."""
    pid = os.getpid()
    holder = Holder(socket.gethostname(), pid, process_start(pid), secrets.token_hex(16))
    open_token(holder.token)  # live until its session closes it (`close_token`)
    return holder


def is_stale(lease: Lease, now_s: float) -> str | None:
    """Why `lease` is stale (its holder is gone), or None while its holder may be alive."""
    here = socket.gethostname()
    local = lease.host == here
    alive = pid_alive(lease.pid) if local else True
    start = process_start(lease.pid) if local and alive else None
    if local and lease.pid == os.getpid() and start == lease.process_start and lease.token not in _OPEN_TOKENS:
        return "this process's session that held it has ended"
    return stale_reason(lease, here, alive, start, now_s)


def live_lease(store: LeaseAccessors, run_id: str) -> Lease | None:
    """The run's lease when a live holder has it (a report says "running since …"), else None."""
    lease = store.lease_of(run_id)
    if lease is None or is_stale(lease, time.time()) is not None:
        return None
    return lease
