"""Everything that happens before the first request: refusals, the key policy, weights
verification, the server's account of what it loaded and how it is configured (`serving`), the
spend estimate, and the run record. A refused model sends nothing."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from compare_tui.catalogue import (
    ModelEntry,
    ModelRefused,
    check_key,
    refuse_if_needed,
    resolve_key,
    verify_weights,
)
from compare_tui.catalogue.provenance import VERIFIED, ProvenanceLabel
from compare_tui.endpoint import key_headers
from compare_tui.engine.environment import ServerIdentity
from compare_tui.engine.estimate import SpendEstimate, check_spend, estimate_spend
from compare_tui.engine.serving import ServingReader, check_serving, loaded_label, read_server
from compare_tui.engine.settings import RunOverrides, RunSettings, resolve_settings
from compare_tui.errors import CompareTuiError
from compare_tui.goldset.digest import input_digest
from compare_tui.goldset.models import GoldenSet
from compare_tui.store import RunRecord, RunStatus, Store


class RunRefusedError(CompareTuiError):
    """The engine will not run this model on this set; `reason` says why and what to do."""

    def __init__(self, model_name: str, reason: str) -> None:
        super().__init__(f"{model_name}: {reason}")
        self.model_name = model_name
        self.reason = reason


@dataclass(slots=True)
class PreparedRun:
    run: RunRecord
    goldset: GoldenSet
    entry: ModelEntry
    settings: RunSettings
    estimate: SpendEstimate
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    """Request headers, holding the virtual key when there is one. Never stored or logged."""
    key_check: str | None = None
    """How the endpoint confirmed the key before the first task (`catalogue.gateway`), or None
    without a key. Recorded in the run's environment; never the key itself."""
    server_identity: ServerIdentity | None = None
    """The run environment's server identity, made from the answers the serving reading got
    (`serving.ServingRead`); None when the runner must ask the server itself."""


Progress = Callable[[str, int, int], None]


def check_model(
    entry: ModelEntry, *, environ: Mapping[str, str] | None = None, progress: Progress | None = None
) -> tuple[ProvenanceLabel, dict[str, str]]:
    """`checked_model` without how the key was confirmed."""
    label, headers, _ = checked_model(entry, environ=environ, progress=progress)
    return label, headers


def checked_model(
    entry: ModelEntry, *, environ: Mapping[str, str] | None = None, progress: Progress | None = None
) -> tuple[ProvenanceLabel, dict[str, str], str | None]:
    """Refusals, key policy, the endpoint's acceptance of the key (`check_key`: a gateway
    confirms an `sk-` virtual key; a key the endpoint rejects refuses the run) and weights
    verification: return (provenance label, headers, how the key was confirmed). Nothing but
    that key check is sent."""
    try:
        refuse_if_needed(entry)
        key = resolve_key(entry, os.environ if environ is None else environ)
        key_check = check_key(entry, key)
        verification = verify_weights(entry, progress=progress)
    except ModelRefused as exc:
        # RunRefusedError names the model; the refusal's detail leaves it out, not to say it twice.
        raise RunRefusedError(entry.name, exc.detail) from None
    headers = key_headers(key)
    return verification.label, headers, key_check


def prepare_run(
    store: Store,
    goldset: GoldenSet,
    entry: ModelEntry,
    overrides: RunOverrides,
    *,
    max_cost: float | None = None,
    comparison_id: str | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    strict_serving: bool = False,
    serving_reader: ServingReader = read_server,
) -> PreparedRun:
    """Check the model, estimate the spend and write a `pending` run. Raises `RunRefusedError`.

    `strict_serving` (or the manifest's `[run] strict_serving`) refuses a server whose settings
    differ from the catalogue's `[model.serving]`; a server that loaded other weights than the
    pins is refused always."""
    try:
        settings = resolve_settings(goldset, overrides)
    except ValueError as exc:
        raise RunRefusedError(entry.name, str(exc)) from None
    estimate = estimate_spend(goldset, entry.cost, settings)
    refusal = check_spend(estimate, max_cost)
    if refusal:
        raise RunRefusedError(entry.name, refusal)
    provenance, headers, key_check = checked_model(entry, environ=environ, progress=progress)
    strict = strict_serving or goldset.manifest.run.strict_serving
    read = serving_reader(entry, headers)
    refusal, reading = check_serving(entry, read.reading | {"when": "start"}, strict=strict)
    if refusal:
        raise RunRefusedError(entry.name, refusal)
    provenance = loaded_label(provenance, reading)
    run = RunRecord(
        status=RunStatus.PENDING,
        goldset_id=goldset.manifest.workload_id,
        goldset_name=goldset.manifest.name,
        goldset_version=goldset.manifest.version,
        goldset_digest=goldset.digest,
        goldset_path=str(goldset.root),
        model_name=entry.name,
        model_entry=entry.pins(),
        provenance=provenance,
        cost_basis=entry.cost.model_dump(mode="json") if entry.cost is not None else None,
        settings=settings.as_dict() | {"estimate_usd": estimate.usd, "estimate": estimate.explanation},
        environment={},
        task_count=len(goldset.tasks),
        comparison_id=comparison_id,
        task_inputs={task.id: input_digest(task) for task in goldset.tasks},
        serving=[dict(reading)],  # the record validates a copy either way
    )
    store.create_run(run)
    return PreparedRun(run, goldset, entry, settings, estimate, headers, key_check, read.identity)


def prepare_resume(
    store: Store,
    run_id: str,
    goldset: GoldenSet,
    entry: ModelEntry,
    *,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    strict_serving: bool = False,
    serving_reader: ServingReader = read_server,
) -> PreparedRun:
    """Re-check the model, the set and the server of an unfinished run so it can continue where
    it stopped; the server's reading is added to the run's (a restart shows as a change)."""
    run = store.get_run(run_id)
    if run.status == RunStatus.COMPLETED:
        raise RunRefusedError(run.model_name, f"run {run.id} is already completed; nothing to resume")
    if goldset.digest != run.goldset_digest:
        raise RunRefusedError(
            run.model_name,
            f"the golden set at {goldset.root} changed since run {run.id} started "
            f"(digest {goldset.digest[:19]}… ≠ {run.goldset_digest[:19]}…); start a new run instead",
        )
    if entry.pins() != run.model_entry:
        raise RunRefusedError(
            run.model_name,
            f"the catalogue entry for {entry.name} changed since run {run.id} started; start a new run instead",
        )
    provenance, headers, key_check = checked_model(entry, environ=environ, progress=progress)
    strict = strict_serving or goldset.manifest.run.strict_serving
    read = serving_reader(entry, headers)
    refusal, reading = check_serving(entry, read.reading | {"when": "resume"}, strict=strict)
    if refusal:
        raise RunRefusedError(run.model_name, refusal)
    provenance = loaded_label(provenance, reading)
    # A resume whose server could not be checked leaves the run no longer verified.
    label = run.provenance if provenance == run.provenance or provenance == VERIFIED else provenance
    run = store.update_run(run.id, serving=[*run.serving, reading], provenance=label)
    s = run.settings
    settings = RunSettings.from_dict(s)
    estimate = SpendEstimate(s.get("estimate_usd"), "recorded", s.get("estimate", ""))
    return PreparedRun(run, goldset, entry, settings, estimate, headers, key_check, read.identity)
