"""A modal asking for a reviewer's note; dismisses with the text, or None when cancelled."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class NoteEntryScreen(ModalScreen[str | None]):
    CSS_PATH = "note_entry.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, task_id: str, note: str = "") -> None:
        super().__init__()
        self.task_id, self.note = task_id, note

    def compose(self) -> ComposeResult:
        with Vertical(id="note-box"):
            yield Static(f"Note on {self.task_id} (Enter saves it with the next verdict, Esc cancels)", markup=False)
            yield Input(value=self.note, placeholder="why this verdict?", id="note-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
