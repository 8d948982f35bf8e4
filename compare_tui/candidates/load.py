"""The shortlist of one workload read from a store and a catalogue."""

from __future__ import annotations

from datetime import datetime

from compare_tui.candidates.measure import measures_of, recent_spend
from compare_tui.candidates.model import Shortlist, build_shortlist
from compare_tui.catalogue import Catalogue
from compare_tui.store import Store


def load_shortlist(
    store: Store,
    catalogue: Catalogue,
    workload_id: str,
    *,
    digest: str | None = None,
    baseline: str | None = None,
    now: datetime | None = None,
) -> Shortlist:
    """The workload's shortlist against `baseline` (else its promoted baseline, if any); quality
    from runs on `digest` (the set's current version) first."""
    source = "named"
    if baseline is None:
        decision = store.current_baseline(workload_id)
        baseline, source = (decision.model, "promoted") if decision else (None, "promoted")
    names = list(catalogue.names())
    if baseline is not None and baseline not in names:
        names.append(baseline)  # measured even when gone from the catalogue: its mix still counts
    measures = {name: measures_of(store, workload_id, name, digest) for name in names}
    spend = recent_spend(store, workload_id, baseline, now) if baseline else None
    return build_shortlist(
        workload_id, catalogue.models, measures, baseline=baseline, baseline_source=source, spend=spend
    )
