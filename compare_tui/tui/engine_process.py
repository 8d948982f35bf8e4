"""The TUI's engine in a child process: `ProcessEngineSession` is `EngineSession` with the
same interface (`run()` in a worker thread, `cancel()` from any thread), but the session runs
in a child process (`python -m compare_tui.tui.engine_process FD`) and only its reports cross
back, pickled, over a socket pair (a loopback-free, unnamed channel: nothing listens).

Why a process: the engine is CPU-bound Python at a high attempt rate, and as a thread it shares
the GIL with the UI. Measured with 5,000 tasks at concurrency 128 against the zero-delay server
(bench/soak/load_soak.py): the UI's event-loop lag p99 was 55 ms with the engine as a thread
even when the screen repainted nothing at all, and 3.2 ms with the engine in another process.

The child runs the core `EngineSession` (`compare_tui.engine.session`) over its own connection
to the store (SQLite in WAL mode takes writers from several processes) with an observer that
sends each engine event, a frozen dataclass, as it is; the parent hands each one to the same
`TallyObserver` an in-process session uses, so the Live screen cannot tell the two apart. The
child ignores SIGINT (keys belong to the TUI) and cancels its session when asked, or when the
pipe closes because the TUI went away, so its run is marked `interrupted` (resumable) either way.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from textual.message import Message

from compare_tui.engine import EngineEvent, SessionEnded, SessionPlan
from compare_tui.tui.engine_bridge import TallyObserver
from compare_tui.tui.live_tally import LiveTally
from compare_tui.tui.workspace import Workspace
from compare_tui.vocabulary import RunStatus

CANCEL = "cancel"


@dataclass(frozen=True, slots=True)
class _Spec:
    """What the child needs to rebuild the session: paths, not open objects."""

    store_path: str
    catalogue_path: str
    plan: SessionPlan


class ProcessEngineSession:
    """One session of runs in a child process. `run()` blocks (call it from a worker thread)."""

    def __init__(
        self, workspace: Workspace, plan: SessionPlan, tally: LiveTally, post: Callable[[Message], object]
    ) -> None:
        self.workspace, self.plan = workspace, plan
        self.observer = TallyObserver(tally, post)
        self.pid: int | None = None
        """The engine process while it runs."""
        self._conn: Connection | None = None
        self._cancelled = False
        self._guard = threading.Lock()

    @property
    def comparison_id(self) -> str | None:
        return self.observer.comparison_id

    def cancel(self) -> None:
        """Stop after the attempts in flight; the current run becomes `interrupted`."""
        with self._guard:
            self._cancelled = True
            if self._conn is not None:
                try:
                    self._conn.send(CANCEL)
                except OSError:  # the child has already gone
                    pass

    def run(self) -> tuple[str, ...]:
        spec = _Spec(str(self.workspace.store.path), str(self.workspace.catalogue_path), self.plan)
        # A plain subprocess, not multiprocessing: under Textual sys.stderr has no real file
        # descriptor, which multiprocessing's spawn needs. Its stderr goes to a temporary file
        # whose tail is shown if the child dies.
        log = tempfile.TemporaryFile()
        ours_sock, theirs_sock = socket.socketpair()
        child = subprocess.Popen(
            [sys.executable, "-m", "compare_tui.tui.engine_process", str(theirs_sock.fileno())],
            pass_fds=[theirs_sock.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=_child_env(),
            close_fds=True,
        )
        theirs_sock.close()
        self.pid = child.pid
        ours = Connection(ours_sock.detach())
        try:
            try:
                ours.send(spec)
            except OSError:  # it died at once: the loop below reports how
                pass
            with self._guard:
                self._conn = ours
            if self._cancelled:
                self.cancel()
            while True:
                try:
                    item = ours.recv()
                except EOFError:
                    code = _wait(child, 10)
                    if not self.observer.ended:
                        statuses = (RunStatus.INTERRUPTED,) * len(self.observer.run_ids)
                        self.observer.on_event(SessionEnded(statuses, self._cancelled))
                    raise RuntimeError(
                        f"the engine process ended unexpectedly (exit code {code}); every finished "
                        f"attempt is stored, and r resumes.{_tail(log)}"
                    ) from None
                if item[0] == "event":
                    self.observer.on_event(item[1])
                elif item[0] == "done":
                    _, statuses, error = item
                    if error is not None:
                        raise RuntimeError(error)
                    return tuple(statuses)
        finally:
            with self._guard:
                self._conn = None
            ours.close()
            if _wait(child, 30) is None:  # it did not stop on its own: nothing more to save than what is stored
                child.kill()
                _wait(child, 5)
            log.close()


def _wait(child: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    try:
        return child.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return None


def _tail(log: Any, chars: int = 600) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - chars))
    text = log.read().decode("utf-8", "replace").strip()
    return f" Its last words: {text}" if text else ""


def _child_env() -> dict[str, str]:
    """This environment, with the folder compare_tui is imported from first on the path (so the
    child runs the same code, installed or from a checkout)."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def _child_main(conn: Connection) -> None:
    """The child process: the core `EngineSession`, each of its events sent over `conn` (whose
    first message is the `_Spec`)."""
    from compare_tui.engine import EngineSession
    from compare_tui.report.sequential import look_at
    from compare_tui.store import Store

    spec: _Spec = conn.recv()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl+c is a key of the TUI, not a signal for the engine
    sending = threading.Lock()

    def send(item: tuple[Any, ...]) -> None:
        with sending:
            try:
                conn.send(item)
            except OSError:  # the TUI is gone; the watcher below cancels the session
                pass

    class Forward:
        def on_event(self, event: EngineEvent) -> None:
            send(("event", event))

    with Store.open(spec.store_path) as store:
        session = EngineSession(store, spec.plan, Path(spec.catalogue_path), Forward(), stop_rule=look_at)

        def watch() -> None:
            try:
                while conn.recv() != CANCEL:
                    pass
            except (EOFError, OSError):
                pass  # the TUI went away: stop too
            session.cancel()

        threading.Thread(target=watch, name="compare-tui engine: parent watcher", daemon=True).start()
        try:
            statuses = session.run()
        except Exception as exc:  # noqa: BLE001 - reported to the TUI, which shows it
            send(("done", None, f"{type(exc).__name__}: {exc}"))
        else:
            send(("done", statuses, None))


if __name__ == "__main__":
    _child_main(Connection(int(sys.argv[1])))
