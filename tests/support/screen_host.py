"""`ScreenHost`: just enough app to show one screen over an open store, for Pilot tests of that
screen alone: it has the workspace every screen reads (`screen_base.Navigator.workspace`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.screen import Screen

from compare_tui.engine.reachability import Reachability
from compare_tui.store import Store
from compare_tui.tui.workspace import Workspace
from compare_tui.vocabulary import Reach


def _no_probe(endpoint: str) -> Reachability:
    return Reachability(Reach.UNREACHABLE, reason="not checked")


class ScreenHost(App[None]):
    def __init__(
        self,
        store: Store,
        make_screen: Callable[[], Screen],
        *,
        catalogue_path: str | Path = "models.toml",
        reviewer: str = "tester",
    ) -> None:
        super().__init__()
        self.workspace = Workspace(store, Path(catalogue_path), Path("."), reviewer, _no_probe)
        self.make_screen = make_screen

    def on_mount(self) -> None:
        self.push_screen(self.make_screen())
