"""A run's task outcomes in counts, for listings (`runs list`, the run browser).

Pure: it takes (task, outcome) pairs and the latest human verdicts, so it can be tested
without a store. The report's figures (intervals, latency, cost) are computed by `report/`;
this is only the one-line tally a listing shows beside each run. It has no pass rate: that
figure is the report's (`report/figures.py`), which knows which tasks a person scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compare_tui.vocabulary import NOT_MEASURED_CLASSES, Outcome, measured, task_outcome

__all__ = ["NOT_MEASURED_CLASSES", "RunSummary", "measured", "summarise", "task_outcome"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Per-task tallies of one run. A task counts once, however many attempts it had."""

    tasks_planned: int
    """Tasks the run set out to do (the golden set's size)."""
    passed: int
    failed: int
    review: int
    """Tasks that still need a person."""
    errored: int
    """Tasks where nothing was measured."""

    @property
    def not_done(self) -> int:
        """Tasks with no measured attempt yet: never run, or every attempt measured nothing."""
        return max(0, self.tasks_planned - self.tasks_recorded)

    @property
    def tasks_recorded(self) -> int:
        """Tasks with at least one recorded attempt."""
        return self.passed + self.failed + self.review + self.errored


def summarise(
    attempts: Iterable[tuple[str, str, str | None]], verdicts: Mapping[str, str], tasks_planned: int
) -> RunSummary:
    """Tally `(task_id, outcome, error_class)` attempts, applying `verdicts` (task_id → latest
    verdict). Attempts that measured nothing are left out, so their tasks count as not done."""
    by_task: dict[str, list[str]] = defaultdict(list)
    for task_id, outcome, error_class in attempts:
        if measured(str(outcome), error_class):
            by_task[task_id].append(str(outcome))
    counts = dict.fromkeys(Outcome, 0)
    for task_id, outcomes in by_task.items():
        counts[task_outcome(outcomes, verdicts.get(task_id))] += 1
    return RunSummary(
        tasks_planned=tasks_planned,
        passed=counts[Outcome.PASS],
        failed=counts[Outcome.FAIL],
        review=counts[Outcome.REVIEW],
        errored=counts[Outcome.ERROR],
    )
