"""A modal that says why something was refused (or failed) and what to do; Enter closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class RefusalScreen(ModalScreen[None]):
    """`title` on top, the full `reason` below; dismisses with None."""

    CSS_PATH = "refusal.tcss"
    # ↓/PageDown scroll the reason; Enter still closes. Focused by the screen once its widgets are
    # mounted (a query in `on_mount` met a screen not yet composed on a loaded machine: NoMatches).
    AUTO_FOCUS = "#refusal-scroll"
    BINDINGS = [Binding("escape", "close", "Close"), Binding("enter", "close", "Close", show=False)]

    def __init__(self, title: str, reason: str) -> None:
        super().__init__()
        self.title_text, self.reason = title, reason

    def compose(self) -> ComposeResult:
        with Vertical(id="refusal-box"):
            yield Static(self.title_text, id="refusal-title", markup=False)
            # A long reason (every problem of a broken set) scrolls: the box never cuts it off.
            with VerticalScroll(id="refusal-scroll"):
                yield Static(self.reason, id="refusal-reason", markup=False)
            yield Button("Close", id="refusal-close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
