"""Stop one recorded llama-server: SIGTERM, then SIGKILL, never a process that is not ours.

A recorded pid is only signalled while `/proc/<pid>/cmdline` still equals the recorded command
line (the pid may have been reused by an unrelated program since `up`).

"Stopped" means out of the process table, not merely signalled: an exiting server's command
line reads empty while it still tears down its memory and holds its port, so `down` waits
(bounded) until the process has exited and, where its parent reaps it promptly, is gone.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from compare_tui.local import server, state
from compare_tui.local.errors import LocalError
from compare_tui.local.state import ServerRecord


@dataclass(frozen=True)
class StopOutcome:
    name: str
    pid: int
    outcome: str
    """`stopped`, `killed` (needed SIGKILL), `already gone`, or `not ours` (pid reused: untouched)."""


def _send(record: ServerRecord, sig: int) -> bool:
    """Signal `record.pid` only while it is still the process we started. A pidfd pins the
    process first, so a pid reused between the check and the signal cannot be hit."""
    fd = None
    try:
        fd = os.pidfd_open(record.pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):
        fd = None  # no pidfd on this OS/kernel: check-then-kill
    try:
        if not state.is_ours(record):
            return False
        if fd is not None:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(record.pid, sig)
        return True
    except ProcessLookupError:
        return False
    finally:
        if fd is not None:
            os.close(fd)


TERM_WAIT_S = 10.0
"""How long a server may take to shut down after SIGTERM before it gets SIGKILL."""
KILL_WAIT_S = 5.0
"""How long to wait for it to exit after SIGKILL."""
REAP_WAIT_S = 2.0
"""How long an exited server (a zombie: port and memory already released) may wait for its
parent, when that is another process, to take it off the process table."""


def process_entry(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of `pid` from `/proc/<pid>/stat`, or None
    when the process table holds no such pid. Zombies (state `Z`) are still entries."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = data.rsplit(")", 1)[-1].split()  # the command name in (...) may hold spaces
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def _gone(record: ServerRecord, started: int | None, timeout_s: float) -> bool:
    """Wait until `record`'s process (start time `started`) is off the process table; True
    if so within `timeout_s` (plus `REAP_WAIT_S` once it has exited and awaits its parent)."""
    deadline = time.monotonic() + timeout_s
    child = server.CHILDREN.get(record.pid)
    reap_deadline: float | None = None
    while True:
        if child is not None and child.poll() is not None:  # reap our own child: no zombie
            server.CHILDREN.pop(record.pid, None)
            return True
        if child is None:
            if started is None:  # no /proc (macOS): the command line is all there is
                if not state.is_ours(record):
                    return True
            else:
                entry = process_entry(record.pid)
                if entry is None or entry[1] != started:  # off the table (or the pid reused since)
                    return True
                if entry[0] in "ZX":  # exited, files closed: only its parent's wait is left
                    reap_deadline = reap_deadline or time.monotonic() + REAP_WAIT_S
                    if time.monotonic() > reap_deadline:
                        return True
        if reap_deadline is None and time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def stop_server(record: ServerRecord) -> StopOutcome:
    """Stop `record`'s server and say how; returns once it is off the process table (see the
    module docstring). Raises LocalError only if it survives SIGKILL."""
    entry = process_entry(record.pid)
    started = entry[1] if entry is not None else None
    if not _send(record, signal.SIGTERM):
        child = server.CHILDREN.pop(record.pid, None)
        if child is not None:
            child.poll()  # a server of ours that died on its own: reap it
        outcome = "already gone" if state.process_cmdline(record.pid) is None else "not ours"
        return StopOutcome(record.name, record.pid, outcome)
    if _gone(record, started, TERM_WAIT_S):
        return StopOutcome(record.name, record.pid, "stopped")
    _send(record, signal.SIGKILL)
    if _gone(record, started, KILL_WAIT_S):
        return StopOutcome(record.name, record.pid, "killed")
    raise LocalError(
        f"llama-server pid {record.pid} ({record.name}) survived SIGKILL",
        f"check it with: ps -o pid,stat,cmd -p {record.pid}",
    )
