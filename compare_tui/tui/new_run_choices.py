"""What the New run screen reads before it shows anything (blocking IO: call it from a worker):
the golden sets, the catalogue, each workload's promoted baseline, its `Shortlist` and saved
selection, and today's eval budget with what was spent against it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from compare_tui.candidates import Shortlist, load_shortlist, read_gateway_log
from compare_tui.catalogue import Catalogue
from compare_tui.engine.budget import BudgetConfigError, DailyBudget, read_budget, spent_today
from compare_tui.goldset import GoldenSet, GoldenSetError, discover_golden_sets
from compare_tui.local.gateway import gateway_traffic_log
from compare_tui.tui.workspace import Workspace


@dataclass(frozen=True, slots=True)
class NewRunChoices:
    """What the New run screen offers, read once in a worker."""

    sets: tuple[GoldenSet, ...]
    catalogue: Catalogue | None
    problem: str | None
    promoted: dict[str, str] = field(default_factory=dict)
    """Workload id → its promoted baseline (`compare-tui promote`), for the sets listed."""
    shortlists: dict[str, Shortlist] = field(default_factory=dict)
    """Workload id → its candidates priced and measured (`candidates.load_shortlist`)."""
    saved: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Workload id → the models chosen for it last time."""
    budget: DailyBudget = field(default_factory=DailyBudget)
    spent: float = 0.0
    """Spent today by every request in the audit ledger (USD)."""
    spent_by_workload: dict[str, float] = field(default_factory=dict)


def read_choices(workspace: Workspace, set_path: str | None) -> NewRunChoices:
    """Everything the screen offers; `set_path` is read too when it is not under the sets folder."""
    sets = []
    for path in discover_golden_sets(workspace.sets_dir):
        try:
            sets.append(workspace.golden_set(path))
        except (GoldenSetError, OSError):
            continue  # invalid sets are listed, with their problems, on Home
    if set_path and all(not same_path(s.root, set_path) for s in sets):
        try:
            sets.insert(0, workspace.golden_set(set_path))
        except (GoldenSetError, OSError):
            pass
    read = workspace.read_catalogue()
    store = workspace.store
    now = datetime.now(UTC)
    # Today's spend from the managed gateway, where it carries a workload: the log read once for
    # every workload listed (it grows with every request the gateway answers).
    traffic = read_gateway_log(gateway_traffic_log(), {s.manifest.workload_id for s in sets})
    promoted: dict[str, str] = {}
    shortlists: dict[str, Shortlist] = {}
    saved: dict[str, tuple[str, ...]] = {}
    for goldset in sets:
        workload = goldset.manifest.workload_id
        current = store.current_baseline(workload)
        if current is not None:
            promoted[workload] = current.model
        if read.catalogue is not None and workload not in shortlists:
            shortlists[workload] = load_shortlist(
                store, read.catalogue, workload, digest=goldset.digest, now=now, traffic=traffic
            )
        selection = store.saved_selection(workload)
        if selection is not None:
            saved[workload] = selection
    problems = [read.problem] if read.problem else []
    budget = DailyBudget()
    if workspace.config_path is not None:
        try:
            budget = read_budget(workspace.config_path)
        except BudgetConfigError as exc:
            problems.append(str(exc))
    spent, by_workload = 0.0, {}
    if budget.set and read.catalogue is not None:
        spent = spent_today(store, read.catalogue, now)
        by_workload = {w: spent_today(store, read.catalogue, now, w) for w in budget.workloads}
    return NewRunChoices(
        tuple(sets),
        read.catalogue,
        "; ".join(problems) or None,
        promoted,
        shortlists,
        saved,
        budget,
        spent,
        by_workload,
    )


def same_path(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one folder."""
    return Path(a).resolve() == Path(b).resolve()
