"""The analyst's one call: its catalogue entry checked like a judge's (refusals, key policy,
weights), the evidence sent through the judge's call (the engine's one endpoint client and retry
policy), the request an audit-ledger row of no run; its cost computed apart from every model's."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint.client import chat_client
from compare_tui.engine.audit import audit_row
from compare_tui.engine.client import Exchange
from compare_tui.engine.prepare import RunRefusedError, check_model
from compare_tui.errors import CompareTuiError
from compare_tui.insights import Insights
from compare_tui.judge.analyst.claims import Claim, check_claims
from compare_tui.judge.analyst.evidence import analyst_messages
from compare_tui.judge.run.call import JudgeReply, JudgeSettings, ask_judge
from compare_tui.judge.run.usage import JudgeUsage, judge_usage
from compare_tui.store import Store
from compare_tui.store.judgements import JudgementRecord

ANALYST_SETTINGS = JudgeSettings(max_tokens=300, concurrency=1)
"""Room for six short lines; temperature 0 as a judge's."""


class AnalystRefused(CompareTuiError):
    """The analyst's entry may not be asked (the message says why). Nothing was sent."""


@dataclass(frozen=True, slots=True)
class AnalystReview:
    """What the analyst wrote, checked: every sentence with its citations, kept or dropped."""

    model: str
    provenance: str
    claims: tuple[Claim, ...]
    usage: JudgeUsage
    """The analyst's own call: tokens, latency, cost (apart from every model's figures)."""
    error: str | None = None
    """Why there is no reply (the request failed); then `claims` is empty."""

    @property
    def kept(self) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if c.dropped is None)

    @property
    def dropped(self) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if c.dropped is not None)


def _usage(reply: JudgeReply, entry: ModelEntry) -> JudgeUsage:
    """The call's tokens, latency and cost, by the judge's own rule (its catalogue cost basis)."""
    record = JudgementRecord(
        judging_id="analyst",
        task_id="insights",
        ordering="single",
        verdict=None if reply.error_class is not None else "reply",
        error_class=reply.error_class,
        error=reply.error,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        e2e_ms=reply.e2e_ms,
        retries=reply.retries,
    )
    return judge_usage([record], entry.cost.model_dump() if entry.cost is not None else None)


def review_insights(
    store: Store,
    entry: ModelEntry,
    insights: Insights,
    *,
    decision: str | None = None,
    environ: Mapping[str, str] | None = None,
    settings: JudgeSettings = ANALYST_SETTINGS,
) -> AnalystReview:
    """Ask `entry` for a summary of `insights` and check each of its sentences. Raises
    `AnalystRefused` before sending anything when the entry may not be asked."""
    try:
        provenance, headers = check_model(entry, environ=environ)
    except RunRefusedError as exc:
        raise AnalystRefused(f"analyst {exc}") from None

    def audit(exchange: Exchange) -> None:
        # Its requests belong to no run, so they are never counted in a candidate's figures.
        store.record_audit(audit_row(exchange, endpoint=entry.endpoint, model=entry.model, task_id="(insights)"))

    async def ask() -> JudgeReply:
        async with chat_client(timeout_s=settings.timeout_s, concurrency=1) as client:
            messages = analyst_messages(insights, decision)
            return await ask_judge(client, entry, headers, messages, settings, on_exchange=audit)

    reply = asyncio.run(ask())
    usage = _usage(reply, entry)
    if reply.error_class is not None:
        return AnalystReview(entry.name, str(provenance), (), usage, f"{reply.error_class}: {reply.error}")
    return AnalystReview(entry.name, str(provenance), check_claims(reply.text, insights), usage)
