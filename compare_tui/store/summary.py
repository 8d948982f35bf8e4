"""A run's task outcomes in counts, for listings (`runs list`, the run browser).

Pure: it takes (task, outcome) pairs and the latest human verdicts, so it can be tested
without a store. The report's figures (intervals, latency, cost) are computed by `report/`;
this is only the one-line tally a listing shows beside each run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NOT_MEASURED_CLASSES = frozenset({"connect", "reset", "timeout", "transport", "http_429", "http_5xx", "auth"})
"""Error classes of an attempt where no model answered: the network or the server failed
(connection refused or reset, a timeout, 5xx or 429 after the retries, a refused key). Such
an attempt measured nothing: its task stays *not done*, a resume retries it, and it never
enters a figure. Every other error (the scorer itself failed, the server rejected the
request, a stream cut short after part of an answer) is a recorded outcome."""


def measured(outcome: str, error_class: str | None) -> bool:
    """False for an attempt that measured nothing (`NOT_MEASURED_CLASSES`)."""
    return not (outcome == "error" and error_class in NOT_MEASURED_CLASSES)


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

    @property
    def scored(self) -> int:
        """Tasks with a pass/fail decision: the denominator of the pass rate."""
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        """Share of scored tasks that passed; None when no task was scored."""
        return self.passed / self.scored if self.scored else None


def task_outcome(outcomes: Iterable[str], verdict: str | None = None) -> str:
    """One task's outcome from its attempts' outcomes and the latest human verdict.

    A person's `pass` or `fail` is final: it decides a task awaiting review, and it replaces
    the scorer's outcome of a scored task (a reviewer flagged it and judged otherwise). A
    `skip`, or no verdict, leaves the attempts to decide: a task passes when any attempt
    passes; otherwise an attempt awaiting a person keeps it in `review`; failing that, any
    measured failure is a `fail`, and only a task whose every attempt errored is an `error`.
    """
    seen = set(outcomes)
    if verdict in ("pass", "fail") and seen:
        return str(verdict)
    if "pass" in seen:
        return "pass"
    if "review" in seen:
        return "review"
    if "fail" in seen:
        return "fail"
    return "error"


def summarise(attempts: Iterable[tuple[str, str, str | None]], verdicts: Mapping[str, str],
              tasks_planned: int) -> RunSummary:
    """Tally `(task_id, outcome, error_class)` attempts, applying `verdicts` (task_id → latest
    verdict). Attempts that measured nothing are left out, so their tasks count as not done."""
    by_task: dict[str, list[str]] = defaultdict(list)
    for task_id, outcome, error_class in attempts:
        if measured(str(outcome), error_class):
            by_task[task_id].append(str(outcome))
    counts = {"pass": 0, "fail": 0, "review": 0, "error": 0}
    for task_id, outcomes in by_task.items():
        counts[task_outcome(outcomes, verdicts.get(task_id))] += 1
    return RunSummary(tasks_planned=tasks_planned, passed=counts["pass"], failed=counts["fail"],
                      review=counts["review"], errored=counts["error"])
