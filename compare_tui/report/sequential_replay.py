"""What the anytime-valid test would have said on a finished comparison: a look back, not a stop.

Per candidate, over the tasks it and the baseline both scored (N of them), taken in a fixed
order that depends only on the comparison and the task ids (sha256 of both, so it is chosen
before any outcome and is the same on every surface and every rebuild), the first look at which
the confidence sequence of `report.sequential` settled its verdict. The run itself used every
task; this says how many it would have needed had it stopped when the verdict settled. It is
labelled a confidence sequence wherever it is shown, beside (never instead of) the fixed-sample
verdict of `report.decision`.

Pure and deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.report import formatting as fmt
from compare_tui.report.figures import ModelFigures
from compare_tui.report.model import Report
from compare_tui.report.paired import both_scored
from compare_tui.report.sequential import Look, first_settled, side_alpha
from compare_tui.vocabulary import Outcome

ORDER_RULE = "tasks in the order of sha256(comparison id, task id), fixed before any outcome"


@dataclass(frozen=True, slots=True)
class SequentialReplay:
    """One candidate's look back: where its confidence sequence settled."""

    candidate: str
    tasks: int
    """N: the tasks both the candidate and the baseline scored, the sequence's population."""
    look: Look
    """The first settled look (the last look when it settled only there)."""
    level: float
    """The sequence's two-sided level per candidate, 1 − 0.05/K (each side at 0.05/(2K))."""

    @property
    def settled_early(self) -> bool:
        return self.look.settled and self.look.tasks < self.tasks

    @property
    def words(self) -> str:
        """`would have settled at task 14 of 64: better (confidence sequence at 95 %: +3.1 to
        +84.4 pts)`, or that it settles only at the last task."""
        look = self.look
        bounds = (
            f"confidence sequence at {fmt.level(self.level)}: {fmt.bound(look.low * 100)} to "
            f"{fmt.bound(look.high * 100)} pts"
        )
        how = ", curtailed: the remaining tasks could not change it" if look.curtailed else ""
        if self.settled_early:
            return f"would have settled at task {look.tasks} of {self.tasks}: {look.verdict} ({bounds}{how})"
        return f"would have settled only at the last task ({self.tasks}): {look.verdict} ({bounds})"


def replay_order(key: str, task_ids: Sequence[str]) -> list[int]:
    """Indices of `task_ids` in the look-back's order: by sha256 of `key` and the task id."""
    digest = {i: hashlib.sha256(f"{key}\0{task_id}".encode()).hexdigest() for i, task_id in enumerate(task_ids)}
    return sorted(range(len(task_ids)), key=lambda i: (digest[i], i))


def _outcomes(candidate: ModelFigures, baseline: ModelFigures, order: Sequence[int]) -> list[int]:
    outcomes = []
    for i in order:
        c, b = candidate.blocks[i], baseline.blocks[i]
        if both_scored(c, b):
            outcomes.append(int(c.status == Outcome.PASS) - int(b.status == Outcome.PASS))
    return outcomes


def sequential_replays(report: Report) -> tuple[SequentialReplay, ...]:
    """Each compared candidate's look back (none without a decision, nor for a comparison run
    with `--stop-when-settled`: `report.sequential_run` has its real sequence), at the decision's margin
    and with α split over the candidates compared, as the decision's level is."""
    decision = report.decision
    if decision is None or report.sequential is not None:  # a sequential run shows its own sequence
        return ()
    rows = {row.label: row for row in report.models}
    baseline = rows.get(decision.baseline)
    if baseline is None:
        return ()
    key = report.comparison_id or ",".join(report.run_ids)
    order = replay_order(key, report.task_ids)
    compared = [v for v in decision.versus if v.verdict is not None and v.candidate in rows]
    replays = []
    for v in compared:
        outcomes = _outcomes(rows[v.candidate], baseline, order)
        if not outcomes:
            continue
        look = first_settled(outcomes, len(outcomes), margin_pp=decision.margin_pp, candidates=len(compared))
        replays.append(SequentialReplay(v.candidate, len(outcomes), look, 1 - 2 * side_alpha(len(compared))))
    return tuple(replays)
