"""`ChangedTasks`: the tasks whose outcome differs between run A and run B, one per line, with
a cursor. Drawn on demand (the line API): a diff of 10,000 tasks may list thousands, and a
`DataTable` would measure every cell before the first paint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click, Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from compare_tui.diff import ChangedTask
from compare_tui.report.formatting import MARKS

if TYPE_CHECKING:
    from rich.style import Style

STATUS_WIDTH = 10


class ChangedTasks(ScrollView, can_focus=True):
    """↑↓ PgUp PgDn Home End move; Enter opens the task with both answers side by side."""

    COMPONENT_CLASSES = {
        "changed-tasks--header",
        "changed-tasks--cursor",
        "changed-tasks--pass",
        "changed-tasks--fail",
        "changed-tasks--review",
        "changed-tasks--error",
        "changed-tasks--missing",
    }
    DEFAULT_CSS = """
    ChangedTasks { height: 1fr; background: $surface; }
    ChangedTasks > .changed-tasks--header { text-style: bold; color: $text; background: $panel; }
    ChangedTasks > .changed-tasks--cursor { background: $accent 40%; text-style: bold; }
    ChangedTasks:focus > .changed-tasks--cursor { background: $accent; color: $background; }
    ChangedTasks > .changed-tasks--pass { color: $success; }
    ChangedTasks > .changed-tasks--fail { color: $error; }
    ChangedTasks > .changed-tasks--review { color: $text-muted; }
    ChangedTasks > .changed-tasks--error { color: $warning; text-style: bold; }
    ChangedTasks > .changed-tasks--missing { color: $text-disabled; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "up", show=False),
        Binding("down", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "jump(0)", "first", show=False),
        Binding("end", "jump(-1)", "last", show=False),
        Binding("enter", "choose", "open both answers"),
    ]

    cursor: reactive[int] = reactive(0, repaint=False)
    """Index of the highlighted task."""

    @dataclass
    class Chosen(Message):
        index: int
        task: ChangedTask

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tasks: tuple[ChangedTask, ...] = ()
        self._task_width = 10
        self._styles: dict[str, Style] | None = None

    def set_tasks(self, tasks: Sequence[ChangedTask]) -> None:
        self.tasks = tuple(tasks)
        self._task_width = min(40, max((len(t.task_id) for t in self.tasks), default=4)) + 2
        self.cursor = 0
        self._layout()

    def on_resize(self, event: Resize) -> None:
        self._layout()

    def notify_style_update(self) -> None:
        self._styles = None  # the theme changed: read the component styles again
        super().notify_style_update()

    def _layout(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width or 1, len(self.tasks) + 1)
        self.refresh()

    def _style(self, name: str) -> Style:
        if self._styles is None:
            self._styles = {}
        if name not in self._styles:
            self._styles[name] = self.rich_style + self.get_component_rich_style(f"changed-tasks--{name}")
        return self._styles[name]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:  # the header stays put while the list scrolls under it
            text = f" {'task'.ljust(self._task_width)}{'A'.ljust(STATUS_WIDTH)}{'B'.ljust(STATUS_WIDTH)}change"
            return Strip([Segment(text, self._style("header"))]).crop_extend(0, width, self._style("header"))
        index = y - 1 + self.scroll_offset.y
        if index >= len(self.tasks):
            return Strip.blank(width, base)
        task = self.tasks[index]
        row = self._style("cursor") if index == self.cursor else base
        segments = [Segment(" " + task.task_id[: self._task_width - 2].ljust(self._task_width), row)]
        for status in (task.status_a, task.status_b):
            cell = f"{MARKS.get(status, '?')} {status}".ljust(STATUS_WIDTH)
            segments.append(Segment(cell, self._style(status) + row if index == self.cursor else self._style(status)))
        segments.append(Segment(task.change, row))
        return Strip(segments).crop_extend(0, width, row)

    def watch_cursor(self, old: int, new: int) -> None:
        # Line y shows task y - 1 + scroll_y (line 0 is the header): keep lines new..new+1 in view.
        self.scroll_to_region(Region(0, new, 1, 2), animate=False, immediate=True)
        self.refresh()

    def action_move(self, delta: int) -> None:
        if self.tasks:
            self.cursor = max(0, min(len(self.tasks) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.scrollable_content_region.height - 2))

    def action_jump(self, index: int) -> None:
        if self.tasks:
            self.cursor = index % len(self.tasks)

    def action_choose(self) -> None:
        if self.tasks:
            self.post_message(self.Chosen(self.cursor, self.tasks[self.cursor]))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = offset.y - 1 + self.scroll_offset.y
        if index < len(self.tasks):
            self.cursor = index
            if event.chain == 2:
                self.action_choose()
