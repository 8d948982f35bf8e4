"""`ScreenHost`: just enough app to show one store-reading screen (Experiments, Tool-call table)
over an open store, for Pilot tests of that screen alone."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.screen import Screen

from compare_tui.store import Store


class ScreenHost(App[None]):
    def __init__(self, store: Store, make_screen: Callable[[Store], Screen]) -> None:
        super().__init__()
        self.store, self.make_screen = store, make_screen

    def on_mount(self) -> None:
        self.push_screen(self.make_screen(self.store))
