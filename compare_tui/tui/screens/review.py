"""Human review: the queue of tasks that need a person (and any flagged), one at a time: the
answer first, then the expected outcome, the scorer's instructions and the input. p / f / s
save pass, fail or skip to the store at once, with who and when; the report is rebuilt and the
"needs review" caveat clears when no task is left waiting.

A verdict on an answer whose end was never on screen is not taken silently: the first key says
how much is still below and asks for the same key again (or a scroll down to read it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from compare_tui.goldset.text import expected_text, input_text
from compare_tui.judge.calibration.load import LabelPlan, label_plan
from compare_tui.report import ReportNotFoundError, ReportRows, build_rows, load_report_inputs
from compare_tui.store import ReviewRecord, StoreError
from compare_tui.tui import messages
from compare_tui.tui.review_queue import ReviewItem, next_position, review_queue, waiting
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.note_entry import NoteEntryScreen
from compare_tui.tui.task_facts import read_task_facts
from compare_tui.tui.widgets.task_text import run_text
from compare_tui.vocabulary import ReviewVerdict

if TYPE_CHECKING:
    from textual.worker import Worker


class ReviewScreen(CompareScreen):
    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("p", "verdict('pass')", "Pass"),
        Binding("f", "verdict('fail')", "Fail"),
        Binding("s", "verdict('skip')", "Skip"),
        Binding("n", "note", "Note"),
        Binding("j,right", "step(1)", "Next"),
        Binding("k,left", "step(-1)", "Prev", tooltip="Previous"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, ref: str) -> None:
        super().__init__()
        self.ref = ref
        self.rows: ReportRows | None = None
        self.queue: list[ReviewItem] = []
        self.position = 0
        self.note = ""
        self.saving = False
        self._decided: tuple[list[ReviewItem], int] | None = None
        self._scrolled_to_end = False
        """The user scrolled the end of the current answer into view (it stays read)."""
        self._loaded = False
        """The current item's texts are on screen (not the previous item's)."""
        self.plan: LabelPlan | None = None
        """The answers proposed to calibrate the judges of these runs (read with the report)."""
        self._asked: tuple[tuple[str, str], str] | None = None
        """(item, verdict) of a verdict key pressed before the answer was seen: the same key
        again saves it."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="review-status", classes="status-line", markup=False)
        yield Static("", id="review-calibration", classes="status-line", markup=False)
        with VerticalScroll(id="review-body"):
            yield Static("Answer", classes="section-title")
            yield Static("", id="review-answer", classes="block", markup=False)
            yield Static("Expected outcome (your baseline)", classes="section-title")
            yield Static("", id="review-expected", classes="block", markup=False)
            yield Static("", id="review-scorer", markup=False)
            yield Static("Input", classes="section-title")
            yield Static("", id="review-input", classes="block", markup=False)
        yield Static("", id="review-seen", classes="status-line", markup=False)
        yield Static("", id="review-note", classes="status-line", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"review · {self.ref}"
        self.watch(self.query_one("#review-body", VerticalScroll), "scroll_y", self._check_seen, init=False)
        self.rebuild()

    # ------------------------------------------------------------------ the queue

    def rebuild(self) -> None:
        self.query_one("#review-body").loading = True
        self.build(self.ref)

    @work(
        thread=True, exit_on_error=False, group="review-report", exclusive=True, description="building the review queue"
    )
    def build(self, ref: str) -> None:
        try:
            inputs = load_report_inputs(self.workspace.store, ref)
            rows = build_rows(inputs)  # the grid alone: the queue reads no other figure
            plan = label_plan(self.workspace.store, [r.run for r in inputs.runs])
        except (ReportNotFoundError, StoreError) as exc:
            self.post_message(messages.ReportFailed(str(exc)))
            return
        self.post_message(messages.LabelPlanRead(plan))  # first: the queue is made when the rows arrive
        self.post_message(messages.RowsBuilt(rows))

    def on_label_plan_read(self, message: messages.LabelPlanRead) -> None:
        self.plan = message.plan
        line = self.query_one("#review-calibration", Static)
        line.update("\n".join(message.plan.lines))
        line.display = bool(message.plan.lines)

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.saving = False
        self.query_one("#review-body").loading = False

    def on_report_failed(self, message: messages.ReportFailed) -> None:
        self.query_one("#review-body").loading = False
        self.query_one("#review-status", Static).update(f"✗ {message.reason}")

    def on_rows_built(self, message: messages.RowsBuilt) -> None:
        self.rows = message.rows
        proposed = [(p.run_id, p.task_id) for p in self.plan.proposals] if self.plan is not None else []
        queue = review_queue(self.rows, self.workspace.flagged, proposed)
        if self._decided is not None:
            old, index = self._decided
            self.position = next_position(old, index, queue)
            self._decided = None
            if not waiting(queue) and waiting(old):
                self.notify(
                    'No task is left waiting for a person: the report\'s "needs review" caveat has cleared.',
                    title="Review queue empty",
                    timeout=8,
                )
        self.queue = queue
        self.position = min(self.position, max(0, len(queue) - 1))
        self._show()

    def _current(self) -> ReviewItem | None:
        return self.queue[self.position] if self.queue else None

    def _show(self) -> None:
        item = self._current()
        status = self.query_one("#review-status", Static)
        if item is None:
            self.query_one("#review-body").loading = False
            status.update(
                "Nothing to review: no task needs a person, none is flagged, no judge asks for labels. Esc goes back."
            )
            for part in ("scorer", "input", "expected", "answer"):
                self.query_one(f"#review-{part}", Static).update("")
            self._show_note()
            return
        left = waiting(self.queue)
        self._unseen()
        status.update(
            f"{self.position + 1} of {len(self.queue)} · {left} waiting · {item.task_id} · {item.label} · "
            f"{item.reason}" + (f" · last verdict {item.verdict}" if item.verdict else "")
        )
        self.query_one("#review-body").loading = True
        self.read(item)
        self._show_note()

    @work(thread=True, exit_on_error=False, group="review-task", exclusive=True, description="reading the task")
    def read(self, item: ReviewItem) -> None:
        self.post_message(messages.TaskDetailLoaded(read_task_facts(self.workspace, (item.run_id,), item.task_id)))

    def on_task_detail_loaded(self, message: messages.TaskDetailLoaded) -> None:
        facts = message.detail
        item = self._current()
        if item is None or facts.task_id != item.task_id:
            return
        task = facts.task
        scorer = facts.scorer_text or "scorer unknown"
        self.query_one("#review-scorer", Static).update(
            f"scorer: {scorer}" + (f"\n✗ {facts.set_problem}" if facts.set_problem else "")
        )
        self.query_one("#review-input", Static).update(input_text(task) if task else "(not available)")
        self.query_one("#review-expected", Static).update(expected_text(task) if task else "(not available)")
        self.query_one("#review-answer", Static).update(run_text(facts.runs[0]) if facts.runs else "(no run)")
        body = self.query_one("#review-body", VerticalScroll)
        body.loading = False
        body.scroll_home(animate=False)
        self._loaded = True
        self.call_after_refresh(self.call_after_refresh, self._check_seen)  # once the new text is laid out

    # ------------------------------------------------------------------ has the answer been seen?

    @property
    def answer_seen(self) -> bool:
        """The end of the current answer is on screen now, or was scrolled into view."""
        return self._loaded and (self._scrolled_to_end or self.lines_below() == 0)

    def _unseen(self) -> None:
        self._scrolled_to_end = self._loaded = False
        self._asked = None
        self.query_one("#review-seen", Static).display = False

    def lines_below(self) -> int:
        """Lines of the answer still below the visible part of the body (0: its end is on screen)."""
        body = self.query_one("#review-body", VerticalScroll)
        answer = self.query_one("#review-answer", Static)
        bottom = answer.virtual_region.bottom
        visible = round(body.scroll_y) + body.scrollable_content_region.height
        return max(0, bottom - visible)

    def _check_seen(self, *_: object) -> None:
        if not self._loaded or not self.is_mounted:
            return
        below = self.lines_below()
        if below == 0 and self.query_one("#review-body", VerticalScroll).scroll_y > 0:
            self._scrolled_to_end = True
        line = self.query_one("#review-seen", Static)
        if line.display != (not self.answer_seen):
            # Showing (or hiding) this line resizes the body: count again once it has.
            self.call_after_refresh(self._check_seen)
        line.display = not self.answer_seen
        if not self.answer_seen:
            line.update(
                f"↓ the answer goes on for {below} more line{'s' if below != 1 else ''}: "
                "PgDn or ↓ to read it before a verdict"
            )

    def _show_note(self) -> None:
        who = f"reviewing as {self.workspace.reviewer}"
        self.query_one("#review-note", Static).update(
            f"note: {self.note} · {who}" if self.note else f"no note (n adds one) · {who}"
        )

    # ------------------------------------------------------------------ actions

    def action_verdict(self, verdict: str) -> None:
        item = self._current()
        if item is None:
            self.notify("Nothing to review.", severity="warning")
            return
        if self.saving:
            return
        if not self.answer_seen and self._asked != (item.key, verdict):
            self._asked = (item.key, verdict)
            below = self.lines_below()
            unread = (
                f"its last {below} line{'s' if below != 1 else ''} have not been on screen"
                if below
                else "it has not been shown yet"
            )
            self.notify(
                f"You have not seen the whole answer to {item.task_id} ({item.label}): {unread}. "
                f"Scroll down to read it, or press {verdict[0]} again to save {verdict} anyway.",
                title="Answer not read to the end",
                severity="warning",
                timeout=8,
            )
            return
        self._asked = None
        self.saving = True
        self._decided = (list(self.queue), self.position)
        self.save(
            ReviewRecord(
                run_id=item.run_id,
                task_id=item.task_id,
                verdict=ReviewVerdict(verdict),
                note=self.note,
                reviewer=self.workspace.reviewer,
            )
        )

    @work(thread=True, exit_on_error=False, group="review-save", description="saving the verdict")
    def save(self, review: ReviewRecord) -> None:
        self.post_message(messages.ReviewSaved(self.workspace.store.add_review(review)))

    def on_review_saved(self, message: messages.ReviewSaved) -> None:
        review = message.review
        self.saving = False
        self.note = ""
        self.workspace.edits += 1
        self.workspace.flagged.discard((review.run_id, review.task_id))
        self.notify(
            f"Saved {review.verdict} on {review.task_id} by {review.reviewer} at {review.at[:19].replace('T', ' ')} UTC"
        )
        self.rebuild()

    def action_note(self) -> None:
        item = self._current()
        if item is None:
            return

        def noted(text: str | None) -> None:
            if text is not None:
                self.note = text
                self._show_note()

        self.app.push_screen(NoteEntryScreen(item.task_id, self.note), noted)

    def action_step(self, delta: int) -> None:
        if not self.queue:
            return
        self.position = (self.position + delta) % len(self.queue)
        self.note = ""
        self._show()

    def action_back(self) -> None:
        self.app.pop_screen()
