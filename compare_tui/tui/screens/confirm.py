"""A modal that asks before something is recorded: what will happen, in full; `y` or the
Confirm button accept, Esc or `n` cancel (dismisses True or False)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("escape", "answer(False)", "Cancel"),
        Binding("n", "answer(False)", "Cancel", show=False),
        Binding("y", "answer(True)", "Confirm"),
    ]

    def __init__(self, title: str, body: str, confirm: str = "Confirm", decline: str = "Cancel") -> None:
        super().__init__()
        self.title_text, self.body, self.confirm, self.decline = title, body, confirm, decline

    def compose(self) -> ComposeResult:
        with Vertical(id="refusal-box"):
            yield Static(self.title_text, id="refusal-title", markup=False)
            yield Static(self.body, id="refusal-reason", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.confirm} (y)", id="confirm-yes", variant="primary")
                yield Button(f"{self.decline} (Esc)", id="confirm-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
