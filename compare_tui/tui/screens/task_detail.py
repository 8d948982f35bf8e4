"""Task detail: the input, the expected outcome, and every run's answer per attempt (tool calls
in canonical form), scorer detail, timings and tokens. Two runs show side by side (A | B);
more show one under the other. n / p move to the next / previous task. A step of a recorded
agent run (`trace`) shows first in its run's context: the earlier steps, then the recorded
action beside each run's action."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Header, Static

from compare_tui.goldset.text import expected_text, input_text, run_context_text
from compare_tui.tui import messages
from compare_tui.tui.screen_base import CompareScreen
from compare_tui.tui.task_facts import TaskFacts, read_task_facts
from compare_tui.tui.widgets.task_text import run_text, step_action_text, task_header

if TYPE_CHECKING:
    from textual.worker import Worker


class TaskDetailScreen(CompareScreen):
    CSS_PATH = "task_detail.tcss"
    BINDINGS = [
        Binding("n", "step(1)", "Next task"),
        Binding("p", "step(-1)", "Previous task"),
        Binding("f", "flag", "Flag for review"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_ids: tuple[str, ...], task_id: str, task_ids: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.run_ids, self.task_id = run_ids, task_id
        self.task_ids = task_ids or (task_id,)
        self.facts: TaskFacts | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="task-body"):
            yield Static("", id="task-header", markup=False)
            yield Static(
                "Agent run: earlier steps, then this step's action, recorded | candidate",
                id="run-title",
                classes="section-title",
            )
            yield Static("", id="run-context", classes="block", markup=False)
            yield Horizontal(id="step-actions")
            yield Static("Input", classes="section-title")
            yield Static("", id="task-input", classes="block", markup=False)
            yield Static("Expected outcome (your baseline)", classes="section-title")
            yield Static("", id="task-expected", classes="block", markup=False)
            yield Static("Answers", classes="section-title")
            yield Horizontal(id="answers")
        yield Footer(compact=True)  # every key fits at 80 columns

    def on_mount(self) -> None:
        self.load(self.task_id)

    def _position(self) -> str:
        index = self.task_ids.index(self.task_id) + 1 if self.task_id in self.task_ids else 0
        return f"{index} of {len(self.task_ids)}" if index else ""

    def load(self, task_id: str) -> None:
        self.task_id = task_id
        self.sub_title = f"task {task_id} · {self._position()}"
        self.query_one("#task-body").loading = True
        self.read(task_id)

    @work(thread=True, exit_on_error=False, group="task", exclusive=True, description="reading the task")
    def read(self, task_id: str) -> None:
        self.post_message(messages.TaskDetailLoaded(read_task_facts(self.workspace, self.run_ids, task_id)))

    def worker_failed(self, worker: Worker[Any]) -> None:
        self.query_one("#task-body").loading = False

    async def on_task_detail_loaded(self, message: messages.TaskDetailLoaded) -> None:
        facts = self.facts = message.detail
        if facts.task_id != self.task_id:
            return
        self.query_one("#task-header", Static).update(task_header(facts))
        task = facts.task
        self.query_one("#task-input", Static).update(input_text(task) if task else "(not available)")
        self.query_one("#task-expected", Static).update(expected_text(task) if task else "(not available)")
        await self._show_run_context(facts)
        answers = self.query_one("#answers", Horizontal)
        await answers.remove_children()
        side_by_side = len(facts.runs) == 2
        answers.set_class(not side_by_side, "-stacked")
        columns = []
        for index, row in enumerate(facts.runs):
            title = f"{'AB'[index]}: " if side_by_side else ""
            column = Static(run_text(row), classes="answer", markup=False)
            column.border_title = f"{title}{row.run.model_name}"
            columns.append(column)
        await answers.mount_all(columns)
        self.query_one("#task-body").loading = False

    async def _show_run_context(self, facts: TaskFacts) -> None:
        """For a step of a recorded agent run: the earlier steps, then the recorded action beside
        each run's action (its first attempt); hidden for other tasks."""
        context = run_context_text(facts.task) if facts.task is not None else None
        for name in ("#run-title", "#run-context", "#step-actions"):
            self.query_one(name).display = context is not None
        actions = self.query_one("#step-actions", Horizontal)
        await actions.remove_children()
        if context is None or facts.task is None:
            return
        self.query_one("#run-context", Static).update(context)
        recorded = Static(expected_text(facts.task), classes="answer", markup=False)
        recorded.border_title = "recorded"
        columns = [recorded]
        for row in facts.runs:
            column = Static(step_action_text(row), classes="answer", markup=False)
            column.border_title = row.run.model_name
            columns.append(column)
        await actions.mount_all(columns)

    def action_step(self, delta: int) -> None:
        if self.task_id not in self.task_ids:
            return
        index = self.task_ids.index(self.task_id) + delta
        if 0 <= index < len(self.task_ids):
            self.load(self.task_ids[index])
        else:
            self.notify("No more tasks that way.", severity="information")

    def action_flag(self) -> None:
        for run_id in self.run_ids:
            self.workspace.flagged.add((run_id, self.task_id))
        self.notify(f"{self.task_id} flagged for review in {len(self.run_ids)} run(s): open the review queue with v.")

    def action_back(self) -> None:
        self.app.pop_screen()
