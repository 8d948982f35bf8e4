"""The experiment's one reader: a saved configuration + the store's runs → `ExperimentInputs`.

Everything else in `compare_tui.experiment` is pure. Nothing is cached: figures are computed
from the runs each time an experiment is read, so every surface shows the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from compare_tui.errors import CompareTuiError
from compare_tui.experiment.config import ArmConfig, ExperimentConfig
from compare_tui.experiment.selection import ArmRuns, select_arm_runs
from compare_tui.experiment.sequential import (
    NOT_ONE_SEQUENCE,
    ArmsSequence,
    full_set_reason,
    reference_arm,
    stops_when_settled,
)
from compare_tui.report.inputs import RunInput
from compare_tui.report.load import attempt_facts, load_report_inputs
from compare_tui.report.model import build_report
from compare_tui.store import ExperimentRecord, Store
from compare_tui.store.records import RunRecord


class ExperimentConfigError(CompareTuiError, ValueError):
    """A saved experiment whose configuration this version cannot read (the message says why)."""


@dataclass(frozen=True, slots=True)
class ArmInput:
    """One arm: its configuration, its cell's selection, and the held runs' report inputs."""

    arm: ArmConfig
    runs: ArmRuns
    inputs: tuple[RunInput, ...]
    """One per held run, in the same order as `runs.held`."""


@dataclass(frozen=True, slots=True)
class ExperimentInputs:
    """Everything an experiment's figures are computed from."""

    name: str
    created_at: str
    config: ExperimentConfig
    arms: tuple[ArmInput, ...]
    task_kinds: dict[str, str]
    """task id → scorer kind from the golden set; empty when it could not be read."""
    task_ids: tuple[str, ...]
    notes: tuple[str, ...] = ()
    """What the reader could not establish, in words."""
    sequence: ArmsSequence | None = None
    """With `--stop-when-settled`: the arms' sequence, or why the runs cover the full set."""


def parse_config(record: ExperimentRecord) -> ExperimentConfig:
    """The validated configuration of a saved experiment."""
    try:
        return ExperimentConfig.model_validate(record.config)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "config"
        raise ExperimentConfigError(
            f"experiment {record.name!r} has a configuration this version cannot read ({where}: "
            f"{first.get('msg')}); delete it and create it again"
        ) from None


def arm_selections(config: ExperimentConfig, runs: list[RunRecord]) -> list[ArmRuns]:
    """Each arm's selection among `runs` (a store's runs of the experiment's golden set)."""
    settled = stops_when_settled(config)
    return [select_arm_runs(runs, config.arm_cell(arm), config.repeats, settled=settled) for arm in config.arms]


def candidate_runs(store: Store, config: ExperimentConfig) -> list[RunRecord]:
    """The runs that could belong to the experiment: those of its golden set (id) in the store."""
    return store.list_runs(goldset_id=config.goldset.workload_id)


def load_experiment(store: Store, name: str) -> ExperimentInputs:
    """Read an experiment and its runs. Raises `ExperimentNotFoundError` / `ExperimentConfigError`."""
    record = store.get_experiment(name)
    config = parse_config(record)
    selections = arm_selections(config, candidate_runs(store, config))
    arms = []
    for arm, selection in zip(config.arms, selections, strict=True):
        inputs = tuple(_run_input(store, run) for run in selection.held)
        arms.append(ArmInput(arm, selection, inputs))
    kinds, task_ids, notes = _task_kinds(config)
    sequence = _sequence(store, config, selections)
    return ExperimentInputs(record.name, record.created_at, config, tuple(arms), kinds, task_ids, notes, sequence)


def _sequence(store: Store, config: ExperimentConfig, selections: list[ArmRuns]) -> ArmsSequence | None:
    """The arms' sequence (`experiment.sequential`): the sequential comparison that holds every
    arm's run, read through its own report, its candidates labelled by arm."""
    if not config.sequential:
        return None
    reference = reference_arm(config).label
    reason = full_set_reason(config)
    if reason is not None:
        return ArmsSequence(reference, reason)
    held = [run for selection in selections for run in selection.held]
    if not held:
        return ArmsSequence(reference, None)  # not run yet
    comparison = store.get_comparison(held[0].comparison_id) if held[0].comparison_id else None
    run = None
    if (
        comparison is not None
        and comparison.sequential is not None
        and len(held) == len(config.arms)
        and {r.id for r in held} <= set(comparison.run_ids)
    ):
        run = build_report(load_report_inputs(store, comparison.id)).sequential
    if comparison is None or run is None:
        return ArmsSequence(reference, NOT_ONE_SEQUENCE)
    label = {arm.model_name: arm.label for arm in config.arms}
    run = replace(
        run,
        candidates=tuple(replace(c, candidate=label.get(c.candidate, c.candidate)) for c in run.candidates),
        not_sent=tuple((label.get(name, name), n) for name, n in run.not_sent),
    )
    return ArmsSequence(reference, None, comparison.id, run)


def _run_input(store: Store, run: RunRecord) -> RunInput:
    verdicts = {task: review.verdict for task, review in store.reviews_for_run(run.id).items()}
    return RunInput(run=run, attempts=attempt_facts(store, run.id), verdicts=verdicts)


def _task_kinds(config: ExperimentConfig) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    from compare_tui.goldset import GoldenSetError, load_golden_set

    path = config.goldset.path
    try:
        goldset = load_golden_set(Path(path))
    except (GoldenSetError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            {},
            (),
            (
                f"The golden set at {path} could not be read ({first}): tasks scored by a person "
                "are recognised from their attempts only.",
            ),
        )
    notes: tuple[str, ...] = ()
    if goldset.digest != config.goldset.digest:
        notes = (
            f"The golden set at {path} has changed since the experiment was made (its digest differs): "
            "its runs are still those of the original set, but scorer kinds shown are the current ones.",
        )
    kinds = {task.id: goldset.scorer_for(task).kind for task in goldset.tasks}
    return kinds, tuple(task.id for task in goldset.tasks), notes
