"""The New run screen's words for a workload's `Shortlist` (pure, no Textual): today's model
panel, the grouped rows of the model list, the selection footer, and the daily budget lines.
The figures are the `candidates` package's, as `models list --for SET` prints them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compare_tui.candidates import Candidate, Shortlist
from compare_tui.candidates.render import per_mtok, savings_words
from compare_tui.catalogue import ModelEntry, check_entry
from compare_tui.engine.budget import BudgetPlan, DailyBudget
from compare_tui.vocabulary import PriceGroup, money


@dataclass(frozen=True, slots=True)
class ListRow:
    """One line of the model list: a group's heading (`name` None) or a model."""

    name: str | None
    prompt: str


def today_panel(shortlist: Shortlist | None, workload_id: str) -> str:
    """Today's model, its blended price and recent spend; or why there is none."""
    if shortlist is None:
        return f"Today's model for {workload_id}: no catalogue to price."
    mix = (
        f"Mix: {shortlist.mix.input_tokens:,.0f} in / {shortlist.mix.output_tokens:,.0f} out tokens a request"
        f" ({'measured' if shortlist.mix.measured else 'default: none measured'})"
    )
    today = shortlist.today
    if today is None:
        return (
            f"Today's model for {workload_id}: none promoted yet (compare-tui promote), so prices "
            f"are not compared and nothing is pre-selected.\n{mix}"
        )
    spend = " · ".join(f"{days} d {money(value)}" for days, value in today.spend.items())
    return (
        f"Today's model: {today.name} ({today.source}) · {per_mtok(today.price.usd_per_mtok)} blended\n"
        f"Spend on it ({today.spend_source.value}): {spend}\n{mix}"
    )


def list_rows(shortlist: Shortlist | None, entries: Sequence[ModelEntry], chosen: Iterable[str]) -> list[ListRow]:
    """The model list: headed groups in the shortlist's order (cheapest first); the catalogue's
    order under no heading when no price of today's model compares (no baseline, or one without
    a price yet)."""
    picked = set(chosen)
    by_name = {entry.name: entry for entry in entries}
    if shortlist is None:
        return [ListRow(entry.name, _entry_words(entry, picked)) for entry in entries]
    if shortlist.today is None or shortlist.today.price.usd_per_mtok is None:
        found = {c.name: c for c in shortlist.candidates}
        return [ListRow(e.name, _candidate_prompt(found[e.name], e, picked)) for e in entries if e.name in found]
    rows: list[ListRow] = []
    for group in PriceGroup:
        members = [c for c in shortlist.candidates if c.group is group and c.name in by_name]
        if not members:
            continue
        band = f" (±{shortlist.band:.0%})" if group is PriceGroup.ABOUT_THE_SAME else ""
        rows.append(ListRow(None, f"{group.value}{band}"))
        rows.extend(ListRow(c.name, _candidate_prompt(c, by_name[c.name], picked)) for c in members)
    return rows


def _entry_words(entry: ModelEntry, picked: set[str]) -> str:
    """`✓ chosen: fake-a (hosted, refused: see below)`."""
    refused = ", refused: see below" if check_entry(entry) else ""
    return f"{'✓ chosen: ' if entry.name in picked else ''}{entry.name} ({entry.kind}{refused})"


def _candidate_prompt(c: Candidate, entry: ModelEntry, picked: set[str]) -> str:
    """One line (the list draws one line an option), short enough for 80 columns:
    `✓ qwen2.5-coder-0.5b ★ · $0.4/Mtok · today · 56% (43–69%) 2026-12-07`."""
    mark = "✓ " if c.name in picked else ""
    recommended = " ★" if c.recommended else ""
    refused = " (refused)" if check_entry(entry) else ""
    price = per_mtok(c.price.usd_per_mtok)
    if c.price.usd_per_mtok is None:
        price = "no throughput yet" if c.price.basis == "hardware" else "no price"
    parts = [f"{mark}{c.name}{recommended}{refused}", price]
    if c.is_baseline:
        parts.append("today")
    elif c.savings_share is not None:
        parts.append(savings_words(c.savings_share))
    q = c.quality
    parts.append(
        "not measured yet" if q is None else f"{q.rate:.0%} ({q.interval.low * 100:.0f}–{q.interval.high:.0%}) {q.date}"
    )
    return " · ".join(parts)


def selection_footer(shortlist: Shortlist | None, chosen: Sequence[str]) -> str:
    """`3 selected · $0.1–$2.38/Mtok blended vs today's $2.38/Mtok`."""
    text = f"{len(chosen)} selected"
    if shortlist is None:
        return text
    span = shortlist.price_range(tuple(chosen))
    if span is not None:
        low, high = span
        text += f" · {money(low)}–{per_mtok(high)} blended" if low != high else f" · {per_mtok(low)} blended"
    if shortlist.today is not None and shortlist.today.price.usd_per_mtok is not None:
        text += f" vs today's {per_mtok(shortlist.today.price.usd_per_mtok)}"
    return text


def budget_lines(budget: DailyBudget | None, spent: float, plan: BudgetPlan | None, reset: str) -> list[str]:
    """The daily budget's state and what this run would skip, or nothing when no budget is set."""
    if budget is None or not budget.set:
        return []
    lines = []
    if budget.usd_per_day is not None:
        left = max(0.0, budget.usd_per_day - spent)
        lines.append(
            f"Daily eval budget {money(budget.usd_per_day)}: {money(spent)} spent today, {money(left)} left; {reset}"
        )
    if plan is not None and plan.skipped:
        lines.append(f"⚠ {plan.warning}")
        lines += [f"  {name}: {reason}" for name, reason in plan.skipped.items()]
    return lines
