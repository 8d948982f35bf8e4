"""`TaskGrid`: one block per task per model, marked ✓ ✗ ? ! · (colour repeats the mark and is
never the only signal), navigable from the keyboard.

Tasks are laid out in chunks as wide as the widget; within a chunk each model has one line,
so the same task sits in the same column for every model:

    tasks 1–30
    smollm2    ✓ ✗ ✓ ? ✓ …
    gemma3     ✓ ✓ ✗ ? ! …

Lines are drawn on demand (the line API), so 10,000 tasks × several models cost only the
lines on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click, Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from compare_tui.report import Block
from compare_tui.report.formatting import MARK_WORDS, MARKS

LABEL_MAX = 16


@dataclass(frozen=True, slots=True)
class GridRow:
    """One model's line of blocks: its label and one block per task, in the report's order."""

    label: str
    run_id: str
    blocks: Sequence[Block]


class TaskGrid(ScrollView, can_focus=True):
    """Blocks of every model over the same tasks; ←→ move by task, ↑↓ by model, Enter opens."""

    COMPONENT_CLASSES = {
        "task-grid--pass",
        "task-grid--fail",
        "task-grid--review",
        "task-grid--error",
        "task-grid--missing",
        "task-grid--label",
        "task-grid--ruler",
        "task-grid--cursor",
    }
    DEFAULT_CSS = """
    TaskGrid { height: 1fr; background: $surface; }
    TaskGrid > .task-grid--pass { color: $success; }
    TaskGrid > .task-grid--fail { color: $error; }
    TaskGrid > .task-grid--review { color: $text-muted; }
    TaskGrid > .task-grid--error { color: $warning; text-style: bold; }
    TaskGrid > .task-grid--missing { color: $text-disabled; }
    TaskGrid > .task-grid--label { color: $text; text-style: bold; }
    TaskGrid > .task-grid--ruler { color: $text-muted; }
    TaskGrid > .task-grid--cursor { background: $accent 40%; text-style: bold reverse; }
    TaskGrid:focus > .task-grid--cursor { background: $accent; }
    """
    BINDINGS = [
        Binding("left", "move(0, -1)", "task ←", show=False),
        Binding("right", "move(0, 1)", "task →", show=False),
        Binding("up", "move(-1, 0)", "model ↑", show=False),
        Binding("down", "move(1, 0)", "model ↓", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "jump(0)", "first task", show=False),
        Binding("end", "jump(-1)", "last task", show=False),
        Binding("enter", "choose", "open task"),
    ]

    cursor_task: reactive[int] = reactive(0, repaint=False)
    """Index of the highlighted task in the report's task order."""
    cursor_row: reactive[int] = reactive(0, repaint=False)
    """Index of the highlighted model's row."""

    @dataclass
    class BlockHighlighted(Message):
        """The cursor moved onto a block."""

        grid: TaskGrid
        row: GridRow
        block: Block

    @dataclass
    class BlockChosen(Message):
        """Enter (or a click) on a block."""

        grid: TaskGrid
        row: GridRow
        block: Block

    def __init__(
        self,
        rows: Sequence[GridRow] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: tuple[GridRow, ...] = tuple(rows)
        self._columns = 1
        self._styles: dict[str, Style] | None = None

    # ------------------------------------------------------------------ data and geometry

    def set_rows(self, rows: Sequence[GridRow]) -> None:
        """Replace the models shown (all rows must have the same tasks, in the same order)."""
        self._rows = tuple(rows)
        self.cursor_row = min(self.cursor_row, max(0, len(self._rows) - 1))
        self.cursor_task = min(self.cursor_task, max(0, self.task_count - 1))
        self._layout()
        self._announce()

    @property
    def task_count(self) -> int:
        return len(self._rows[0].blocks) if self._rows else 0

    @property
    def label_width(self) -> int:
        return min(LABEL_MAX, max((len(r.label) for r in self._rows), default=0)) + 2

    @property
    def lines_per_chunk(self) -> int:
        return len(self._rows) + 1

    def current(self) -> tuple[GridRow, Block] | None:
        if not self._rows or not self.task_count:
            return None
        row = self._rows[self.cursor_row]
        return row, row.blocks[self.cursor_task]

    def on_resize(self, event: Resize) -> None:
        self._layout()

    def notify_style_update(self) -> None:
        self._styles = None  # the theme changed: read the component styles again
        super().notify_style_update()

    def _style(self, part: str) -> Style:
        """The base style plus one component class, read once per theme (drawing is hot)."""
        if self._styles is None:
            self._styles = {}
        style = self._styles.get(part)
        if style is None:
            style = self._styles[part] = self.rich_style + self.get_component_rich_style(f"task-grid--{part}")
        return style

    def _layout(self) -> None:
        width = self.scrollable_content_region.width or self.size.width or 80
        self._columns = max(1, (width - self.label_width) // 2)
        chunks = -(-self.task_count // self._columns) if self.task_count else 0
        self.virtual_size = Size(width, chunks * self.lines_per_chunk)
        self.refresh()

    # ------------------------------------------------------------------ drawing

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        line = y + self.scroll_offset.y
        if not self._rows or line >= self.virtual_size.height:
            return Strip.blank(width, base)
        chunk, sub = divmod(line, self.lines_per_chunk)
        first = chunk * self._columns
        last = min(first + self._columns, self.task_count)
        if sub == 0:
            text = f"tasks {first + 1}–{last} of {self.task_count}"
            return Strip([Segment(text, self._style("ruler"))]).crop_extend(0, width, base)
        row_index = sub - 1
        row = self._rows[row_index]
        label = row.label[: LABEL_MAX - 1] + "…" if len(row.label) > LABEL_MAX else row.label
        segments = [Segment(label.ljust(self.label_width), self._style("label"))]
        blocks = row.blocks
        for status, group in groupby(range(first, last), key=lambda i: blocks[i].status):
            indexes = list(group)
            mark = MARKS.get(status, "?")
            style = self._style(status) if status in MARKS else base
            if row_index == self.cursor_row and self.cursor_task in indexes:
                before = self.cursor_task - indexes[0]
                after = indexes[-1] - self.cursor_task
                if before:
                    segments.append(Segment((mark + " ") * before, style))
                segments.append(Segment(mark, style + self.get_component_rich_style("task-grid--cursor")))
                segments.append(Segment(" " + (mark + " ") * after, style))
            else:  # a run of one status is one segment
                segments.append(Segment((mark + " ") * len(indexes), style))
        return Strip(segments).crop_extend(0, width, base)

    # ------------------------------------------------------------------ moving

    def watch_cursor_task(self, old: int, new: int) -> None:
        self._cursor_moved()

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._cursor_moved()

    def _cursor_moved(self) -> None:
        if not self._rows:
            return
        chunk = self.cursor_task // self._columns
        top = chunk * self.lines_per_chunk
        self.scroll_to_region(Region(0, top, 1, self.lines_per_chunk), animate=False, immediate=True)
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        current = self.current()
        if current is not None:
            self.post_message(self.BlockHighlighted(self, *current))

    def action_move(self, rows: int, tasks: int) -> None:
        if not self._rows:
            return
        if tasks:
            self.cursor_task = max(0, min(self.task_count - 1, self.cursor_task + tasks))
            return
        target = self.cursor_row + rows
        if 0 <= target < len(self._rows):
            self.cursor_row = target
        elif target < 0 and self.cursor_task >= self._columns:
            self.cursor_task -= self._columns
            self.cursor_row = len(self._rows) - 1
        elif target >= len(self._rows) and self.cursor_task // self._columns < (self.task_count - 1) // self._columns:
            self.cursor_task = min(self.task_count - 1, self.cursor_task + self._columns)
            self.cursor_row = 0

    def action_page(self, direction: int) -> None:
        chunks = max(1, self.scrollable_content_region.height // self.lines_per_chunk)
        step = direction * chunks * self._columns
        self.cursor_task = max(0, min(self.task_count - 1, self.cursor_task + step))

    def action_jump(self, index: int) -> None:
        if self.task_count:
            self.cursor_task = index % self.task_count

    def action_choose(self) -> None:
        current = self.current()
        if current is not None:
            self.post_message(self.BlockChosen(self, *current))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self._rows:
            return
        chunk, sub = divmod(offset.y + self.scroll_offset.y, self.lines_per_chunk)
        column = (offset.x - self.label_width) // 2
        index = chunk * self._columns + column
        if sub == 0 or column < 0 or column >= self._columns or index >= self.task_count:
            return
        self.cursor_row, self.cursor_task = sub - 1, index
        if event.chain == 2:
            self.action_choose()


def describe(row: GridRow, block: Block) -> str:
    """`refund-01 · smollm2 · ✓ pass` (+ a person's verdict), for the line under the grid."""
    text = (
        f"{block.task_id} · {row.label} · {MARKS.get(block.status, '?')} {MARK_WORDS.get(block.status, block.status)}"
    )
    if block.human:
        text += " · scored by a person"
    if block.overridden:
        was = block.scorer_status or ""
        text += f" by a person (scorer: {MARKS.get(was, '?')} {was})"
    elif block.verdict:
        text += f" · verdict {block.verdict}"
    return text
