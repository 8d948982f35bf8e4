"""The leases this process holds while it executes runs, and their heartbeat.

`store/leases.py` says what a lease is and the rule that makes two executors of one run
impossible; `store/holders.py` says who this process is and whether another holder is alive.
The heartbeat is a thread, so a busy event loop or a long scorer never lets a live lease expire.
"""

from __future__ import annotations

import threading

from compare_tui.store import Store, Takeover
from compare_tui.store.holders import close_token, is_stale, this_process
from compare_tui.store.leases import HEARTBEAT_S


class HeldLeases:
    """The leases this process holds for a session of runs, renewed by one heartbeat thread.

    `take(run_id)` raises `RunLeasedError` when a live holder has it; `release(run_id)` gives
    one back; `close()` stops the heartbeat and releases every lease still held (however the
    session stopped). A lease taken over meanwhile is found by the next write, which the
    store fences by the lease (`LeaseLostError`)."""

    def __init__(self, store: Store, *, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.store = store
        self.holder = this_process()
        self.heartbeat_s = heartbeat_s
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
        with self._guard:
            if run_id not in self._held:
                self._held.append(run_id)
        self._start()
        return takeover

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
        close_token(self.holder.token)

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
                self.store.renew_leases(held, self.holder)
            except Exception:  # noqa: BLE001 - a failing store stops the run elsewhere; keep trying
                continue
