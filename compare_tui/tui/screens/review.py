"""Human review: the queue of tasks that need a person (and any flagged), one at a time, with
the input, the expected outcome and the answer. p / f / s save pass, fail or skip to the store
at once, with who and when; the report is rebuilt and the "needs review" caveat clears when no
task is left waiting."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from compare_tui.report import Report, ReportNotFoundError, build_report, load_report_inputs
from compare_tui.store import ReviewRecord, StoreError
from compare_tui.tui import messages
from compare_tui.tui.review_queue import ReviewItem, next_position, review_queue, waiting
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.screens.note_entry import NoteEntryScreen
from compare_tui.tui.task_facts import read_task_facts
from compare_tui.tui.widgets.task_text import expected_text, input_text, run_text


class ReviewScreen(CompareScreen):
    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("p", "verdict('pass')", "Pass"),
        Binding("f", "verdict('fail')", "Fail"),
        Binding("s", "verdict('skip')", "Skip"),
        Binding("n", "note", "Note"),
        Binding("j,right", "step(1)", "Next"),
        Binding("k,left", "step(-1)", "Previous"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, ref: str) -> None:
        super().__init__()
        self.ref = ref
        self.report: Report | None = None
        self.queue: list[ReviewItem] = []
        self.position = 0
        self.note = ""
        self.saving = False
        self._decided: tuple[list[ReviewItem], int] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="review-status", classes="status-line", markup=False)
        with VerticalScroll(id="review-body"):
            yield Static("", id="review-scorer", markup=False)
            yield Static("Input", classes="section-title")
            yield Static("", id="review-input", classes="block", markup=False)
            yield Static("Expected outcome (your baseline)", classes="section-title")
            yield Static("", id="review-expected", classes="block", markup=False)
            yield Static("Answer", classes="section-title")
            yield Static("", id="review-answer", classes="block", markup=False)
        yield Static("", id="review-note", classes="status-line", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"review · {self.ref}"
        self.rebuild()

    # ------------------------------------------------------------------ the queue

    def rebuild(self) -> None:
        self.query_one("#review-body").loading = True
        self.build(self.ref)

    @work(thread=True, exit_on_error=False, group="review-report", exclusive=True, description="building the review queue")
    def build(self, ref: str) -> None:
        try:
            report = build_report(load_report_inputs(self.workspace.store, ref))
        except (ReportNotFoundError, StoreError) as exc:
            self.post_message(messages.ReportFailed(str(exc)))
            return
        self.post_message(messages.ReportBuilt(report, 0.0))

    def worker_failed(self, worker) -> None:
        self.saving = False
        self.query_one("#review-body").loading = False

    def on_report_failed(self, message: messages.ReportFailed) -> None:
        self.query_one("#review-body").loading = False
        self.query_one("#review-status", Static).update(f"✗ {message.reason}")

    def on_report_built(self, message: messages.ReportBuilt) -> None:
        self.report = message.report
        queue = review_queue(self.report, self.workspace.flagged)
        if self._decided is not None:
            old, index = self._decided
            self.position = next_position(old, index, queue)
            self._decided = None
            if not waiting(queue) and waiting(old):
                self.notify("No task is left waiting for a person: the report's \"needs review\" caveat has cleared.",
                            title="Review queue empty", timeout=8)
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
            status.update("Nothing to review: no task needs a person and none is flagged. Esc goes back.")
            for part in ("scorer", "input", "expected", "answer"):
                self.query_one(f"#review-{part}", Static).update("")
            self._show_note()
            return
        left = waiting(self.queue)
        status.update(f"{self.position + 1} of {len(self.queue)} · {left} waiting · {item.task_id} · {item.label} · "
                      f"{item.reason}" + (f" · last verdict {item.verdict}" if item.verdict else ""))
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
        self.query_one("#review-scorer", Static).update(f"scorer: {scorer}" + (f"\n✗ {facts.set_problem}" if facts.set_problem else ""))
        self.query_one("#review-input", Static).update(input_text(task) if task else "(not available)")
        self.query_one("#review-expected", Static).update(expected_text(task) if task else "(not available)")
        self.query_one("#review-answer", Static).update(run_text(facts.runs[0]) if facts.runs else "(no run)")
        self.query_one("#review-body").loading = False
        self.query_one("#review-body").scroll_home(animate=False)

    def _show_note(self) -> None:
        who = f"reviewing as {self.workspace.reviewer}"
        self.query_one("#review-note", Static).update(f"note: {self.note} · {who}" if self.note else f"no note (n adds one) · {who}")

    # ------------------------------------------------------------------ actions

    def action_verdict(self, verdict: str) -> None:
        item = self._current()
        if item is None:
            self.notify("Nothing to review.", severity="warning")
            return
        if self.saving:
            return
        self.saving = True
        self._decided = (list(self.queue), self.position)
        self.save(ReviewRecord(run_id=item.run_id, task_id=item.task_id, verdict=verdict, note=self.note,
                               reviewer=self.workspace.reviewer))

    @work(thread=True, exit_on_error=False, group="review-save", description="saving the verdict")
    def save(self, review: ReviewRecord) -> None:
        self.post_message(messages.ReviewSaved(self.workspace.store.add_review(review)))

    def on_review_saved(self, message: messages.ReviewSaved) -> None:
        review = message.review
        self.saving = False
        self.note = ""
        self.workspace.edits += 1
        self.workspace.flagged.discard((review.run_id, review.task_id))
        self.notify(f"Saved {review.verdict} on {review.task_id} by {review.reviewer} at {review.at[:19].replace('T', ' ')} UTC")
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
