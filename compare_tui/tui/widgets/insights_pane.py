"""`InsightsPane`: the report's Insights tab (`compare-tui insights` on screen).

The failure groups in a table with a row cursor (Enter on a group posts `GroupChosen`; the
screen opens its tasks), the highlighted group spelt out whole under it, then the discordant
tasks by tag and the suspect tasks. Every count and sentence is `compare_tui.insights`'s: this
widget only fits them to the width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from compare_tui.insights import FailureGroup, Insights
from compare_tui.insights.render import (
    GROUPS_TITLE,
    NO_SUSPECT,
    SUSPECTS_TITLE,
    TRAFFIC_TITLE,
    share_text,
    split_line,
    suspect_line,
    tags_title,
    traffic_lines,
    unpassed_line,
)
from compare_tui.tui.widgets.report_tables import shorten


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else shorten(text, width)


ROWS = 200
"""Groups listed in the table; the rest are counted (`compare-tui insights --format json` has all)."""
MODEL_COLUMN = 12
"""The narrowest a model's count column is made before the cause column gives up its width."""
CAUSE_AT_LEAST = 20
SCROLL_BAR = 2


@dataclass
class GroupChosen(Message):
    """Enter on a failure group."""

    group: FailureGroup


def _count(group: FailureGroup, model: str) -> str:
    return f"{group.counts[model]} ({share_text(group.shares[model])})"


def group_line(insights: Insights, group: FailureGroup) -> str:
    """The highlighted group in full: its cause, every model's count under its whole name, the
    example tasks and what Enter does."""
    counts = " · ".join(f"{m} {_count(group, m)}" for m in insights.models)
    tasks = len({m.failed.task_id for m in group.members})
    return (
        f"{group.number}. {group.cause.words()}\n{counts}\ne.g. {', '.join(group.examples)} · "
        f"Enter opens its {tasks} task{'' if tasks == 1 else 's'} (n/p move between them)"
    )


class InsightsPane(Vertical):
    """The Insights tab's body; `show` lays out an `Insights` at a width."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.insights: Insights | None = None

    def compose(self) -> ComposeResult:
        yield Static(GROUPS_TITLE, classes="section-title")
        table: DataTable[str] = DataTable(id="insight-groups", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("Reading the failures…", id="insight-line", classes="status-line", markup=False)
        with VerticalScroll(id="insight-more"):
            yield Static("", id="insight-tags-title", classes="section-title", markup=False)
            yield Static("", id="insight-tags", markup=False)
            yield Static(SUSPECTS_TITLE, classes="section-title")
            yield Static("", id="insight-suspects", markup=False)
            yield Static(TRAFFIC_TITLE, id="insight-traffic-title", classes="section-title", markup=False)
            yield Static("", id="insight-traffic", markup=False)
            yield Static("", id="insight-notes", classes="muted notes", markup=False)

    def show(self, insights: Insights, width: int) -> None:
        """Lay `insights` out `width` columns wide (again after a resize: the cursor stays)."""
        self.insights = insights
        table = self.query_one("#insight-groups", DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        models = insights.models
        # Each column takes its text and two cells of padding, the table a vertical scroll bar;
        # the cause has what is left.
        counts = [max(len(_count(g, m)) for g in insights.groups[:ROWS]) if insights.groups else 5 for m in models]
        model_widths = [max(c, min(len(m), MODEL_COLUMN)) for m, c in zip(models, counts, strict=True)]
        examples = 14
        cause = width - (3 + 2) - sum(w + 2 for w in model_widths) - (examples + 2) - 2 - SCROLL_BAR
        if cause < CAUSE_AT_LEAST:
            examples, cause = 0, cause + examples + 2
        cause = max(cause, CAUSE_AT_LEAST)
        # Room to spare (a wide terminal): the examples, then the models' whole names, take it.
        shown = insights.groups[:ROWS]
        needed = max((len(g.cause.words()) for g in shown), default=CAUSE_AT_LEAST)
        spare = cause - needed
        if spare > 0:
            if examples:
                grow = max(0, min(spare, max(len(", ".join(g.examples)) for g in shown) - examples))
                examples, spare = examples + grow, spare - grow
            for index, model in enumerate(models):
                grow = max(0, min(spare, len(model) - model_widths[index]))
                model_widths[index], spare = model_widths[index] + grow, spare - grow
            cause = needed + spare
        table.add_column("#", width=3, key="number")
        table.add_column("cause", width=cause, key="cause")
        for model, model_width in zip(models, model_widths, strict=True):
            table.add_column(_fit(model, model_width), width=model_width, key=f"model:{model}")
        if examples:
            table.add_column("e.g.", width=examples, key="examples")
        for group in insights.groups[:ROWS]:
            cells = [str(group.number), _fit(group.cause.words(), cause)]
            cells += [_count(group, m) for m in models]
            if examples:
                cells.append(_fit(", ".join(group.examples), examples))
            table.add_row(*cells, key=str(group.number))
        table.display = bool(insights.groups)
        if insights.groups:
            table.move_cursor(row=min(cursor, len(table.rows) - 1))
            self._describe(insights.groups[table.cursor_row])
        else:
            self.query_one("#insight-line", Static).update("No failed attempt.")
        has_tags = insights.baseline is not None and len(models) > 1
        tags_heading = self.query_one("#insight-tags-title", Static)
        tags_heading.update(tags_title(insights) if has_tags else "")
        tags = "\n".join(split_line(s) for s in insights.tag_splits) or "no discordant task"
        self.query_one("#insight-tags", Static).update(tags if has_tags else "")
        for name in ("#insight-tags-title", "#insight-tags"):
            self.query_one(name).display = has_tags
        lines = [unpassed_line(insights)] if insights.unpassed else []
        suspects = "\n".join(lines + [suspect_line(s) for s in insights.suspects]) or NO_SUSPECT
        self.query_one("#insight-suspects", Static).update(suspects)
        traffic = insights.traffic
        self.query_one("#insight-traffic", Static).update("\n".join(traffic_lines(traffic)) if traffic else "")
        for name in ("#insight-traffic-title", "#insight-traffic"):
            self.query_one(name).display = traffic is not None
        hidden = len(insights.groups) - ROWS
        notes = (
            [f"… and {hidden} more groups (`compare-tui insights --format json` lists every one)"] if hidden > 0 else []
        )
        notes += [f"Note: {note}" for note in insights.notes]
        notes_box = self.query_one("#insight-notes", Static)
        notes_box.update("\n".join(notes))
        notes_box.display = bool(notes)

    def _describe(self, group: FailureGroup) -> None:
        if self.insights is not None:
            self.query_one("#insight-line", Static).update(group_line(self.insights, group))

    def current(self) -> FailureGroup | None:
        """The group under the cursor (None before the insights are shown, or with none)."""
        if self.insights is None or not self.insights.groups:
            return None
        return self.insights.groups[self.query_one("#insight-groups", DataTable).cursor_row]

    @on(DataTable.RowHighlighted, "#insight-groups")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        group = self.current()
        if group is not None:
            self._describe(group)

    @on(DataTable.RowSelected, "#insight-groups")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        group = self.current()
        if group is not None:
            self.post_message(GroupChosen(group))
