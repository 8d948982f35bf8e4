"""Launching an experiment's missing runs through the engine, one run per endpoint at a time.

Only what is missing is launched: for each arm, N less the runs its cell holds and has in
flight, read again from the store before every round, so a second `experiment run` of the
same (or an overlapping) experiment in another terminal is counted instead of duplicated.
Arms whose models sit behind different endpoints run at the same time, in one process (a round
holds one run per endpoint); arms sharing an endpoint go one after another, as they would
compete for its server. Each run is prepared just before its round, so an interruption leaves
at most one run per endpoint in flight (finish it with `compare-tui run --resume RUN_ID`). A run in flight that a live process
is executing (it holds the run's lease) is left to it: that cell is skipped, and said so
(`being_executed`).

Before anything is sent, the golden set and every arm's catalogue entry must still be what
the experiment recorded: a changed entry would put the new runs in another cell (or make a
confound), so it is refused with the fields that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from compare_tui.catalogue import Catalogue, CatalogueError, ModelEntry
from compare_tui.engine import PreparedRun, RunOverrides, RunRefusedError, RunSettings, prepare_run, refuse_unreachable
from compare_tui.engine.budget import DailyBudget, plan_within_budget, spent_today
from compare_tui.engine.estimate import estimate_spend
from compare_tui.engine.sequential import sequential_order
from compare_tui.engine.settings import resolve_settings
from compare_tui.errors import CompareTuiError
from compare_tui.experiment.cells import IN_FLIGHT, run_cell_key
from compare_tui.experiment.config import ArmConfig, ExperimentConfig
from compare_tui.experiment.load import arm_selections, candidate_runs
from compare_tui.experiment.sequential import full_set_reason, reference_arm, stops_when_settled
from compare_tui.goldset.models import DecisionSettings, GoldenSet
from compare_tui.store import ComparisonRecord, Store
from compare_tui.store.holders import live_lease
from compare_tui.vocabulary import RunStatus


class LaunchRefused(CompareTuiError):
    """Nothing can be launched for this experiment; the message says why and what to do."""


@dataclass(slots=True)
class LaunchResult:
    """What one `experiment run` did."""

    planned: dict[str, int]
    """Arm label → runs that were missing when it started."""
    launched: list[tuple[str, str, str]] = field(default_factory=list)
    """(arm label, run id, final status) of every run it started, in order."""
    stopped: bool = False
    """True when a run was interrupted and the remaining launches were not made."""
    skipped: list[str] = field(default_factory=list)
    """One sentence per run in flight that another live process is executing (its cell's place
    is left to it, not launched again)."""
    full_set: str | None = None
    """With `--stop-when-settled`: why the runs launched cover the full set (None: they stopped
    once settled, or the experiment does not ask to)."""


def check_goldset(config: ExperimentConfig, goldset: GoldenSet) -> None:
    """Refuse a golden set that is not the one the experiment was made with."""
    if goldset.digest != config.goldset.digest:
        raise LaunchRefused(
            f"the golden set at {goldset.root} changed since the experiment was made (digest "
            f"{goldset.digest[:19]}… ≠ {config.goldset.digest[:19]}…): its runs would not be comparable; "
            "make a new experiment for the changed set"
        )


def _changed_fields(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    return sorted(name for name in set(recorded) | set(current) if recorded.get(name) != current.get(name))


def arm_entries(config: ExperimentConfig, catalogue: Catalogue) -> dict[str, ModelEntry]:
    """Each arm's catalogue entry, refused unless it is exactly what the experiment recorded."""
    entries, problems = {}, []
    for arm in config.arms:
        try:
            entry = catalogue.get(arm.model_name)
        except CatalogueError as exc:
            problems.append(f"arm {arm.label!r}: {exc}")
            continue
        changed = _changed_fields(arm.model, entry.pins())
        if changed:
            problems.append(
                f"arm {arm.label!r}: the catalogue entry {entry.name!r} changed since the experiment was made "
                f"({', '.join(changed)}); runs made now would land in another cell or be confounds"
            )
        entries[arm.label] = entry
    if problems:
        raise LaunchRefused("; ".join(problems) + ". Make a new experiment for the changed configuration.")
    return entries


def _overrides(settings: Mapping[str, Any]) -> RunOverrides:
    return RunSettings.from_dict(settings).overrides()


def _missing(store: Store, config: ExperimentConfig) -> dict[str, int]:
    selections = arm_selections(config, candidate_runs(store, config))
    return {arm.label: sel.missing for arm, sel in zip(config.arms, selections, strict=True)}


def being_executed(store: Store, config: ExperimentConfig) -> list[str]:
    """One sentence per run in flight that a live process holds the lease of: whose cell it is,
    who executes it, and that this launch leaves it alone."""
    said = []
    for arm, selection in zip(config.arms, arm_selections(config, candidate_runs(store, config)), strict=True):
        for run in selection.in_flight:
            lease = live_lease(store, run.id)
            if lease is not None:
                said.append(f"arm {arm.label!r}: skipped {lease.refusal()}")
    return said


def _prepare(
    store: Store,
    config: ExperimentConfig,
    arm: ArmConfig,
    goldset: GoldenSet,
    entry: ModelEntry,
    environ: Mapping[str, str] | None,
    comparison_id: str | None = None,
) -> PreparedRun:
    try:
        prepared = prepare_run(
            store, goldset, entry, _overrides(config.arm_settings(arm)), environ=environ, comparison_id=comparison_id
        )
    except RunRefusedError as exc:
        raise LaunchRefused(f"arm {arm.label!r} refused: {exc}") from None
    if run_cell_key(prepared.run) != config.arm_cell(arm):
        # Defensive: the engine resolved settings differently from the experiment; never
        # leave a run that belongs to no arm.
        store.delete_run(prepared.run.id)
        raise LaunchRefused(
            f"arm {arm.label!r}: the engine would run settings {prepared.run.settings} that do not "
            f"match the experiment's {config.arm_settings(arm)}; nothing was sent"
        )
    return prepared


def _over_budget(
    store: Store,
    config: ExperimentConfig,
    goldset: GoldenSet,
    entries: Mapping[str, ModelEntry],
    arms: list[ArmConfig],
    budget: DailyBudget,
    catalogue: Catalogue | None,
) -> dict[str, str]:
    """Arm label → why its next run would not fit in today's budget (`engine.budget`)."""
    now = datetime.now(UTC)
    workload = goldset.manifest.workload_id
    estimates = [
        (
            arm.label,
            estimate_spend(
                goldset, entries[arm.label].cost, resolve_settings(goldset, _overrides(config.arm_settings(arm)))
            ),
        )
        for arm in arms
    ]
    priced = catalogue or Catalogue()
    plan = plan_within_budget(
        estimates,
        budget=budget,
        spent=spent_today(store, priced, now),
        spent_workload=spent_today(store, priced, now, workload),
        workload_id=workload,
        now=now,
    )
    return plan.skipped


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


def host_of(endpoint: str) -> str:
    """The machine an endpoint's server runs on, as far as its URL tells: every loopback
    address is this machine."""
    host = (urlsplit(endpoint).hostname or endpoint).lower()
    return "this machine" if host in LOOPBACK_HOSTS or host.startswith("127.") else host


def endpoint_lanes(
    config: ExperimentConfig, entries: Mapping[str, ModelEntry], *, same_host_at_once: bool = False
) -> list[list[ArmConfig]]:
    """The arms grouped into lanes, in arm order: runs of one lane go one after another, lanes
    run at the same time. A lane is a host: two servers on one machine share its cores (or
    GPU), so runs beside each other there would each measure the other's load. With
    `same_host_at_once`, a lane is an endpoint (one server never serves two runs at once)."""
    lanes: dict[str, list[ArmConfig]] = {}
    for arm in config.arms:
        endpoint = entries[arm.label].endpoint
        lanes.setdefault(endpoint if same_host_at_once else host_of(endpoint), []).append(arm)
    return list(lanes.values())


def _sequence_round(
    store: Store,
    config: ExperimentConfig,
    goldset: GoldenSet,
    entries: Mapping[str, ModelEntry],
    environ: Mapping[str, str] | None,
    name: str,
) -> list[PreparedRun]:
    """Every arm's run, prepared as one sequential comparison (`experiment.sequential`): the
    reference arm its baseline, the task order drawn and recorded before any request. A refusal
    removes what was written (nothing was sent)."""
    reference = entries[reference_arm(config).label].name
    try:
        order = sequential_order(goldset, [entries[arm.label].name for arm in config.arms], reference)
    except RunRefusedError as exc:
        raise LaunchRefused(f"--stop-when-settled: {exc.reason}") from None
    margin = (goldset.manifest.decision or DecisionSettings()).margin_pp
    comparison = store.create_comparison(
        ComparisonRecord(name=f"experiment {name}", baseline=reference, margin_pp=margin, sequential=order)
    )
    prepared: list[PreparedRun] = []
    try:
        for arm in config.arms:
            prepared.append(_prepare(store, config, arm, goldset, entries[arm.label], environ, comparison.id))
    except LaunchRefused:
        for p in prepared:
            store.delete_run(p.run.id)
        store.delete_comparison(comparison.id)
        raise
    store.set_comparison_runs(comparison.id, [p.run.id for p in prepared])
    return prepared


def unfinished_sequence(store: Store, config: ExperimentConfig) -> str | None:
    """A run of this experiment's arms' sequence that an earlier `experiment run` left unfinished
    (interrupted, or in flight with no live process holding it: killed), or None. Resuming it
    (`run --resume`) resumes the whole sequence, interleaved, with no task sent twice."""
    if not stops_when_settled(config):
        return None
    cells = {config.arm_cell(arm) for arm in config.arms}
    for run in candidate_runs(store, config):
        unfinished = run.status == RunStatus.INTERRUPTED or (
            str(run.status) in IN_FLIGHT and live_lease(store, run.id) is None
        )
        if not unfinished or run.comparison_id is None or run_cell_key(run) not in cells:
            continue
        comparison = store.get_comparison(run.comparison_id)
        members = [store.get_run_exact(run_id) for run_id in comparison.run_ids]
        # The arms' own sequence: one run per arm, the reference arm its baseline.
        if (
            comparison.sequential is not None
            and comparison.baseline == reference_arm(config).model_name
            and sorted(run_cell_key(m) for m in members) == sorted(cells)
        ):
            return run.id
    return None


def launch_missing(
    store: Store,
    config: ExperimentConfig,
    goldset: GoldenSet,
    entries: Mapping[str, ModelEntry],
    execute: Callable[[list[PreparedRun]], list[str]],
    *,
    environ: Mapping[str, str] | None = None,
    same_host_at_once: bool = False,
    budget: DailyBudget | None = None,
    catalogue: Catalogue | None = None,
    name: str = "",
) -> LaunchResult:
    """Launch each arm's missing runs and return what was launched.

    Runs go in rounds: each round takes the next missing run of every lane (`endpoint_lanes`:
    one per host, or per endpoint with `same_host_at_once`; arms in order within a lane) and
    `execute(prepared)` runs them to their ends together, returning their final statuses (the
    CLI passes its own progress display); so cells whose arms are served on different machines
    run at the same time, and one machine never serves two runs at once unless asked. Launching stops after a round where a run was interrupted or
    incomplete (its endpoint failed: such a run holds no place, and the next counted run takes
    it once the endpoint answers again). An endpoint that does not answer before the first
    launch refuses the whole launch. With a daily eval `budget` (and the `catalogue` that prices
    requests of no run), each round first weighs its runs' spend estimates against what is left
    today: an arm whose run would not fit launches no more runs, and `skipped` says why.

    With `config.sequential`, where the question is arm-vs-arm and no arm holds a run yet, the
    one round is every arm at once as a sequential comparison named `experiment NAME`
    (`_sequence_round`): each arm stops once its verdict against the reference arm settles.
    Elsewhere the runs cover the full set and `full_set` says why.
    """
    check_goldset(config, goldset)
    result = LaunchResult(planned=_missing(store, config), skipped=being_executed(store, config))
    wanted = [entries[arm.label] for arm in config.arms if result.planned[arm.label]]
    try:
        refuse_unreachable(wanted)
    except RunRefusedError as exc:
        raise LaunchRefused(f"{exc}") from None
    if config.sequential and any(result.planned.values()):
        result.full_set = full_set_reason(config)
        if result.full_set is None and any(n < config.repeats for n in result.planned.values()):
            held = [label for label, n in result.planned.items() if n < config.repeats]
            result.full_set = (
                f"arm(s) {', '.join(held)} already hold or are running their run, so there is no paired "
                "sequence to start: the missing arms run the full set"
            )
        if result.full_set is None:
            return _launch_sequence(store, config, goldset, entries, execute, result, environ, budget, catalogue, name)
    # At most what was missing at the start: a run that fails does not start another.
    left = dict(result.planned)
    lanes = endpoint_lanes(config, entries, same_host_at_once=same_host_at_once)
    while True:
        missing = _missing(store, config)
        round_arms = []
        for lane in lanes:
            arm = next((a for a in lane if left[a.label] and missing[a.label]), None)
            if arm is not None:
                round_arms.append(arm)
                left[arm.label] -= 1
        if budget is not None and budget.set and round_arms:
            over = _over_budget(store, config, goldset, entries, round_arms, budget, catalogue)
            for arm in round_arms:
                if arm.label in over:
                    left[arm.label] = 0  # its run would not fit today: no half-counted cell
                    result.skipped.append(f"arm {arm.label!r}: {over[arm.label]}")
            round_arms = [arm for arm in round_arms if arm.label not in over]
        if not round_arms:
            return result  # all launched, or another process filled the cells meanwhile
        prepared = [_prepare(store, config, arm, goldset, entries[arm.label], environ) for arm in round_arms]
        statuses = execute(prepared)
        for arm, run, status in zip(round_arms, prepared, statuses, strict=True):
            result.launched.append((arm.label, run.run.id, status))
        if any(status in (RunStatus.INTERRUPTED, RunStatus.INCOMPLETE) for status in statuses):
            result.stopped = True
            return result


def _launch_sequence(
    store: Store,
    config: ExperimentConfig,
    goldset: GoldenSet,
    entries: Mapping[str, ModelEntry],
    execute: Callable[[list[PreparedRun]], list[str]],
    result: LaunchResult,
    environ: Mapping[str, str] | None,
    budget: DailyBudget | None,
    catalogue: Catalogue | None,
    name: str,
) -> LaunchResult:
    """The one round of a sequential experiment: every arm at once, interleaved (they must be
    paired task by task, so arms sharing a machine run beside each other too)."""
    if budget is not None and budget.set:
        over = _over_budget(store, config, goldset, entries, list(config.arms), budget, catalogue)
        if over:
            # Pairs need every arm: a sequence without one of them would judge nothing.
            result.skipped += [f"arm {label!r}: {reason}" for label, reason in over.items()]
            result.skipped.append("--stop-when-settled pairs every arm with the reference arm: nothing was launched")
            return result
    prepared = _sequence_round(store, config, goldset, entries, environ, name)
    statuses = execute(prepared)
    for arm, run, status in zip(config.arms, prepared, statuses, strict=True):
        result.launched.append((arm.label, run.run.id, status))
    result.stopped = any(status in (RunStatus.INTERRUPTED, RunStatus.INCOMPLETE) for status in statuses)
    return result
