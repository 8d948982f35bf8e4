"""The daily eval budget (docs/catalogue.md, "The daily eval budget"): `[budget] usd_per_day` in
the user's config, and per workload under `[budget.workloads]`; today's spend counted from the
audit ledger; which models of a session would go over it, and which limit other spend about to
be made (a judging: `limit_exceeded`) would go over.

The day is the UTC day: the limit resets at 00:00 UTC. Spend is every request the ledger holds
since then (runs, judges, canary replays): a request of a run at the run's recorded price (its
tokens at the token price; a run on an hourly basis, its wall-clock time today from its first
request to its last answer), a request of no run at the price of the catalogue entry serving
that model id. A session's models are taken in run order, the
baseline first; each whose spend estimate (the `--max-cost` upper bound) would not fit in what is
left is skipped before anything is sent, with the reason recorded on the comparison.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from compare_tui.catalogue import Catalogue
from compare_tui.engine.estimate import SpendEstimate
from compare_tui.errors import CompareTuiError
from compare_tui.store import Store
from compare_tui.vocabulary import money


class BudgetConfigError(CompareTuiError):
    """The `[budget]` table of the user's config is not as documented."""


@dataclass(frozen=True, slots=True)
class DailyBudget:
    """USD a day for all evaluation spend, and per workload (either may be absent)."""

    usd_per_day: float | None = None
    workloads: dict[str, float] = field(default_factory=dict)
    """Workload id → USD a day for that workload's runs alone."""

    def limit_for(self, workload_id: str) -> float | None:
        return self.workloads.get(workload_id)

    @property
    def set(self) -> bool:
        return self.usd_per_day is not None or bool(self.workloads)


def read_budget(path: Path) -> DailyBudget:
    """The `[budget]` table of the TOML file at `path`; no file or no table: no budget."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return DailyBudget()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BudgetConfigError(f"could not read {path} for its [budget] table: {exc}") from None
    table = data.get("budget")
    if table is None:
        return DailyBudget()
    if not isinstance(table, dict):
        raise BudgetConfigError(f"{path}: `budget` must be a table ([budget] usd_per_day = 5.0)")
    unknown = set(table) - {"usd_per_day", "workloads"}
    if unknown:
        raise BudgetConfigError(
            f"{path}: [budget] has unknown key(s) {', '.join(sorted(unknown))}; it takes usd_per_day and [budget.workloads]"
        )
    workloads = table.get("workloads", {})
    if not isinstance(workloads, dict):
        raise BudgetConfigError(f'{path}: [budget.workloads] maps a workload id to USD a day ("ticket-labels" = 1.0)')
    return DailyBudget(
        _usd(path, "[budget] usd_per_day", table.get("usd_per_day")),
        {str(name): _usd(path, f"[budget.workloads] {name}", value) or 0.0 for name, value in workloads.items()},
    )


def _usd(path: Path, where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BudgetConfigError(f"{path}: {where} must be a number of US dollars, 0 or more (got {value!r})")
    return float(value)


def day_start(now: datetime) -> datetime:
    """00:00 UTC of `now`'s day: when today's spend started counting."""
    return datetime.combine(now.astimezone(UTC).date(), time(), UTC)


def reset_sentence(now: datetime) -> str:
    """When the limit resets, in words: `resets at 00:00 UTC, in 8 h 12 min`."""
    left = day_start(now) + timedelta(days=1) - now
    hours, minutes = divmod(int(left.total_seconds()) // 60, 60)
    return f"resets at 00:00 UTC, in {hours} h {minutes:02d} min"


def spent_today(store: Store, catalogue: Catalogue, now: datetime, workload_id: str | None = None) -> float:
    """USD spent since 00:00 UTC by the requests the audit ledger holds (module docstring);
    with `workload_id`, only those of that workload's runs."""
    since = day_start(now).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    by_model: dict[str, dict[str, Any]] = {}
    for entry in catalogue.models:
        if entry.cost is not None:
            by_model.setdefault(entry.model, entry.cost.model_dump())
            by_model[entry.name] = entry.cost.model_dump()
    total = 0.0
    # A run on an hourly basis is charged its wall-clock time today (its first request sent to
    # its last answered), as the report charges a run, not each request's own duration: its
    # requests overlap (concurrency), and summing them would charge the box several times over.
    spans: dict[str, tuple[datetime, datetime, float]] = {}
    for row in store.priced_requests(since, workload_id):
        basis = row.cost_basis or by_model.get(row.model, {})
        if row.run_id is not None and basis.get("basis") == "hardware":
            sent = datetime.fromisoformat(row.at)
            done = sent + timedelta(milliseconds=row.duration_ms or 0)
            first, last, _ = spans.get(row.run_id, (sent, done, 0.0))
            spans[row.run_id] = (min(first, sent), max(last, done), float(basis["usd_per_hour"]))
            continue
        total += request_cost(basis, row.prompt_tokens, row.completion_tokens, row.duration_ms)
    return total + sum(rate * (last - first).total_seconds() / 3600 for first, last, rate in spans.values())


def request_cost(basis: dict[str, Any], prompt: int | None, completion: int | None, duration_ms: float | None) -> float:
    """One request's cost: its tokens at the token price, or (a request of no run, on an hourly
    basis) its own duration at the hourly rate."""
    if basis.get("basis") == "token_price":
        return (
            float(basis["usd_per_mtok_input"]) * (prompt or 0) + float(basis["usd_per_mtok_output"]) * (completion or 0)
        ) / 1e6
    if basis.get("basis") == "hardware" and duration_ms:
        return float(basis["usd_per_hour"]) * duration_ms / 3_600_000
    return 0.0


@dataclass(frozen=True, slots=True)
class BudgetPlan:
    """Which models of a session fit in today's budget."""

    kept: tuple[str, ...]
    skipped: dict[str, str]
    """Model → the reason, as recorded on the comparison."""
    warning: str | None
    """One sentence for the user before anything starts (None: everything fits, or no budget)."""


def plan_within_budget(
    estimates: list[tuple[str, SpendEstimate]],
    *,
    budget: DailyBudget,
    spent: float,
    spent_workload: float,
    workload_id: str,
    now: datetime,
) -> BudgetPlan:
    """Take `estimates` in order (the baseline first); skip each model whose estimate would take
    today's spend past the daily limit or the workload's. A model whose spend cannot be
    estimated is kept (nothing to hold against the limit; the warning says so)."""
    limits = [(limit, spent, "the daily eval budget") for limit in [budget.usd_per_day] if limit is not None] + [
        (limit, spent_workload, f"{workload_id}'s daily eval budget")
        for limit in [budget.limit_for(workload_id)]
        if limit is not None
    ]
    if not limits:
        return BudgetPlan(tuple(name for name, _ in estimates), {}, None)
    used = [0.0 for _ in limits]
    kept: list[str] = []
    skipped: dict[str, str] = {}
    unestimated: list[str] = []
    reset = reset_sentence(now)
    for name, estimate in estimates:
        if estimate.usd is None:
            kept.append(name)
            unestimated.append(name)
            continue
        over = next(
            (
                (limit, already + used[i], label)
                for i, (limit, already, label) in enumerate(limits)
                if already + used[i] + estimate.usd > limit
            ),
            None,
        )
        if over is None:
            kept.append(name)
            used = [u + estimate.usd for u in used]
            continue
        limit, so_far, label = over
        skipped[name] = (
            f"skipped before it started: its estimated spend ≤ {money(estimate.usd)} would exceed "
            f"{_what_is_left(label, limit, so_far, reset)}"
        )
    parts = []
    if skipped:
        parts.append(
            f"{len(skipped)} of {len(estimates)} models would not fit in today's eval budget and will be "
            f"skipped ({', '.join(skipped)})"
        )
    if unestimated:
        parts.append(f"no spend estimate for {', '.join(unestimated)} (no cost basis): not held against the budget")
    return BudgetPlan(tuple(kept), skipped, "; ".join(parts) or None)


def _what_is_left(label: str, limit: float, so_far: float, reset: str) -> str:
    return f"{label} ({money(max(0.0, limit - so_far))} left of {money(limit)} today; {reset})"


def limit_exceeded(
    usd_by_workload: dict[str, float], *, budget: DailyBudget, store: Store, catalogue: Catalogue, now: datetime
) -> str | None:
    """For spend about to be made (USD per workload, e.g. a judging of each workload's runs): the
    first limit it would take today's spend past, in the words of a skipped model's reason (`the
    daily eval budget ($0.15 left of $1.00 today; resets at …)`), else None."""
    checks = []
    if budget.usd_per_day is not None:
        checks.append(
            (
                budget.usd_per_day,
                spent_today(store, catalogue, now),
                sum(usd_by_workload.values()),
                "the daily eval budget",
            )
        )
    for workload, usd in usd_by_workload.items():
        if (limit := budget.limit_for(workload)) is not None:
            spent = spent_today(store, catalogue, now, workload)
            checks.append((limit, spent, usd, f"{workload}'s daily eval budget"))
    reset = reset_sentence(now)
    return next(
        (_what_is_left(label, limit, spent, reset) for limit, spent, usd, label in checks if spent + usd > limit), None
    )
