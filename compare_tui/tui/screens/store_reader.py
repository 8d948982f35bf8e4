"""`StoreReaderScreen`: a screen over one store that reads what it shows in a worker thread and
lays it out when the worker is done (the Experiments and Tool-call screens).

The reading, the loading state, `g` to read again, Esc to go back and the one handler that turns
a failed read into a notification (never a crash) live here; a subclass says what to read
(`read_store`, in the worker) and how to show it (`show_read`, on the UI thread). It takes the
store itself, so the app wires such a screen with one line and a test can host it alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from compare_tui.store import Store


class StoreReaderScreen(Screen):
    """Base of the store-reading screens (not a screen of its own)."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("g", "refresh", "Refresh"),
        Binding("escape", "back", "Back"),
    ]
    LOADING_ID: ClassVar[str] = ""
    """CSS id of the widget that shows the loading state while the worker reads."""
    WHAT: ClassVar[str] = ""
    """What is read, for the failure notification ("reading WHAT failed: …")."""

    @dataclass
    class Read(Message):
        """The worker finished reading; `data` is what `read_store` returned."""

        data: Any

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def read_store(self) -> Any:
        """What to show, read in a worker thread (blocking IO is fine here)."""
        raise NotImplementedError

    def show_read(self, data: Any) -> None:
        """Lay out what `read_store` returned (UI thread)."""
        raise NotImplementedError

    def action_refresh(self) -> None:
        self.query_one(f"#{self.LOADING_ID}").loading = True
        self._read()

    def action_back(self) -> None:
        self.app.pop_screen()

    @work(thread=True, exit_on_error=False, exclusive=True, group="store-reader", description="reading the store")
    def _read(self) -> None:
        self.post_message(self.Read(self.read_store()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # One handler for every failure of this screen's worker: say so, never crash the app.
        if event.state == WorkerState.ERROR:
            self.query_one(f"#{self.LOADING_ID}").loading = False
            self.app.notify(f"reading {self.WHAT} failed: {event.worker.error}", title="Error",
                            severity="error", timeout=12)

    def on_store_reader_screen_read(self, message: Read) -> None:
        self.query_one(f"#{self.LOADING_ID}").loading = False
        self.show_read(message.data)
