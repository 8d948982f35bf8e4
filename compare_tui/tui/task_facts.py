"""Everything the Task detail and Review screens show about one task: its input and expected
outcome (from the golden set), and every run's attempts and latest verdict (from the store).

`read_task_facts` does the IO (call it from a worker thread). A finished run's attempts are
read once per session and kept by task, so moving from task to task is instant.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from compare_tui.goldset import Task
from compare_tui.store import AttemptRecord, ReviewRecord, RunRecord, RunStatus
from compare_tui.tui.workspace import Workspace


@dataclass(frozen=True, slots=True)
class RunAttempts:
    run: RunRecord
    attempts: tuple[AttemptRecord, ...]
    """This task's attempts in this run, by attempt number."""
    review: ReviewRecord | None
    """The latest verdict a person gave on this task in this run."""


@dataclass(frozen=True, slots=True)
class TaskFacts:
    task_id: str
    task: Task | None
    """None when the golden set cannot be read or no longer has the task (`set_problem` says why)."""
    scorer_kind: str | None
    scorer_text: str
    """The scorer in words: kind, its settings, a human scorer's instructions."""
    set_problem: str | None
    runs: tuple[RunAttempts, ...]


class AttemptCache:
    """A finished run's attempts grouped by task, read once (10,000 rows take about half a second)."""

    def __init__(self) -> None:
        self._by_run: dict[str, dict[str, tuple[AttemptRecord, ...]]] = {}
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Drop every cached run (another store may reuse the same run ids: tests do)."""
        with self._lock:
            self._by_run.clear()

    def for_task(self, workspace: Workspace, run: RunRecord, task_id: str) -> tuple[AttemptRecord, ...]:
        with self._lock:
            cached = self._by_run.get(run.id)
        if cached is None:
            grouped: dict[str, list[AttemptRecord]] = defaultdict(list)
            for attempt in workspace.store.attempts_for_run(run.id):
                grouped[attempt.task_id].append(attempt)
            cached = {task: tuple(items) for task, items in grouped.items()}
            if run.status == RunStatus.COMPLETED:  # a run still going (or resumable) may gain attempts
                with self._lock:
                    self._by_run[run.id] = cached
        return cached.get(task_id, ())


ATTEMPTS = AttemptCache()


def read_task_facts(
    workspace: Workspace, run_ids: tuple[str, ...], task_id: str, cache: AttemptCache = ATTEMPTS
) -> TaskFacts:
    store = workspace.store
    runs = [store.get_run_exact(run_id) for run_id in run_ids]
    task, scorer_kind, scorer_text, problem = None, None, "", None
    if runs:
        goldset, problem = workspace.golden_set_or_none(runs[0].goldset_path)
        if goldset is not None:
            try:
                task = goldset.task(task_id)
            except KeyError:
                problem = f"the golden set at {goldset.root} no longer has task {task_id}"
            else:
                scorer = goldset.scorer_for(task)
                scorer_kind, scorer_text = scorer.kind, scorer_words(scorer)
    rows = []
    for run in runs:
        review = store.reviews_for_run(run.id).get(task_id)
        rows.append(RunAttempts(run, cache.for_task(workspace, run, task_id), review))
    return TaskFacts(task_id, task, scorer_kind, scorer_text, problem, tuple(rows))


def scorer_words(scorer: Any) -> str:
    """`exact (normalize: case, whitespace)`, `human: <instructions>`, …"""
    data = scorer.model_dump(by_alias=True, exclude_defaults=True, exclude={"kind"})
    if scorer.kind == "human":
        return f"human: {reflow(scorer.instructions) or 'no instructions given'}"
    if scorer.kind == "json" and isinstance(data.get("schema"), dict):
        data["schema"] = "{…}"
    settings = ", ".join(f"{k}: {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in data.items())
    return f"{scorer.kind} ({settings})" if settings else scorer.kind


def reflow(text: str | None) -> str:
    """A manifest's text as prose: the hard line breaks inside a paragraph (a TOML multi-line
    string wrapped at some width) become spaces, so the screen wraps it at its own width; blank
    lines between paragraphs stay paragraph breaks."""
    if not text:
        return ""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)
