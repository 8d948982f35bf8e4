"""What a new run would cost and what the engine would refuse, before anything is sent.

Pure: the engine's own `resolve_settings` and `estimate_spend` and the catalogue's
`check_entry`, applied to the New run screen's choices. No Textual here.

Money is spelled one way on the screen: every model's estimate and the cap in dollars with the
same number of decimals, each estimate rounded *up* (they are upper bounds), and the total is
the sum of the amounts shown, so the lines add up. The spend refusal names the screen's own
fields, never a command-line flag.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.catalogue import ModelEntry, check_entry
from compare_tui.engine.estimate import estimate_spend
from compare_tui.engine.settings import RunOverrides, resolve_settings
from compare_tui.goldset import GoldenSet


@dataclass(frozen=True, slots=True)
class ModelPreview:
    name: str
    estimate: str
    """`≤ $0.00080 (12 requests, …)`, or `no cost basis`."""
    usd: float | None
    """The estimate as shown (rounded up to `SpendPreview.decimals`)."""
    refusals: tuple[str, ...]
    """Every reason the engine would refuse this model (pins, spend cap); empty when none."""


@dataclass(frozen=True, slots=True)
class SpendPreview:
    settings: str
    """`attempts 2 · max tokens 64 · concurrency 4 · temperature 0`."""
    models: tuple[ModelPreview, ...]
    total_usd: float | None
    """Sum of the estimates as shown; None when any model has no estimate."""
    problem: str | None = None
    """Settings the engine would not accept (then `models` is empty)."""
    decimals: int = 2
    """Decimals every amount on the screen is written with."""

    @property
    def refused(self) -> bool:
        return self.problem is not None or any(m.refusals for m in self.models)


def preview(
    goldset: GoldenSet, entries: Sequence[ModelEntry], overrides: RunOverrides, max_cost: float | None
) -> SpendPreview:
    try:
        settings = resolve_settings(goldset, overrides)
    except ValueError as exc:
        return SpendPreview("", (), None, str(exc))
    text = (
        f"{len(goldset.tasks)} tasks · attempts {settings.attempts} · max tokens {settings.max_tokens} · "
        f"concurrency {settings.concurrency} · temperature {settings.temperature:g}"
    )
    estimates = [estimate_spend(goldset, entry.cost, settings) for entry in entries]
    digits = decimals([e.usd for e in estimates] + [max_cost])
    models = []
    for entry, estimate in zip(entries, estimates, strict=True):
        refusals = [r.message for r in check_entry(entry)]
        shown = None if estimate.usd is None else round_up(estimate.usd, digits)
        if max_cost is not None and estimate.usd is None:
            refusals.append(f"the spend cap is set but this model's spend cannot be estimated: {estimate.explanation}")
        elif max_cost is not None and estimate.usd is not None and estimate.usd > max_cost:
            refusals.append(
                f"its estimated spend ≤ {dollars(round_up(estimate.usd, digits), digits)} is over the spend cap "
                f"{dollars(max_cost, digits)}: lower attempts or max tokens, or raise the spend cap"
            )
        said = "no cost basis" if shown is None else f"≤ {dollars(shown, digits)} ({estimate.explanation})"
        models.append(ModelPreview(entry.name, said, shown, tuple(refusals)))
    usds = [m.usd for m in models]
    total = round(sum(u for u in usds if u is not None), digits) if usds and None not in usds else None
    return SpendPreview(text, tuple(models), total, decimals=digits)


def decimals(amounts: Sequence[float | None]) -> int:
    """Decimals that show the smallest non-zero amount with three significant digits (at least
    two: cents), so every amount on the screen is written the same way."""
    smallest = min((a for a in amounts if a), default=None)
    if smallest is None or smallest >= 1:
        return 2
    return max(2, 2 - math.floor(math.log10(smallest)))


def round_up(amount: float, digits: int) -> float:
    """`amount` rounded up to `digits` decimals (an estimate is an upper bound: keep it one)."""
    scale: int = 10**digits
    return math.ceil(round(amount * scale, 6)) / scale


def dollars(amount: float, digits: int) -> str:
    """`$0.00080`: fixed decimals, never scientific notation."""
    return f"${amount:,.{digits}f}"
