"""The judge's own cost and latency, kept apart from the candidates' (a judge is not a contestant).

Cost uses the judge's catalogue cost basis: `token_price` charges the tokens the server
reported; `hardware` charges the summed time of the judge calls at the hourly rate, an upper
bound when calls overlapped (they are each charged in full).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compare_tui.report.stats import Percentiles, percentiles
from compare_tui.store.judgements import JudgementRecord


@dataclass(frozen=True, slots=True)
class JudgeUsage:
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    usage_missing: int
    """Calls whose server reported no token counts (never guessed)."""
    latency_ms: Percentiles
    """End-to-end time per judge call."""
    cost: float | None
    currency: str
    cost_note: str


def judge_usage(judgements: Iterable[JudgementRecord], cost_basis: Mapping[str, Any] | None) -> JudgeUsage:
    """The judge's figures over every stored call (failed calls are charged too)."""
    rows = list(judgements)
    prompt = sum(j.prompt_tokens or 0 for j in rows)
    completion = sum(j.completion_tokens or 0 for j in rows)
    missing = sum(1 for j in rows if j.prompt_tokens is None and j.completion_tokens is None)
    latency = percentiles(j.e2e_ms for j in rows if j.e2e_ms is not None)
    cost, currency, note = _cost(rows, cost_basis, prompt, completion, missing)
    return JudgeUsage(
        len(rows), sum(1 for j in rows if j.failed), prompt, completion, missing, latency, cost, currency, note
    )


def _cost(
    rows: list[JudgementRecord], basis: Mapping[str, Any] | None, prompt: int, completion: int, missing: int
) -> tuple[float | None, str, str]:
    if not basis or basis.get("basis") not in ("hardware", "token_price"):
        return None, "USD", "no cost basis in the judge's catalogue entry: cost not shown"
    if basis["basis"] == "token_price":
        currency = str(basis.get("currency", "USD"))
        total = (prompt * float(basis["usd_per_mtok_input"]) + completion * float(basis["usd_per_mtok_output"])) / 1e6
        note = f"token price captured {basis.get('captured')} ({basis.get('source')})"
        if missing:
            note += f"; {missing} call(s) reported no tokens and are not charged"
        return total, currency, note
    seconds = sum(j.e2e_ms or 0.0 for j in rows) / 1000
    rate = float(basis["usd_per_hour"])
    return (
        rate * seconds / 3600,
        "USD",
        f"hardware basis: {seconds:.1f} s of judge calls at ${rate:.2f}/h "
        "(overlapping calls each charged: an upper bound)",
    )
