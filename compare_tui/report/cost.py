"""Cost per completed task, on the run's own cost basis (docs/measurement.md §5). Every attempt
is charged: failed attempts, errors and retries cost money too.

- `hardware`: the run's wall-clock duration at the hourly rate, divided by completed tasks,
  plus the utilisation view cost/task(U) = H / (3600 · X · U), X = completed tasks per second.
- `token_price`: Σ per-attempt (input·prompt + output·completion) / 1e6 ÷ completed tasks,
  with the price's capture date and source (prices change).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from compare_tui.report.inputs import AttemptFacts

UTILISATION_LEVELS = (0.10, 0.25, 0.50, 0.75, 1.00)
BASES = ("hardware", "token_price")


@dataclass(frozen=True, slots=True)
class UtilisationPoint:
    """Cost per completed task if the hardware were busy this share of the time."""

    utilisation: float
    per_task: float


@dataclass(frozen=True, slots=True)
class Cost:
    """One run's cost figure. `per_task` is None when no task was completed or the run's
    duration / token usage is unknown (`note` then says which)."""

    basis: str
    """`hardware` or `token_price`."""
    currency: str
    total: float | None
    """What the whole run cost (every attempt)."""
    per_task: float | None
    """`total` ÷ completed tasks."""
    note: str | None = None
    # hardware basis
    usd_per_hour: float | None = None
    """The hourly rate charged: the entry's usd_per_hour, the cost of the whole machine."""
    gpu_count: int | None = None
    duration_s: float | None = None
    utilisation: tuple[UtilisationPoint, ...] = ()
    # token_price basis
    price_input: float | None = None
    """Per million prompt tokens."""
    price_output: float | None = None
    price_cached: float | None = None
    captured: str | None = None
    """The date the price was read, YYYY-MM-DD."""
    source: str | None = None


def refusal_reason(cost_basis: Mapping[str, Any] | None) -> str | None:
    """Why a row with this cost basis cannot be shown, or None when it can."""
    if not cost_basis:
        return (
            "no cost basis: add a [model.cost] table (hardware or token_price) to the "
            "model's catalogue entry and run it again"
        )
    if cost_basis.get("basis") not in BASES:
        return f"unknown cost basis {cost_basis.get('basis')!r}: expected hardware or token_price"
    return None


def run_duration_s(started_at: str | None, finished_at: str | None) -> float | None:
    """Seconds between the run's start and finish, or None when either is unknown."""
    if not started_at or not finished_at:
        return None
    seconds = (datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)).total_seconds()
    return seconds if seconds > 0 else None


def cost_figure(
    cost_basis: Mapping[str, Any], attempts: Sequence[AttemptFacts], completed: int, duration_s: float | None
) -> Cost:
    """The cost figure of one run. `cost_basis` must have passed `refusal_reason`."""
    if cost_basis["basis"] == "hardware":
        return _hardware(cost_basis, completed, duration_s)
    return _token_price(cost_basis, attempts, completed)


def _hardware(basis: Mapping[str, Any], completed: int, duration_s: float | None) -> Cost:
    given = basis.get("gpu_count")
    gpu_count = None if given is None else int(given)  # 0: a CPU box; None: not stated
    # The hourly rate is per GPU, times the GPUs serving the model, as in the engine's spend
    # estimate (engine/estimate.py): the estimate and the report must charge the same rate.
    rate = float(basis["usd_per_hour"])  # the whole box; gpu_count is recorded, not multiplied
    currency = str(basis.get("currency") or "USD")
    if duration_s is None:
        return Cost(
            "hardware",
            currency,
            None,
            None,
            "the run has no start or finish time, so its duration (what hardware cost charges) is unknown",
            usd_per_hour=rate,
            gpu_count=gpu_count,
        )
    total = rate * duration_s / 3600
    if completed == 0:
        return Cost(
            "hardware",
            currency,
            total,
            None,
            "no task was completed",
            usd_per_hour=rate,
            gpu_count=gpu_count,
            duration_s=duration_s,
        )
    throughput = completed / duration_s  # X: completed tasks per second at the tested load
    curve = tuple(UtilisationPoint(u, rate / (3600 * throughput * u)) for u in UTILISATION_LEVELS)
    return Cost(
        "hardware",
        currency,
        total,
        total / completed,
        usd_per_hour=rate,
        gpu_count=gpu_count,
        duration_s=duration_s,
        utilisation=curve,
    )


def _token_price(basis: Mapping[str, Any], attempts: Sequence[AttemptFacts], completed: int) -> Cost:
    price_in = float(basis["usd_per_mtok_input"])
    price_out = float(basis["usd_per_mtok_output"])
    cached = basis.get("usd_per_mtok_cached")
    total, charged = 0.0, 0
    unreported = sum(1 for attempt in attempts if attempt.usage_unreported)  # a refusal generated nothing
    for attempt in attempts:
        if attempt.prompt_tokens is None and attempt.completion_tokens is None:
            continue
        total += (price_in * (attempt.prompt_tokens or 0) + price_out * (attempt.completion_tokens or 0)) / 1e6
        charged += 1
    notes = []
    if unreported:
        # The same count as the token figures' note (`AttemptFacts.usage_unreported`).
        notes.append(
            f"{unreported} of {len(attempts)} attempts reported no token usage "
            "and are not charged in full, so this is a lower bound"
        )
    if cached is not None:
        # Cached-prompt counts are not recorded, so the discount cannot be applied honestly.
        notes.append("cached-prompt discount not applied: every prompt token is charged at the input price")
    per_task = None
    if attempts and charged == 0:
        total_or_none = None
        notes.insert(0, "no attempt reported token usage, so the cost is unknown")
    else:
        total_or_none = total
        if completed == 0:
            notes.insert(0, "no task was completed")
        else:
            per_task = total / completed
    return Cost(
        "token_price",
        str(basis.get("currency") or "USD"),
        total_or_none,
        per_task,
        "; ".join(notes) or None,
        price_input=price_in,
        price_output=price_out,
        price_cached=float(cached) if cached is not None else None,
        captured=basis.get("captured"),
        source=basis.get("source"),
    )
