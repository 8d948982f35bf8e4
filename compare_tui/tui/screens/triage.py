"""Triage: a keyboard queue of the places a judge disagrees — with a person's label, with the
executable scorer, with itself (inconsistent orderings), or with the current evaluator.

`j`/`k` move; both answers and both rationales stand side by side; `p` / `f` / `t` / `s`
label the item (on a pair: candidate better / baseline better / tie / skip; on a single
answer: pass / fail / skip) and `n` adds a note to the next label. A label is saved at once
with who and when, then the figures (and an evaluator comparison's badge) are read again from
the store, so they update live. `0`–`5` filter by kind of disagreement; the status line shows
n of m triaged. Self-contained: give it a store, a judging (id, prefix or `latest`) and a
reviewer; everything that touches the store runs in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Header, Static
from textual.worker import Worker

from compare_tui.errors import CompareTuiError
from compare_tui.judge.evaluator.compare import BadgeName
from compare_tui.judge.evaluator.triage import (
    KINDS,
    Disagreement,
    TriageItem,
    TriageView,
    filtered,
    load_triage,
    save_label,
)
from compare_tui.store import Store
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.note_entry import NoteEntryScreen

FILTERS: tuple[Disagreement | None, ...] = (None, *KINDS)
"""Key `0` shows every item; keys `1`–`5` one kind of disagreement each, in `KINDS` order."""
_PAIR_KEYS = "p candidate better · f baseline better · t tie · s skip · n note · r reasons"
_GRADE_KEYS = "p pass · f fail · s skip · n note · r reasons"
_BADGE_CLASS = {
    BadgeName.LOOKS_SAFE: "badge-safe",
    BadgeName.REVIEW_FIRST: "badge-review",
    BadgeName.NOT_ENOUGH_DATA: "badge-nodata",
}
HOW_TO_JUDGE = (
    "A judging is made on the command line, from two runs of one golden set (or one run and a "
    "candidate judge):\n"
    "  compare-tui judge RUN_A RUN_B --judge MODEL --rubric rubric.txt\n"
    "  compare-tui evaluator-compare --run RUN --current scorer --candidate MODEL\n"
    "(run ids are on Home's Runs tab). Then press g here, or j on Home, to triage it. Esc goes back."
)
"""The empty state's instructions: how to create what this screen triages."""


@dataclass
class TriageLoaded(Message):
    """The triage view was (re)read from the store."""

    view: TriageView


@dataclass
class TriageUnavailable(Message):
    """There is no judging to triage (none in the store, or none matches the reference)."""

    reason: str


@dataclass
class TriageLabelSaved(Message):
    """A person's label was stored; `saved` says what, by whom and when."""

    task_id: str
    saved: str


class TriageScreen(CompareScreen):
    """The disagreement queue of one judging (pairwise, or graded against a current evaluator)."""

    CSS_PATH = "triage.tcss"
    BINDINGS = [
        Binding("j,down", "step(1)", "Next"),
        Binding("k,up", "step(-1)", "Prev", tooltip="Previous"),
        # On a pair, p and f name the sides as the body does (check_action shows one pair of them).
        Binding("p", "label('pass')", "Pass"),
        Binding("f", "label('fail')", "Fail"),
        Binding("p", "pair_label('pass')", "Cand. better", tooltip="Candidate's answer better"),
        Binding("f", "pair_label('fail')", "Base better", tooltip="Baseline's answer better"),
        Binding("r", "reasons", "Reasons", tooltip="The judge's reasoning, whole"),
        Binding("t", "label('tie')", "Tie"),
        Binding("s", "label('skip')", "Skip"),
        Binding("n", "note", "Note"),
        Binding("g", "reload", "Refresh", show=False),
        *(Binding(str(i), f"filter({i})", kind or "All", show=False) for i, kind in enumerate(FILTERS)),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, judging: str = "latest", *, current: str | None = None) -> None:
        super().__init__()
        self.judging = judging
        self.current = current
        """For a grade judging: `scorer` or a judging id (default: what it was last compared with)."""
        self.view: TriageView | None = None
        self.items: list[TriageItem] = []
        """The queue under the current filter."""
        self.position = 0
        self.kind_filter: Disagreement | None = None
        self.note = ""
        self.saving = False
        self._follow: str | None = None
        """After a save: the task whose successor to stand on once the view is read again."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="triage-figures", markup=False)
        yield Static("reading the judging…", id="triage-status", markup=False)
        with Horizontal(id="triage-answers"):
            for side in ("left", "right"):
                with Vertical(classes="pane"):
                    yield Static("", id=f"answer-{side}-title", classes="pane-title", markup=False)
                    with VerticalScroll():
                        yield Static("", id=f"answer-{side}", classes="pane-body", markup=False)
        with Horizontal(id="triage-rationales"):
            for side in ("left", "right"):
                with Vertical(classes="pane"):
                    yield Static("", id=f"rationale-{side}-title", classes="pane-title", markup=False)
                    with VerticalScroll():
                        yield Static("", id=f"rationale-{side}", classes="pane-body", markup=False)
        yield Static("", id="triage-label", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    @property
    def store(self) -> Store:
        return self.workspace.store

    @property
    def reviewer(self) -> str:
        """Who a label is recorded as: the workspace's reviewer, as for a review verdict."""
        return self.workspace.reviewer

    def on_mount(self) -> None:
        self.sub_title = f"triage · {self.judging}"
        self.load()

    # ------------------------------------------------------------------ workers

    @work(thread=True, exit_on_error=False, group="triage-load", exclusive=True, description="reading the triage queue")
    def load(self) -> None:
        if self.judging == "latest" and not self.store.list_judgings():
            self.post_message(TriageUnavailable("this store has no judging yet"))
            return
        try:
            view = load_triage(self.store, self.judging, self.current)
        except CompareTuiError as exc:  # no judging (yet), or the reference matches none
            self.post_message(TriageUnavailable(str(exc)))
            return
        self.post_message(TriageLoaded(view))

    @work(thread=True, exit_on_error=False, group="triage-save", description="saving the label")
    def save(self, view: TriageView, task_id: str, key: str, note: str) -> None:
        self.post_message(
            TriageLabelSaved(task_id, save_label(self.store, view, task_id, key, reviewer=self.reviewer, note=note))
        )

    def worker_failed(self, worker: Worker[Any]) -> None:
        # The notification is the base screen's (one handler for every worker failure).
        self.saving = False

    def on_triage_unavailable(self, message: TriageUnavailable) -> None:
        self.view, self.items = None, []
        self.sub_title = "triage · no judging"
        self.query_one("#triage-figures", Static).update(f"Nothing to triage: {message.reason}.")
        self.query_one("#triage-status", Static).update(HOW_TO_JUDGE)
        self.query_one("#triage-label", Static).display = False
        for part in ("#triage-answers", "#triage-rationales"):
            self.query_one(part).display = False

    def on_triage_loaded(self, message: TriageLoaded) -> None:
        for part in ("#triage-answers", "#triage-rationales", "#triage-label"):
            self.query_one(part).display = True
        self.view = message.view
        self.refresh_bindings()  # p and f say what they mean for this kind of judging
        self.sub_title = f"triage · {message.view.title}"
        self._refilter(self._follow)
        self._follow = None

    def on_triage_label_saved(self, message: TriageLabelSaved) -> None:
        self.saving = False
        self.note = ""
        self.notify(f"Saved {message.saved}", title="Label saved")
        self._follow = message.task_id
        self.load()

    # ------------------------------------------------------------------ showing

    def _refilter(self, after: str | None = None) -> None:
        keep = after or (self.items[self.position].task_id if self.items else None)
        old_ids = [item.task_id for item in self.items]
        self.items = filtered(self.view.items, self.kind_filter) if self.view else []
        ids = [item.task_id for item in self.items]
        if after is not None and after in old_ids:
            # Move on to the item that followed the one just labelled (still queued), else stay.
            following = [t for t in old_ids[old_ids.index(after) + 1 :] if t in ids]
            self.position = ids.index(following[0]) if following else min(self.position, max(0, len(ids) - 1))
        elif keep in ids:
            self.position = ids.index(keep)
        else:
            self.position = 0
        self._show()

    def _show(self) -> None:
        view = self.view
        if view is None:
            return
        figures = self.query_one("#triage-figures", Static)
        figures.update("\n".join(view.figures))
        figures.set_classes(_BADGE_CLASS[view.badge] if view.badge else "badge-none")
        done, total = view.progress()
        where = f"filter: {self.kind_filter or 'all'}"
        item = self.items[self.position] if self.items else None
        if item is None:
            self.query_one("#triage-status", Static).update(
                f"{done} of {total} triaged · {where} · nothing in this queue (0 shows every kind) · Esc goes back"
            )
            for part in ("answer-left", "answer-right", "rationale-left", "rationale-right"):
                self.query_one(f"#{part}-title", Static).update("")
                self.query_one(f"#{part}", Static).update("")
        else:
            self.query_one("#triage-status", Static).update(
                f"{done} of {total} triaged · item {self.position + 1} of {len(self.items)} ({where}) · "
                f"{item.task_id} · {', '.join(item.kinds)} · {item.summary}"
            )
            for side, (title, text) in zip(("left", "right"), item.answers, strict=True):
                self.query_one(f"#answer-{side}-title", Static).update(title)
                self.query_one(f"#answer-{side}", Static).update(text or "—")
            for side, (title, text) in zip(("left", "right"), item.rationales, strict=True):
                self.query_one(f"#rationale-{side}-title", Static).update(title)
                self.query_one(f"#rationale-{side}", Static).update(text or "—")
        self._show_label(item)

    def _show_label(self, item: TriageItem | None) -> None:
        keys = _PAIR_KEYS if self.view and self.view.kind == "pair" else _GRADE_KEYS
        given = "not labelled yet"
        if item is not None and item.label is not None:
            given = f"labelled {item.label} by {item.label_by} at {item.label_at[:19].replace('T', ' ')} UTC"
            given += f" ({item.label_note})" if item.label_note else ""
        note = f"note for the next label: {self.note}" if self.note else "no note"
        self.query_one("#triage-label", Static).update(f"{given} · {note} · as {self.reviewer}\n{keys}")

    # ------------------------------------------------------------------ actions

    def action_step(self, delta: int) -> None:
        if self.items:
            self.position = (self.position + delta) % len(self.items)
            self.note = ""
            self._show()

    def action_reload(self) -> None:
        self.query_one("#triage-status", Static).update("reading the judging…")
        self.load()

    def action_filter(self, index: int) -> None:
        self.kind_filter = FILTERS[index]
        self._refilter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        pair = self.view is not None and self.view.kind == "pair"
        if action == "label" and parameters and parameters[0] in ("pass", "fail"):
            return not pair
        if action == "pair_label":
            return pair
        if action == "reasons":
            return self.view is not None
        return True

    def action_pair_label(self, key: str) -> None:
        self.action_label(key)

    def action_reasons(self) -> None:
        """The judge's reasoning over the whole body (at 80×24 its pane holds a line or two)."""
        if self.view is not None:
            answers = self.query_one("#triage-answers")
            answers.display = not answers.display

    def action_label(self, key: str) -> None:
        if self.view is None or not self.items or self.saving:
            return
        if key == "tie" and self.view.kind != "pair":
            self.notify(
                "A tie needs two answers: label this answer p (pass), f (fail) or s (skip).", severity="warning"
            )
            return
        self.saving = True
        self.save(self.view, self.items[self.position].task_id, key, self.note)

    def action_note(self) -> None:
        if not self.items:
            return

        def noted(text: str | None) -> None:
            if text is not None:
                self.note = text
                self._show_label(self.items[self.position] if self.items else None)

        self.app.push_screen(NoteEntryScreen(self.items[self.position].task_id, self.note), noted)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
