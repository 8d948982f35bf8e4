"""The candidates for one workload as a buyer sees them (pure): each model's blended price at the
workload's own token mix, its projected savings against today's model, its measured quality,
its price group, and the recommended pre-selection.

Blended price, in USD per million tokens at the workload's mix:
- per-token basis: (in · price_in + out · price_out) / (in + out), `in`/`out` the mean prompt and
  completion tokens per request measured from the baseline's runs (a stated default when none);
- hourly basis: usd_per_hour / (3600 · tokens a second) · 1e6, the tokens a second measured on
  this workload by the model's newest finished run (at that run's concurrency); none measured:
  no price ("no throughput measured yet"), never a guess.

The recommended set: the baseline itself, every measured candidate at or below the baseline's
blended price ranked by pass rate per dollar (the best `RECOMMENDED_MEASURED`; none whose whole
95 % interval lies below the baseline's measured pass rate), and every unmeasured candidate at
or below it, so that the next run measures it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypedDict

from compare_tui.candidates.measure import SPEND_WINDOWS_DAYS, ModelMeasures, Quality
from compare_tui.catalogue import ModelEntry
from compare_tui.catalogue.models import HardwareCost, TokenPriceCost
from compare_tui.vocabulary import PriceGroup, SpendSource, money

DEFAULT_MIX = (1000.0, 250.0)
"""Prompt and completion tokens a request assumed when the baseline has no measured usage."""
SAME_BAND = 0.10
"""Within ±10 % of the baseline's blended price is "about the same"."""
RECOMMENDED_MEASURED = 3
"""How many measured candidates the recommended set keeps, best pass rate per dollar first."""


@dataclass(frozen=True, slots=True)
class TokenMix:
    """Mean prompt and completion tokens a request, and where they came from."""

    input_tokens: float
    output_tokens: float
    requests: int
    """Requests measured (0: the default mix)."""
    model: str | None = None
    """The model whose runs measured it (the baseline)."""

    @property
    def measured(self) -> bool:
        return self.requests > 0

    def sentence(self) -> str:
        head = f"{self.input_tokens:,.0f} in / {self.output_tokens:,.0f} out tokens a request"
        if self.measured:
            whose = "every model's runs" if self.model == "every model" else f"{self.model}'s runs"
            return f"{head}, measured over {self.requests} requests of {whose} on this workload"
        return f"{head}: the default mix (no usage measured on this workload yet)"


@dataclass(frozen=True, slots=True)
class BlendedPrice:
    """A model's blended price at the mix, or None with the reason in `basis_note`."""

    usd_per_mtok: float | None
    basis: str | None
    """`token_price`, `hardware` or None (no cost basis)."""
    basis_note: str
    """How it was reached, in words (the price's date, or the throughput it rests on)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    kind: str
    price: BlendedPrice
    group: PriceGroup
    savings_share: float | None
    """(baseline − this) / baseline blended price: 0.25 means 25 % cheaper."""
    savings_30d: float | None
    """The baseline's 30-day spend times `savings_share`: what the same traffic would have saved."""
    quality: Quality | None
    recommended: bool
    is_baseline: bool = False

    @property
    def quality_per_dollar(self) -> float | None:
        if self.quality is None or self.price.usd_per_mtok is None:
            return None
        return math.inf if self.price.usd_per_mtok == 0 else self.quality.rate / self.price.usd_per_mtok


@dataclass(frozen=True, slots=True)
class TodaysModel:
    name: str
    source: str
    """`promoted` (the workload's latest decision) or `named` (--baseline)."""
    price: BlendedPrice
    spend: dict[int, float]
    """Days back → USD over that window."""
    spend_source: SpendSource
    spend_note: str


@dataclass(frozen=True, slots=True)
class Shortlist:
    """What `models list --for SET` and the New run screen show for one workload."""

    workload_id: str
    today: TodaysModel | None
    mix: TokenMix
    candidates: tuple[Candidate, ...]
    band: float = SAME_BAND
    notes: tuple[str, ...] = field(default=())

    @property
    def recommended(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.recommended)

    def price_range(self, names: set[str] | tuple[str, ...]) -> tuple[float, float] | None:
        """The lowest and highest known blended price among `names`, or None."""
        prices = [c.price.usd_per_mtok for c in self.candidates if c.name in names and c.price.usd_per_mtok is not None]
        return (min(prices), max(prices)) if prices else None


def token_mix(measures: ModelMeasures | None) -> TokenMix:
    """The baseline's mean tokens a request, or `DEFAULT_MIX` when it has none measured."""
    if measures is None or measures.requests_with_usage == 0:
        return TokenMix(*DEFAULT_MIX, requests=0)
    n = measures.requests_with_usage
    return TokenMix(measures.prompt_tokens / n, measures.completion_tokens / n, n, measures.model)


def _pooled(measures: dict[str, ModelMeasures]) -> ModelMeasures | None:
    """With no baseline, the mix of every model's runs on the workload (the tasks' own prompts,
    as each model answered them): better than the default mix when runs are stored."""
    measured = [m for m in measures.values() if m.requests_with_usage]
    if not measured:
        return None
    return ModelMeasures(
        "every model",
        sum(m.runs for m in measured),
        sum(m.requests_with_usage for m in measured),
        sum(m.prompt_tokens for m in measured),
        sum(m.completion_tokens for m in measured),
        None,
        None,
    )


def blended_price(entry: ModelEntry, mix: TokenMix, measures: ModelMeasures | None) -> BlendedPrice:
    """`entry`'s blended price at `mix` (module docstring)."""
    cost = entry.cost
    if isinstance(cost, TokenPriceCost):
        total = mix.input_tokens + mix.output_tokens
        value = (mix.input_tokens * cost.usd_per_mtok_input + mix.output_tokens * cost.usd_per_mtok_output) / total
        return BlendedPrice(value, "token_price", f"per-token price captured {cost.captured}")
    if isinstance(cost, HardwareCost):
        throughput = measures.throughput if measures else None
        if throughput is None:
            return BlendedPrice(None, "hardware", f"{money(cost.usd_per_hour)}/h; no throughput measured yet")
        value = cost.usd_per_hour / (3600 * throughput.tokens_per_s) * 1e6
        load = f" at concurrency {throughput.concurrency}" if throughput.concurrency else ""
        return BlendedPrice(
            value,
            "hardware",
            f"{money(cost.usd_per_hour)}/h at {throughput.tokens_per_s:,.1f} tok/s measured on this workload{load}",
        )
    return BlendedPrice(None, None, "no cost basis in the catalogue")


def price_group(price: float | None, baseline: float | None, band: float = SAME_BAND) -> PriceGroup:
    if price is None:
        return PriceGroup.UNPRICED
    if baseline is None:
        return PriceGroup.NOT_COMPARED
    if baseline == 0:
        return PriceGroup.ABOUT_THE_SAME if price == 0 else PriceGroup.DEARER
    ratio = price / baseline
    if ratio < 1 - band:
        return PriceGroup.CHEAPER
    if ratio > 1 + band:
        return PriceGroup.DEARER
    return PriceGroup.ABOUT_THE_SAME


def build_shortlist(
    workload_id: str,
    entries: tuple[ModelEntry, ...],
    measures: dict[str, ModelMeasures],
    *,
    baseline: str | None,
    baseline_source: str = "promoted",
    spend: dict[int, float] | None = None,
    band: float = SAME_BAND,
    spend_source: SpendSource = SpendSource.STORE_RUNS,
) -> Shortlist:
    """Price, group and pre-select `entries` against `baseline` (module docstring)."""
    mix = token_mix(measures.get(baseline) if baseline else _pooled(measures))
    prices = {entry.name: blended_price(entry, mix, measures.get(entry.name)) for entry in entries}
    base_price = prices[baseline].usd_per_mtok if baseline in prices else None
    spend_30 = (spend or {}).get(SPEND_WINDOWS_DAYS[-1])
    at_or_below = {
        name
        for name, price in prices.items()
        if name != baseline and price.usd_per_mtok is not None and base_price is not None
        if price.usd_per_mtok <= base_price
    }
    base_quality = measures[baseline].quality if baseline in measures else None
    measured_cheap = sorted(
        (
            name
            for name in at_or_below
            if (m := measures.get(name)) is not None and m.quality is not None
            if not _clearly_worse(m.quality, base_quality)
        ),
        key=lambda name: -_per_dollar(measures[name].quality, prices[name].usd_per_mtok),
    )
    chosen = set(measured_cheap[:RECOMMENDED_MEASURED])
    chosen |= {name for name in at_or_below if (m := measures.get(name)) is None or m.quality is None}
    if baseline in prices:
        chosen.add(baseline)
    rows = []
    for entry in entries:
        price = prices[entry.name].usd_per_mtok
        share = None
        if price is not None and base_price:
            share = (base_price - price) / base_price
        m = measures.get(entry.name)
        rows.append(
            Candidate(
                name=entry.name,
                kind=str(entry.kind),
                price=prices[entry.name],
                group=price_group(price, base_price, band),
                savings_share=share,
                savings_30d=None if share is None or spend_30 is None else spend_30 * share,
                quality=m.quality if m else None,
                recommended=entry.name in chosen,
                is_baseline=entry.name == baseline,
            )
        )
    order = list(PriceGroup)
    rows.sort(
        key=lambda c: (order.index(c.group), c.price.usd_per_mtok if c.price.usd_per_mtok is not None else math.inf)
    )
    today = None
    if baseline in prices:
        today = TodaysModel(
            name=baseline,
            source=baseline_source,
            price=prices[baseline],
            spend=dict(spend or {}),
            spend_source=spend_source,
            spend_note=(
                f"the managed gateway's traffic log: requests to the alias {workload_id!r} (its "
                "LiteLLM-priced cost, else tokens at today's model's price; shadow copies left out)"
                if spend_source is SpendSource.GATEWAY_LOG
                else "this store's runs of it on this workload (evaluation traffic: no gateway log "
                "holds this workload's traffic)"
            ),
        )
    notes = []
    if baseline is None:
        notes.append("no baseline: promote one (`compare-tui promote`) or name one with --baseline")
    elif baseline not in prices:
        notes.append(f"the baseline {baseline} is not in the catalogue, so no price compares against it")
    return Shortlist(workload_id, today, mix, tuple(rows), band, tuple(notes))


def _clearly_worse(quality: Quality, baseline: Quality | None) -> bool:
    """Its whole 95 % interval lies below the baseline's measured pass rate."""
    return baseline is not None and quality.interval.high < baseline.rate


def _per_dollar(quality: Quality | None, price: float | None) -> float:
    if quality is None or price is None:
        return -1.0
    return math.inf if price == 0 else quality.rate / price


class PriceJson(TypedDict):
    """A blended price in the shortlist's JSON: USD per million tokens, and how it was blended."""

    usd_per_mtok: float | None
    basis: str | None
    note: str


class ExactCi(TypedDict):
    """A Clopper-Pearson exact 95% interval, the method named."""

    low: float
    high: float
    method: str


class QualityJson(TypedDict):
    """A candidate's measured pass rate on the set, with the run it comes from."""

    pass_rate: float
    passed: int
    measured_tasks: int
    ci95: ExactCi
    date: str
    run_id: str
    same_set_version: bool


def shortlist_json(shortlist: Shortlist) -> dict[str, Any]:
    """The one JSON shape (`models list --for SET --format json`)."""

    def price(p: BlendedPrice) -> PriceJson:
        return {"usd_per_mtok": p.usd_per_mtok, "basis": p.basis, "note": p.basis_note}

    def quality(q: Quality | None) -> QualityJson | None:
        if q is None:
            return None
        return {
            "pass_rate": q.rate,
            "passed": q.passed,
            "measured_tasks": q.measured,
            "ci95": {"low": q.interval.low, "high": q.interval.high, "method": "Clopper-Pearson exact"},
            "date": q.date,
            "run_id": q.run_id,
            "same_set_version": q.same_version,
        }

    today = shortlist.today
    return {
        "workload_id": shortlist.workload_id,
        "today": None
        if today is None
        else {
            "model": today.name,
            "source": today.source,
            "price": price(today.price),
            "spend_usd": {f"{days}d": value for days, value in today.spend.items()},
            "spend_source": today.spend_source.value,
            "spend_note": today.spend_note,
        },
        "token_mix": {
            "input_tokens": shortlist.mix.input_tokens,
            "output_tokens": shortlist.mix.output_tokens,
            "measured_requests": shortlist.mix.requests,
            "measured": shortlist.mix.measured,
            "sentence": shortlist.mix.sentence(),
        },
        "band": {"about_the_same_within": shortlist.band},
        "recommended": list(shortlist.recommended),
        "candidates": [
            {
                "model": c.name,
                "kind": c.kind,
                "baseline": c.is_baseline,
                "group": c.group.value,
                "price": price(c.price),
                "savings_share": c.savings_share,
                "savings_30d_usd": c.savings_30d,
                "quality": quality(c.quality),
                "recommended": c.recommended,
            }
            for c in shortlist.candidates
        ],
        "notes": list(shortlist.notes),
    }
