"""An experiment's figures, per arm: runs held vs wanted, the pass rate as a mean over runs
with a 95% CI that holds where most tasks never vary (`stats.repeated_rate_interval`: every
task of every run pooled, joined with Student-t over runs; from three runs; below that, the
runs' range, labelled as a range),
each task's consistency across runs, latency and cost spread
across runs, and confounds.

Two rates, two intervals, each named by what it covers (`RERUN_ESTIMAND`, `TASKS_ESTIMAND`):
- `interval` covers *this set's* rate under re-running: the same tasks, run again. It narrows
  as runs are added, and read as the rate on other tasks of the same kind it covers far below
  95 % (0.78 / 0.63 / 0.48 at N = 3 / 5 / 10 on a simulated population of tasks).
- `tasks_interval` covers the rate on *tasks like these*: the set's tasks taken as a sample of
  such tasks, so each task is one value (its pass share over the runs: clustered by task) and
  the interval is `stats.bounded_mean_interval` of those shares on [0, 1] (which holds on
  polarised values: most tasks always pass or always fail). From `MIN_TASKS_FOR_TASKS_INTERVAL`
  tasks; coverage in `bench/bench_coverage.py`.
Rescored runs of the arm's cell are not repeats: listed (`rescored`), never held.

Pure and deterministic: `experiment_figures(inputs)` is computed from the stored runs every
time it is called (no figure depends on a seed), so the CLI, JSON and
the TUI always show the same numbers. Per-run figures come from each run's own report
(`run_figures`), never recomputed here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compare_tui.experiment.confounds import Confound, check_arm
from compare_tui.experiment.load import ArmInput, ExperimentInputs
from compare_tui.experiment.run_figures import RunFigures, run_figures
from compare_tui.experiment.sequential import ArmsSequence
from compare_tui.report.prompt_cache import cache_caveats
from compare_tui.report.stats import Interval, bounded_mean_interval, repeated_rate_interval
from compare_tui.vocabulary import Consistency

CONSISTENT_PASS, CONSISTENT_FAIL, FLAKY, INCONCLUSIVE = (
    Consistency.CONSISTENT_PASS,
    Consistency.CONSISTENT_FAIL,
    Consistency.FLAKY,
    Consistency.INCONCLUSIVE,
)
RERUN_ESTIMAND = "this set's rate under re-running (these tasks, run again)"
"""What `ArmFigures.interval` covers."""
TASKS_ESTIMAND = "the rate on tasks like these (each task one value: its pass share over the runs)"
"""What `ArmFigures.tasks_interval` covers."""
MIN_TASKS_FOR_TASKS_INTERVAL = 5
"""Fewer tasks give no "tasks like these" interval (the bounded-mean interval is checked from five values)."""


@dataclass(frozen=True, slots=True)
class TaskConsistency:
    """One task across an arm's runs (tasks scored by a person are not listed)."""

    task_id: str
    passed: int
    conclusive: int
    """Runs in which the task was automatically scored pass or fail."""
    state: Consistency
    """`consistent pass`, `consistent fail`, `flaky` (passed in some runs only) or `inconclusive`."""


@dataclass(frozen=True, slots=True)
class Spread:
    """One value per run, summarised: how far the runs spread."""

    values: tuple[float, ...]
    low: float | None
    median: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class ArmFigures:
    """Everything one arm shows."""

    label: str
    model_name: str
    cell: str
    desired: int
    observed: int
    in_flight: tuple[str, ...]
    """Ids of the cell's runs still pending or running."""
    spare: int
    to_launch: int
    runs: tuple[RunFigures, ...]
    pass_rate: float | None
    """Mean over runs of each run's automated pass rate."""
    interval: Interval | None
    """95% CI of that mean as `RERUN_ESTIMAND` (`stats.repeated_rate_interval`; None with
    fewer than three rated runs: show `rate_range`)."""
    rate_range: Spread
    """The rated runs' pass rates, lowest to highest (the only honest summary of two runs)."""
    tasks: tuple[TaskConsistency, ...]
    latency_p50_ms: Spread
    cost_per_task: Spread
    currency: str
    human_tasks: int
    """Tasks scored by a person, excluded from the pass rate."""
    inconclusive: int
    """(run, task) pairs left out because the scorer could not judge them."""
    confounds: tuple[Confound, ...]
    unrecorded: tuple[tuple[str, tuple[str, ...]], ...]
    tasks_interval: Interval | None = None
    """95% CI of the rate as `TASKS_ESTIMAND` (clustered by task); None below
    `MIN_TASKS_FOR_TASKS_INTERVAL` tasks with a conclusive run."""
    rescored: tuple[str, ...] = ()
    """Ids of the cell's rescored runs: not repeats, in no figure of the arm."""

    @property
    def flaky(self) -> tuple[str, ...]:
        return tuple(t.task_id for t in self.tasks if t.state == FLAKY)


@dataclass(frozen=True, slots=True)
class ExperimentFigures:
    """An experiment as every surface shows it."""

    name: str
    created_at: str
    goldset: dict[str, str]
    settings: dict[str, float | int]
    repeats: int
    arms: tuple[ArmFigures, ...]
    notes: tuple[str, ...]
    sequence: ArmsSequence | None = None
    """With `--stop-when-settled`: each arm's sequential verdict against the reference arm and
    what was not sent, or why the runs cover the full set (`experiment.sequential`)."""

    @property
    def confounds(self) -> tuple[Confound, ...]:
        """Every arm's confounds: the banner every view shows."""
        return tuple(c for arm in self.arms for c in arm.confounds)

    @property
    def complete(self) -> bool:
        """True when every arm holds its N completed runs."""
        return all(arm.observed >= arm.desired for arm in self.arms)

    @property
    def to_launch(self) -> int:
        return sum(arm.to_launch for arm in self.arms)


def spread(values: Sequence[float | None]) -> Spread:
    """The per-run values that exist, with their minimum, median and maximum."""
    present = tuple(float(v) for v in values if v is not None)
    if not present:
        return Spread((), None, None, None)
    return Spread(present, min(present), float(statistics.median(present)), max(present))


def task_consistency(task_ids: Sequence[str], runs: Sequence[RunFigures]) -> tuple[TaskConsistency, ...]:
    """Each (not human) task's tally over the runs that have figures."""
    shown = [r for r in runs if r.refused is None]
    out = []
    for task_id in task_ids:
        # A task a settled run was not sent is in none of its tallies (not sent, never failed).
        verdicts = [r.verdicts.get(task_id, "inconclusive") for r in shown if task_id in r.verdicts or not r.not_sent]
        if not verdicts or "human" in verdicts:
            continue
        passed, conclusive = verdicts.count("pass"), verdicts.count("pass") + verdicts.count("fail")
        if conclusive == 0:
            state = INCONCLUSIVE
        elif passed == conclusive:
            state = CONSISTENT_PASS
        elif passed == 0:
            state = CONSISTENT_FAIL
        else:
            state = FLAKY
        out.append(TaskConsistency(task_id, passed, conclusive, state))
    return tuple(out)


def tasks_interval(tasks: Sequence[TaskConsistency]) -> Interval | None:
    """95% CI of the rate on tasks like these: the bounded mean of each task's pass share over
    the runs (`TASKS_ESTIMAND`); None below `MIN_TASKS_FOR_TASKS_INTERVAL` conclusive tasks."""
    shares = [t.passed / t.conclusive for t in tasks if t.conclusive]
    if len(shares) < MIN_TASKS_FOR_TASKS_INTERVAL:
        return None
    return bounded_mean_interval(shares, (0.0, 1.0))


def arm_figures(inputs: ExperimentInputs, arm_input: ArmInput) -> ArmFigures:
    """The figures of one arm."""
    config, arm, selection = inputs.config, arm_input.arm, arm_input.runs
    task_ids = inputs.task_ids or tuple(sorted({a.task_id for r in arm_input.inputs for a in r.attempts}))
    runs = tuple(run_figures(r, task_ids, inputs.task_kinds) for r in arm_input.inputs)
    rated = [r for r in runs if r.rate is not None]
    check = check_arm(arm.label, selection.held, arm.model, config.arm_settings(arm))
    shown = [r for r in runs if r.refused is None]
    tasks = task_consistency(task_ids, runs)
    return ArmFigures(
        label=arm.label,
        model_name=arm.model_name,
        cell=selection.cell,
        desired=config.repeats,
        observed=len(selection.held),
        in_flight=tuple(r.id for r in selection.in_flight),
        spare=selection.spare,
        to_launch=selection.missing,
        runs=runs,
        pass_rate=statistics.fmean(r.rate for r in rated if r.rate is not None) if rated else None,
        interval=repeated_rate_interval([(r.passed, r.conclusive) for r in rated]),
        rate_range=spread([r.rate for r in rated]),
        tasks=tasks,
        latency_p50_ms=spread([r.latency_p50_ms for r in shown]),
        cost_per_task=spread([r.cost_per_task for r in shown]),
        currency=next((r.currency for r in shown if r.currency), ""),
        human_tasks=max((r.human for r in shown), default=sum(1 for k in inputs.task_kinds.values() if k == "human")),
        inconclusive=sum(r.inconclusive for r in shown),
        confounds=check.confounds,
        unrecorded=check.unrecorded,
        tasks_interval=tasks_interval(tasks),
        rescored=tuple(r.id for r in selection.rescored),
    )


def experiment_figures(inputs: ExperimentInputs) -> ExperimentFigures:
    """Every figure of an experiment, from its inputs. Deterministic; no IO."""
    config = inputs.config
    arms = tuple(arm_figures(inputs, a) for a in inputs.arms)
    goldset = {
        "workload_id": config.goldset.workload_id,
        "name": config.goldset.name,
        "version": config.goldset.version,
        "digest": config.goldset.digest,
        "path": config.goldset.path,
    }
    return ExperimentFigures(
        name=inputs.name,
        created_at=inputs.created_at,
        goldset=goldset,
        settings=dict(config.settings),
        repeats=config.repeats,
        arms=arms,
        notes=inputs.notes + cache_notes(arms),
        sequence=inputs.sequence,
    )


def cache_notes(arms: Sequence[ArmFigures]) -> tuple[str, ...]:
    """A note when the experiment's runs met the prompt cache differently (`report.prompt_cache`):
    their latency and hardware cost are then partly the cache's, within an arm or between arms."""
    conditions = [
        replace(run.cache, label=f"{arm.label} run {run.run_id[:8]}")
        for arm in arms
        for run in arm.runs
        if run.cache is not None
    ]
    return tuple(c.text for c in cache_caveats(conditions) if c.code == "prompt_cache_differs")
