"""The spend estimate made before any request, and the `--max-cost` refusal.

It is an upper bound by design: every task is assumed to use all its attempts and every
answer `max_tokens`. Hardware cost assumes a generation speed (stated in the estimate)
because duration cannot be known before the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.catalogue.models import CostBasis, HardwareCost, TokenPriceCost
from compare_tui.engine.request import estimated_prompt_tokens
from compare_tui.engine.settings import RunSettings
from compare_tui.goldset.models import GoldenSet
from compare_tui.vocabulary import money

ASSUMED_TOKENS_PER_S = 20.0
"""Per-request generation speed assumed for hardware estimates (a small model on a CPU)."""


@dataclass(frozen=True, slots=True)
class SpendEstimate:
    usd: float | None
    basis: str
    explanation: str

    def text(self) -> str:
        return "no cost basis" if self.usd is None else f"≤ ${self.usd:.4f} ({self.explanation})"


def estimate_spend(goldset: GoldenSet, cost: CostBasis | None, settings: RunSettings) -> SpendEstimate:
    requests = len(goldset.tasks) * settings.attempts
    prompt = sum(estimated_prompt_tokens(t) for t in goldset.tasks) * settings.attempts
    return estimate_requests(cost, requests, prompt, settings.max_tokens, settings.concurrency)


def estimate_requests(
    cost: CostBasis | None, requests: int, prompt: int, max_tokens: int, concurrency: int
) -> SpendEstimate:
    """The upper bound of `requests` requests of `prompt` prompt tokens in all, each answered at
    `max_tokens`, `concurrency` at once (what a run is charged on an hourly basis: its wall-clock
    time; a request of no run is charged its own time, so give 1)."""
    if cost is None:
        return SpendEstimate(None, "none", "the catalogue entry has no cost basis")
    basis = cost.basis
    if isinstance(cost, TokenPriceCost):
        completion = requests * max_tokens
        usd = (prompt * cost.usd_per_mtok_input + completion * cost.usd_per_mtok_output) / 1e6
        return SpendEstimate(
            usd, basis, f"{requests} requests, ~{prompt} prompt + ≤{completion} completion tokens at the listed price"
        )
    if isinstance(cost, HardwareCost):
        per_request_s = max_tokens / ASSUMED_TOKENS_PER_S + 0.5
        hours = requests * per_request_s / max(1, concurrency) / 3600
        usd = hours * cost.usd_per_hour  # the whole machine's rate (catalogue: HardwareCost)
        return SpendEstimate(
            usd,
            basis,
            f"{requests} requests at ≤{max_tokens} tokens, assuming {ASSUMED_TOKENS_PER_S:g} tokens/s "
            f"per request and {concurrency} at once, ${cost.usd_per_hour:g}/h",
        )
    return SpendEstimate(None, str(basis), "unknown cost basis")


def check_spend(estimate: SpendEstimate, max_cost: float | None) -> str | None:
    """The refusal reason when the estimate is over the cap, else None."""
    if max_cost is None:
        return None
    if estimate.usd is None:
        return f"--max-cost {money(max_cost)} was given but the spend cannot be estimated: {estimate.explanation}"
    if estimate.usd > max_cost:
        return (
            f"the estimated spend {money(estimate.usd)} exceeds --max-cost {money(max_cost)} "
            f"({estimate.explanation}); lower --attempts or --max-tokens, or raise --max-cost"
        )
    return None
