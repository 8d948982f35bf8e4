"""The shortlist of one workload read from a store and a catalogue."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from compare_tui.candidates.measure import GatewayRequest, gateway_spend, measures_of, recent_spend
from compare_tui.candidates.model import Shortlist, build_shortlist
from compare_tui.catalogue import Catalogue, TokenPriceCost
from compare_tui.store import Store
from compare_tui.vocabulary import SpendSource


def load_shortlist(
    store: Store,
    catalogue: Catalogue,
    workload_id: str,
    *,
    digest: str | None = None,
    baseline: str | None = None,
    now: datetime | None = None,
    traffic: Sequence[GatewayRequest] | None = None,
) -> Shortlist:
    """The workload's shortlist against `baseline` (else its promoted baseline, if any); quality
    from runs on `digest` (the set's current version) first; today's spend from the managed
    gateway's traffic log where the workload's alias carries traffic (`traffic`: its requests,
    read once for the whole view by `read_gateway_log`), else from the store's runs."""
    source = "named"
    if baseline is None:
        decision = store.current_baseline(workload_id)
        baseline, source = (decision.model, "promoted") if decision else (None, "promoted")
    names = list(catalogue.names())
    if baseline is not None and baseline not in names:
        names.append(baseline)  # measured even when gone from the catalogue: its mix still counts
    measures = {name: measures_of(store, workload_id, name, digest) for name in names}
    spend, spend_source = None, SpendSource.STORE_RUNS
    if baseline:
        entry = next((e for e in catalogue.models if e.name == baseline), None)
        price = entry.cost if entry is not None and isinstance(entry.cost, TokenPriceCost) else None
        logged = gateway_spend(traffic, workload_id, price, now) if traffic is not None else None
        if logged is not None:
            spend, spend_source = logged, SpendSource.GATEWAY_LOG
        else:
            spend = recent_spend(store, workload_id, baseline, now)
    return build_shortlist(
        workload_id,
        catalogue.models,
        measures,
        baseline=baseline,
        baseline_source=source,
        spend=spend,
        spend_source=spend_source,
    )
