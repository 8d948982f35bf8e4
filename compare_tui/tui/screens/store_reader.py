"""`StoreReaderScreen`: a screen over one store that reads what it shows in a worker thread and
lays it out when the worker is done (the Experiments and Tool-call screens).

The reading, the loading state, `g` to read again and Esc to go back live here (a failed read
is a notification, never a crash, by the base screen's one handler); a subclass says what to read
(`read_store`, in the worker) and how to show it (`show_read`, on the UI thread), both typed by
what it reads (`StoreReaderScreen[T]`). Like every screen it reads the app's workspace (its
store), so a test hosts it in an app that has one (tests/support/screen_host.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.worker import Worker

from compare_tui.store import Store
from compare_tui.tui.screen_base import CompareScreen

T = TypeVar("T")


class StoreReaderScreen(CompareScreen, Generic[T]):
    """Base of the store-reading screens (not a screen of its own)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "refresh", "Refresh"),
        Binding("escape", "back", "Back"),
    ]
    LOADING_ID: ClassVar[str] = ""
    """CSS id of the widget that shows the loading state while the worker reads."""
    WHAT: ClassVar[str] = ""
    """What is read, for the failure notification ("reading WHAT failed: …")."""

    @dataclass
    class Read(Message):
        """The worker finished reading; `data` is what `read_store` returned (a `T` of the
        screen that posted it: a message class cannot carry its screen's type parameter)."""

        data: object

    @property
    def store(self) -> Store:
        return self.workspace.store

    def read_store(self) -> T:
        """What to show, read in a worker thread (blocking IO is fine here)."""
        raise NotImplementedError

    def show_read(self, data: T) -> None:
        """Lay out what `read_store` returned (UI thread)."""
        raise NotImplementedError

    def action_refresh(self) -> None:
        self.query_one(f"#{self.LOADING_ID}").loading = True
        self._read()

    def action_back(self) -> None:
        self.app.pop_screen()

    def _read(self) -> None:
        self.run_worker(
            self._read_in_worker,
            thread=True,
            exit_on_error=False,
            exclusive=True,
            group="store-reader",
            description=f"reading {self.WHAT}",
        )

    def _read_in_worker(self) -> None:
        self.post_message(self.Read(self.read_store()))

    def worker_failed(self, worker: Worker[Any]) -> None:
        # The notification is the base screen's (one handler for every worker failure).
        self.query_one(f"#{self.LOADING_ID}").loading = False

    def on_store_reader_screen_read(self, message: Read) -> None:
        self.query_one(f"#{self.LOADING_ID}").loading = False
        self.show_read(cast(T, message.data))
