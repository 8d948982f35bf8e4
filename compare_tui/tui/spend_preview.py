"""What a new run would cost and what the engine would refuse, before anything is sent.

Pure: the engine's own `resolve_settings`, `estimate_spend` and `check_spend`, and the
catalogue's `check_entry`, applied to the New run screen's choices. No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.catalogue import ModelEntry, check_entry
from compare_tui.engine.estimate import check_spend, estimate_spend
from compare_tui.engine.settings import RunOverrides, resolve_settings
from compare_tui.goldset import GoldenSet


@dataclass(frozen=True, slots=True)
class ModelPreview:
    name: str
    estimate: str
    usd: float | None
    refusals: tuple[str, ...]
    """Every reason the engine would refuse this model (pins, spend cap); empty when none."""


@dataclass(frozen=True, slots=True)
class SpendPreview:
    settings: str
    """`attempts 2 · max tokens 64 · concurrency 4 · temperature 0`."""
    models: tuple[ModelPreview, ...]
    total_usd: float | None
    """Sum of the estimates; None when any model has no estimate."""
    problem: str | None = None
    """Settings the engine would not accept (then `models` is empty)."""

    @property
    def refused(self) -> bool:
        return self.problem is not None or any(m.refusals for m in self.models)


def preview(goldset: GoldenSet, entries: Sequence[ModelEntry], overrides: RunOverrides,
            max_cost: float | None) -> SpendPreview:
    try:
        settings = resolve_settings(goldset, overrides)
    except ValueError as exc:
        return SpendPreview("", (), None, str(exc))
    text = (f"{len(goldset.tasks)} tasks · attempts {settings.attempts} · max tokens {settings.max_tokens} · "
            f"concurrency {settings.concurrency} · temperature {settings.temperature:g}")
    models = []
    for entry in entries:
        estimate = estimate_spend(goldset, entry.cost, settings)
        refusals = [r.message for r in check_entry(entry)]
        over = check_spend(estimate, max_cost)
        if over:
            refusals.append(over.replace("--max-cost", "the spend cap"))
        models.append(ModelPreview(entry.name, estimate.text(), estimate.usd, tuple(refusals)))
    usds = [m.usd for m in models]
    total = sum(usds) if usds and all(u is not None for u in usds) else None
    return SpendPreview(text, tuple(models), total)
