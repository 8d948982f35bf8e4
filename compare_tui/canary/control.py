"""Starting a canary and moving its split: every change compare-and-set against the gateway's
config, applied by a restart of the proxy, and recorded with its evidence.

Each change reads the config first: the alias's entries must be exactly what the canary last
wrote (`routes.routes_digest`); anything else is a person's edit, and the change is refused
(recorded as `refused`, naming what the file holds) without writing. A change writes the
config, restarts the proxy (`restart`, injected: `local.gateway.restart` from the CLI), then
commits the canary's new state with the change in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from compare_tui.canary.policy import Assessment, Move, assess
from compare_tui.canary.routes import (
    alias_entries,
    baseline_params,
    canary_entries,
    deployment_params,
    load_config,
    routes_digest,
    split_of,
    with_entries,
    write_config,
)
from compare_tui.catalogue import Catalogue
from compare_tui.errors import CompareTuiError
from compare_tui.store import CanaryChangeRecord, CanaryRecord, DecisionRecord, Store
from compare_tui.vocabulary import CanaryChange, CanaryJudgeRubric, CanaryState

DEFAULT_STEPS = (1.0, 5.0, 25.0, 50.0, 100.0)
Restart = Callable[[], None]


class CanaryError(CompareTuiError):
    """A canary command could not act; the message says why and what to do."""


class HandEditRefused(CanaryError):
    """The gateway's routes were changed by someone else since the canary last wrote them."""


def parse_steps(text: str) -> tuple[float, ...]:
    try:
        steps = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise CanaryError(
            f"--steps takes weights in % separated by commas, e.g. 1,5,25,50,100 (got {text!r})"
        ) from None
    if not steps or any(not 0 < s <= 100 for s in steps) or list(steps) != sorted(set(steps)) or steps[-1] != 100:
        raise CanaryError(f"--steps must rise strictly within (0, 100] and end at 100 (got {text!r})")
    return steps


def start(
    store: Store,
    catalogue: Catalogue,
    *,
    workload_id: str,
    alias: str,
    baseline: str,
    candidate: str,
    set_path: Path,
    steps: Sequence[float],
    shadow: bool,
    margin_pp: float,
    min_pairs: int,
    auto_advance: bool,
    max_usd_per_day: float | None,
    config_path: Path,
    traffic_log: str,
    restart: Restart,
    decided_by: str,
    judge: str | None = None,
    judge_structured: bool = False,
    judge_rubric: CanaryJudgeRubric = CanaryJudgeRubric.PAIRWISE,
) -> CanaryRecord:
    """Route the alias to A and B (B at the first step, or as a shadow) and record the canary.
    `judge` (a catalogue model) grades the pairs no golden-set check grades."""
    if baseline == candidate:
        raise CanaryError(f"--model {candidate} is already the baseline of {workload_id}")
    base_entry, cand_entry = catalogue.get(baseline), catalogue.get(candidate)
    if judge is not None:
        catalogue.get(judge)  # an unknown judge is refused before anything is written
    active = store.latest_canary(workload_id)
    if active is not None and active.active:
        raise CanaryError(
            f"workload {workload_id} already has an active canary ({active.candidate} at {active.weight:g}%): "
            f"see `compare-tui canary status {workload_id}`, or end it with `compare-tui canary stop {workload_id}`"
        )
    document = load_config(config_path)
    before = alias_entries(document, alias)
    split = split_of(before, alias)
    if split.shadow or len(split.weights) > 1:
        raise CanaryError(
            f"the gateway's alias {alias!r} is not routed to one deployment ({split.describe()}, in {config_path}): "
            f"route it to {baseline} alone first, or end the other canary"
        )
    # The alias keeps A's deployment exactly as it was routed; a new alias reaches A's endpoint.
    base_params = baseline_params(before, alias, baseline) or deployment_params(base_entry, document)
    weight = 0.0 if shadow else float(steps[0])
    entries = canary_entries(
        alias, base_params, baseline, deployment_params(cand_entry, document), candidate, weight, shadow=shadow
    )
    canary = CanaryRecord(
        workload_id=workload_id,
        alias=alias,
        baseline=baseline,
        candidate=candidate,
        set_path=str(set_path),
        steps=tuple(float(s) for s in steps),
        step=-1 if shadow else 0,
        weight=weight,
        routes_digest=routes_digest(entries),
        state=CanaryState.SHADOW if shadow else CanaryState.STEPPING,
        margin_pp=margin_pp,
        min_pairs=min_pairs,
        auto_advance=auto_advance,
        max_usd_per_day=max_usd_per_day,
        gateway_config=str(config_path),
        traffic_log=traffic_log,
        log_offset=_log_size(traffic_log),
        judge=judge,
        judge_structured=judge_structured,
        judge_rubric=judge_rubric,
    )
    change = CanaryChangeRecord(
        canary_id=canary.id,
        workload_id=workload_id,
        change=CanaryChange.STARTED,
        from_weight=0.0,
        to_weight=weight,
        evidence={"routes_before": before, "shadow": shadow, "steps": list(canary.steps)},
        decided_by=decided_by,
        reason="shadow: B gets mirrored copies" if shadow else f"B enters at {weight:g}%",
    )
    write_config(config_path, with_entries(document, alias, entries))
    restart()
    return store.start_canary(canary, change)


def _log_size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def check_routes(canary: CanaryRecord) -> str | None:
    """None when the alias's routes are what the canary last wrote; else what the file holds."""
    document = load_config(Path(canary.gateway_config))
    entries = alias_entries(document, canary.alias)
    if routes_digest(entries) == canary.routes_digest:
        return None
    found = split_of(entries, canary.alias)
    return (
        f"the gateway's routes for {canary.alias!r} were changed by hand: {canary.gateway_config} now routes "
        f"{found.describe()}, the canary last wrote {canary.candidate} {canary.weight:g}%"
    )


def _refuse(store: Store, canary: CanaryRecord, what: str, assessment: Assessment, by: str) -> HandEditRefused:
    store.update_canary(
        canary,
        CanaryChangeRecord(
            canary_id=canary.id,
            workload_id=canary.workload_id,
            change=CanaryChange.REFUSED,
            from_weight=canary.weight,
            to_weight=canary.weight,
            verdict=assessment.look.verdict.value,
            evidence=assessment.evidence(),
            decided_by=by,
            reason=what,
        ),
    )
    return _refusal(canary, what)


def _refusal(canary: CanaryRecord, what: str) -> HandEditRefused:
    return HandEditRefused(
        f"refused: {what}. Nothing was changed. Put the routes back (or stop the canary with "
        f"`compare-tui canary stop {canary.workload_id}`) — a person's edit is never overwritten"
    )


def _apply(
    store: Store,
    catalogue: Catalogue,
    canary: CanaryRecord,
    *,
    weight: float,
    shadow: bool,
    entries_override: list[dict[str, object]] | None,
    restart: Restart,
    assessment: Assessment,
    change: CanaryChange,
    by: str,
    reason: str,
    **updates: object,
) -> CanaryRecord:
    refuse_hand_edit(store, canary, by)
    config_path = Path(canary.gateway_config)
    document = load_config(config_path)
    entries: Sequence[Mapping[str, object]]
    if entries_override is not None:
        entries = entries_override
    else:
        current = alias_entries(document, canary.alias)
        base_params = baseline_params(current, canary.alias, canary.baseline)
        if base_params is None:
            raise CanaryError(f"{config_path} has no deployment of {canary.baseline} under {canary.alias!r}")
        cand_params = _candidate_params(current, canary) or deployment_params(catalogue.get(canary.candidate), document)
        entries = canary_entries(
            canary.alias, base_params, canary.baseline, cand_params, canary.candidate, weight, shadow=shadow
        )
    write_config(config_path, with_entries(document, canary.alias, entries))
    restart()
    moved = canary.model_copy(update={"weight": weight, "routes_digest": routes_digest(entries), **updates})
    return store.update_canary(
        moved,
        CanaryChangeRecord(
            canary_id=canary.id,
            workload_id=canary.workload_id,
            change=change,
            from_weight=canary.weight,
            to_weight=weight,
            verdict=assessment.look.verdict.value,
            evidence=assessment.evidence(),
            decided_by=by,
            reason=reason,
        ),
    )


def _candidate_params(entries: Sequence[Mapping[str, object]], canary: CanaryRecord) -> dict[str, object] | None:
    for entry in entries:
        info = entry.get("model_info")
        if isinstance(info, dict) and info.get("id") == canary.candidate:
            raw = entry.get("litellm_params")
            params: dict[str, object] = dict(raw) if isinstance(raw, dict) else {}
            params.pop("weight", None)
            return params
    return None


def roll_back(
    store: Store, catalogue: Catalogue, canary: CanaryRecord, assessment: Assessment, *, restart: Restart, by: str
) -> CanaryRecord:
    """B's weight to 0 and the alias's routes as they were before the canary, at once."""
    return _end(
        store,
        catalogue,
        canary,
        assessment,
        restart,
        by,
        CanaryState.ROLLED_BACK,
        CanaryChange.ROLLED_BACK,
        assessment.reason,
    )


def stop(
    store: Store, catalogue: Catalogue, canary: CanaryRecord, *, restart: Restart, by: str, reason: str
) -> CanaryRecord:
    assessment = assess(canary, store.canary_pairs(canary.id))
    return _end(
        store,
        catalogue,
        canary,
        assessment,
        restart,
        by,
        CanaryState.STOPPED,
        CanaryChange.STOPPED,
        reason or "stopped by a person",
    )


def _end(
    store: Store,
    catalogue: Catalogue,
    canary: CanaryRecord,
    assessment: Assessment,
    restart: Restart,
    by: str,
    state: CanaryState,
    change: CanaryChange,
    reason: str,
) -> CanaryRecord:
    if not canary.active:
        raise CanaryError(f"the canary of {canary.workload_id} has already ended ({canary.state.value})")
    # The alias as it was before the canary; one the canary made routes the baseline alone.
    before = _routes_before(store, canary) or _baseline_alone(canary)
    return _apply(
        store, catalogue, canary, weight=0.0, shadow=False, entries_override=before, restart=restart,
        assessment=assessment, change=change, by=by, reason=reason, state=state,
    )  # fmt: skip


def _baseline_alone(canary: CanaryRecord) -> list[dict[str, object]]:
    entries = alias_entries(load_config(Path(canary.gateway_config)), canary.alias)
    params = baseline_params(entries, canary.alias, canary.baseline)
    if params is None:
        raise CanaryError(f"{canary.gateway_config} has no deployment of {canary.baseline} under {canary.alias!r}")
    return [{"model_name": canary.alias, "litellm_params": params, "model_info": {"id": canary.baseline}}]


def refuse_hand_edit(store: Store, canary: CanaryRecord, by: str) -> None:
    """Raise `HandEditRefused` (recording the refusal once per edit) when the alias's routes are
    not what the canary last wrote."""
    what = check_routes(canary)
    if what is None:
        return
    assessment = assess(canary, store.canary_pairs(canary.id))
    latest = [c for c in store.canary_changes(canary.workload_id) if c.canary_id == canary.id][:1]
    if latest and latest[0].change is CanaryChange.REFUSED and latest[0].reason == what:
        raise _refusal(canary, what)
    raise _refuse(store, canary, what, assessment, by)


def _routes_before(store: Store, canary: CanaryRecord) -> list[dict[str, object]] | None:
    started = [
        c
        for c in store.canary_changes(canary.workload_id)
        if c.canary_id == canary.id and c.change is CanaryChange.STARTED
    ]
    before = started[-1].evidence.get("routes_before") if started else None
    return list(before) if isinstance(before, list) and before else None


def advance(
    store: Store,
    catalogue: Catalogue,
    canary: CanaryRecord,
    *,
    restart: Restart,
    by: str,
    automatic: bool = False,
) -> CanaryRecord:
    """The next step (100 %: the promotion), only when the assessment is `ready`; a hand edit
    of the routes is named first, whatever the evidence."""
    refuse_hand_edit(store, canary, by)
    assessment = assess(canary, store.canary_pairs(canary.id))
    if assessment.move is Move.ROLL_BACK:
        raise CanaryError(f"not advancing: {assessment.reason}; `compare-tui canary watch` rolls it back")
    if assessment.move is not Move.READY:
        raise CanaryError(f"not advancing: {assessment.reason}")
    step = canary.step + 1
    weight = canary.steps[step]
    how = "automatically (--auto-advance)" if automatic else f"by {by or 'a person'}"
    if weight < 100:
        return _apply(
            store, catalogue, canary, weight=weight, shadow=False, entries_override=None, restart=restart,
            assessment=assessment, change=CanaryChange.ADVANCED, by=by,
            reason=f"{assessment.reason}; advanced {how}", step=step, state=CanaryState.STEPPING,
            pairs_at_step=assessment.pairs,
        )  # fmt: skip
    promoted = _apply(
        store, catalogue, canary, weight=100.0, shadow=False, entries_override=None, restart=restart,
        assessment=assessment, change=CanaryChange.PROMOTED, by=by,
        reason=f"{assessment.reason}; promoted {how}", step=step, state=CanaryState.PROMOTED,
        pairs_at_step=assessment.pairs,
    )  # fmt: skip
    store.record_decision(
        DecisionRecord(
            workload_id=canary.workload_id,
            model=canary.candidate,
            previous_model=canary.baseline,
            kind="promoted",
            reason=f"canary {canary.id}: {assessment.reason}",
            decided_by=by,
            pins={name: catalogue.get(name).pins() for name in (canary.candidate, canary.baseline)},
            figures={"canary": {"id": canary.id, **assessment.evidence()}},
        )
    )
    return promoted
