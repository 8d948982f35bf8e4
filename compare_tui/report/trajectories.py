"""Whole-run replay figures: per model, runs driven without losing a step.

Tasks that carry a golden-set `trace = {run, step, of}` are the steps of recorded agent runs.
Per shown model, computed once here from the model's blocks (the same statuses the grid
shows, a person's verdict included):
- a step is *kept* when its status is `pass`, *lost* when `fail`, and *not measured* when
  `error`, `missing` (not done) or `review` (waiting for a person): a step not measured counts
  neither as lost nor as kept;
- a run is *driven* when every step was kept, *lost* when any step was lost (its first lost
  step is the earliest failed one), and *undecided* otherwise (no step lost, at least one not
  measured): an undecided run is in neither count of "K of M runs driven";
- runs driven: K of M = driven / (driven + lost), with the exact binomial 95% interval the
  pass rate uses (`stats.proportion_interval`);
- step pass rate: kept / (kept + lost) over every step of every run, with the same interval.
A candidate's divergent actions are judged, never followed (`CAVEAT`).

Opt-in (`StepGrading`, `report --steps-by-grade`): a step still waiting for a person whose
answer a judge graded is kept when its grade is at least `pass_at`, else lost; it is marked as
decided by a grade, counted, and named in a caveat. A person's verdict, when given, already
decided the block, so it always wins over a grade.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compare_tui.report.caveats import Caveat
from compare_tui.report.figures import Block, ModelFigures
from compare_tui.report.inputs import StepGrading
from compare_tui.report.stats import Interval, proportion_interval
from compare_tui.vocabulary import MISSING, Outcome, TaskStatus

Trace = tuple[str, int, int]
"""(run, step, of) of a traced task."""

CAVEAT = (
    "A candidate's divergent actions are judged, never followed; this measures action fidelity against a "
    "recorded trajectory, not free-running behaviour."
)

DRIVEN, LOST, UNDECIDED = "driven", "lost", "undecided"


@dataclass(frozen=True, slots=True)
class RunStrip:
    """One recorded run of one model: its steps in order, as one strip of blocks."""

    run: str
    task_ids: tuple[str, ...]
    """The steps' task ids, step 1 first."""
    statuses: tuple[TaskStatus, ...]
    """Each step's status (`pass`, `fail`, `review`, `error`, `missing`), as in the grid."""
    verdict: str
    """`driven`, `lost` or `undecided` (see the module docstring)."""
    first_lost: int | None
    """The 1-based step first lost (None unless `lost`)."""
    not_measured: tuple[int, ...]
    """The 1-based steps not measured (error, not done, or waiting for a person)."""
    by_grade: tuple[int, ...] = ()
    """The 1-based steps that waited for a person and were decided by a judge's stored grade."""


@dataclass(frozen=True, slots=True)
class Trajectories:
    """Whole-run replay figures of one shown model."""

    label: str
    runs: tuple[RunStrip, ...]
    driven: int
    lost: int
    undecided: int
    interval: Interval | None
    """95% interval of driven / (driven + lost); None when no run was decided."""
    steps_kept: int
    steps_lost: int
    steps_not_measured: int
    step_interval: Interval | None
    steps_by_grade: int = 0
    """Steps waiting for a person that a judge's stored grade decided (`StepGrading`)."""

    @property
    def decided(self) -> int:
        return self.driven + self.lost

    @property
    def rate(self) -> float | None:
        return self.driven / self.decided if self.decided else None

    @property
    def step_rate(self) -> float | None:
        measured = self.steps_kept + self.steps_lost
        return self.steps_kept / measured if measured else None


def run_order(traces: Mapping[str, Trace], task_ids: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each run (in the order its first step appears among `task_ids`) with its steps' task
    ids, step 1 first. Tasks without a trace are left out."""
    steps: dict[str, dict[int, str]] = {}
    for task_id in task_ids:
        trace = traces.get(task_id)
        if trace is not None:
            steps.setdefault(trace[0], {})[trace[1]] = task_id
    return [(run, tuple(by_step[s] for s in sorted(by_step))) for run, by_step in steps.items()]


def _strip(
    run: str, task_ids: tuple[str, ...], blocks: Mapping[str, Block], grades: Mapping[str, int], pass_at: int
) -> RunStrip:
    statuses: tuple[TaskStatus, ...] = tuple(blocks[t].status if t in blocks else MISSING for t in task_ids)
    by_grade = tuple(
        i
        for i, (t, s) in enumerate(zip(task_ids, statuses, strict=True), start=1)
        if s == Outcome.REVIEW and t in grades
    )
    statuses = tuple(
        (Outcome.PASS if grades[t] >= pass_at else Outcome.FAIL) if i in by_grade else s
        for i, (t, s) in enumerate(zip(task_ids, statuses, strict=True), start=1)
    )
    lost = [i for i, s in enumerate(statuses, start=1) if s == Outcome.FAIL]
    unmeasured = tuple(i for i, s in enumerate(statuses, start=1) if s not in (Outcome.PASS, Outcome.FAIL))
    verdict = LOST if lost else UNDECIDED if unmeasured else DRIVEN
    return RunStrip(run, task_ids, statuses, verdict, lost[0] if lost else None, unmeasured, by_grade)


def trajectories(
    rows: Sequence[ModelFigures],
    traces: Mapping[str, Trace],
    task_ids: Sequence[str],
    grading: StepGrading | None = None,
) -> tuple[Trajectories, ...]:
    """Per shown row, the whole-run figures; () when no task of the report carries a trace.
    With `grading`, a step waiting for a person is decided by its run's stored grade."""
    runs = run_order(traces, task_ids)
    if not runs:
        return ()
    out = []
    for row in rows:
        blocks = {b.task_id: b for b in row.blocks}
        grades = grading.grades.get(row.run_id, {}) if grading is not None else {}
        pass_at = grading.pass_at if grading is not None else 0
        strips = tuple(_strip(run, ids, blocks, grades, pass_at) for run, ids in runs)
        driven = sum(1 for s in strips if s.verdict == DRIVEN)
        lost = sum(1 for s in strips if s.verdict == LOST)
        statuses = [status for s in strips for status in s.statuses]
        kept, failed = statuses.count(Outcome.PASS), statuses.count(Outcome.FAIL)
        out.append(
            Trajectories(
                label=row.label,
                runs=strips,
                driven=driven,
                lost=lost,
                undecided=len(strips) - driven - lost,
                interval=proportion_interval(driven, driven + lost),
                steps_kept=kept,
                steps_lost=failed,
                steps_not_measured=len(statuses) - kept - failed,
                step_interval=proportion_interval(kept, kept + failed),
                steps_by_grade=sum(len(s.by_grade) for s in strips),
            )
        )
    return tuple(out)


def replay_caveats(figures: Sequence[Trajectories], grading: StepGrading | None = None) -> list[Caveat]:
    """The replay's boundary, per model the steps a judge's grade decided, and the runs that
    could not be decided."""
    if not figures:
        return []
    out = [Caveat("replay", CAVEAT)]
    for fig in figures:
        if grading is not None and fig.steps_by_grade:
            steps = "step" if fig.steps_by_grade == 1 else "steps"
            out.append(
                Caveat(
                    "steps_by_grade",
                    f"{fig.label}: {fig.steps_by_grade} {steps} waiting for a person "
                    f"were decided by the judge {grading.judge}'s stored grades ({grading.rubric} "
                    f"rubric, kept from grade {grading.pass_at} up): a model's grade, not a person's "
                    "review; a person's verdict, when given, wins.",
                )
            )
        if fig.undecided:
            runs = "run was" if fig.undecided == 1 else "runs were"
            out.append(
                Caveat(
                    "replay_undecided",
                    f"{fig.label}: {fig.undecided} {runs} not decided: a step was not "
                    "measured (an error, not done, or waiting for a person) and none was lost, so "
                    "they count neither as driven nor as lost.",
                )
            )
    return out
