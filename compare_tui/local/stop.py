"""Stop one recorded llama-server: SIGTERM, then SIGKILL, never a process that is not ours.

A recorded pid is only signalled while `/proc/<pid>/cmdline` still equals the recorded command
line (the pid may have been reused by an unrelated program since `up`).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

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


def _gone(record: ServerRecord, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    child = server.CHILDREN.get(record.pid)
    while True:
        if child is not None and child.poll() is not None:  # reap our own child: no zombie
            server.CHILDREN.pop(record.pid, None)
            return True
        if child is None and not state.is_ours(record):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def stop_server(record: ServerRecord) -> StopOutcome:
    """Stop `record`'s server and say how; raises LocalError only if it survives SIGKILL."""
    if not _send(record, signal.SIGTERM):
        child = server.CHILDREN.pop(record.pid, None)
        if child is not None:
            child.poll()  # a server of ours that died on its own: reap it
        outcome = "already gone" if state.process_cmdline(record.pid) is None else "not ours"
        return StopOutcome(record.name, record.pid, outcome)
    if _gone(record, 10.0):
        return StopOutcome(record.name, record.pid, "stopped")
    _send(record, signal.SIGKILL)
    if _gone(record, 5.0):
        return StopOutcome(record.name, record.pid, "killed")
    raise LocalError(f"llama-server pid {record.pid} ({record.name}) survived SIGKILL",
                     f"check it with: ps -o pid,stat,cmd -p {record.pid}")
