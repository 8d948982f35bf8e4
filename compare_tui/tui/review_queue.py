"""The human review queue: tasks still waiting for a person (a `human` scorer, or an attempt
that asked for review) and any the user flagged, one item per (run, task). Pure.

The queue is read from the report each time a verdict is saved, so it always agrees with the
report: a pass or fail verdict removes a waiting task; a skip leaves it waiting (a task stays
in review until a person decides).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from compare_tui.report import Report, ReportRows
from compare_tui.vocabulary import Outcome, ReviewVerdict

NEEDS_A_PERSON = "needs a person"
FLAGGED = "flagged"
TO_CALIBRATE = "label to calibrate the judge"


@dataclass(frozen=True, slots=True)
class ReviewItem:
    run_id: str
    label: str
    """The model's label in the report."""
    task_id: str
    reason: str
    """`needs a person`, `flagged` or `label to calibrate the judge`."""
    verdict: str | None
    """The latest verdict given so far (a skip, or a flagged task's earlier decision)."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.run_id, self.task_id)


def review_queue(
    report: Report | ReportRows, flagged: Collection[tuple[str, str]] = (), proposed: Sequence[tuple[str, str]] = ()
) -> list[ReviewItem]:
    """Every item, task by task in the report's order, then model by model (a report's grid
    alone is enough: `assembly.report_rows`); then the answers proposed to calibrate a judge
    (`judge.calibration.label_plan`), in their order, except those already queued or already
    labelled pass or fail."""
    items = []
    for index, task_id in enumerate(report.task_ids):
        for row in report.models:
            block = row.blocks[index]
            if block.status == Outcome.REVIEW:
                items.append(ReviewItem(row.run_id, row.label, task_id, NEEDS_A_PERSON, block.verdict))
            elif (row.run_id, task_id) in flagged:
                items.append(ReviewItem(row.run_id, row.label, task_id, FLAGGED, block.verdict))
    queued = {item.key for item in items}
    positions = {task_id: index for index, task_id in enumerate(report.task_ids)}
    rows = {row.run_id: row for row in report.models}
    for run_id, task_id in proposed:
        model = rows.get(run_id)
        if model is None or task_id not in positions or (run_id, task_id) in queued:
            continue
        verdict = model.blocks[positions[task_id]].verdict
        if verdict not in (ReviewVerdict.PASS, ReviewVerdict.FAIL):
            items.append(ReviewItem(run_id, model.label, task_id, TO_CALIBRATE, verdict))
    return items


def waiting(items: Sequence[ReviewItem]) -> int:
    """Items that keep the report's "needs review" caveat (and low confidence) in place."""
    return sum(1 for item in items if item.reason == NEEDS_A_PERSON)


def next_position(old: Sequence[ReviewItem], index: int, new: Sequence[ReviewItem]) -> int:
    """Where to stand in `new` after deciding `old[index]`: the item that followed it, if it is
    still queued; else the same place (wrapping to the start to reach skipped items)."""
    if not new:
        return 0
    keys = [item.key for item in new]
    for item in old[index + 1 :]:
        if item.key in keys:
            return keys.index(item.key)
    return 0 if index >= len(new) else min(index, len(new) - 1)
