"""Run a prepared judging: every judge call not already decided, each written to the store the
moment it returns, under its deterministic id. Interrupting loses at most the calls in
flight; running the same judging again asks only for what is missing or failed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint.client import ChatClient, chat_client
from compare_tui.engine.audit import audit_row
from compare_tui.engine.exchange import Exchange
from compare_tui.engine.retry import RetryPolicy
from compare_tui.judge.pair.figures import preferred_side
from compare_tui.judge.prompt.parse import (
    UNPARSEABLE,
    ParsedReply,
    parse_grade_reply,
    parse_pair_reply,
    parse_scale_reply,
)
from compare_tui.judge.prompt.templates import JudgeMessage, ResponseFormat
from compare_tui.judge.run.call import JudgeReply, JudgeSettings, ask_judge
from compare_tui.store import Store, utc_now
from compare_tui.store.judgements import JudgementRecord, JudgingRecord, judgement_id


@dataclass(frozen=True, slots=True)
class JudgeJob:
    """One judge call to make: a task, an ordering (`ab`/`ba`, or `single` for a grade), a prompt."""

    task_id: str
    ordering: str
    messages: list[JudgeMessage]
    attempt: int | None = None
    """scale: the attempt whose answer is graded (part of the judgement id)."""


@dataclass(slots=True)
class JudgingPlan:
    """Everything a judging needs; built by `prepare.py`, which has already checked the judge."""

    judging: JudgingRecord
    entry: ModelEntry
    jobs: list[JudgeJob]
    settings: JudgeSettings = field(default_factory=JudgeSettings)
    not_judged: dict[str, str] = field(default_factory=dict)
    """Tasks with no call to make, and why (e.g. the candidate run has no answer)."""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    """Request headers, holding the virtual key when there is one. Never stored or logged."""
    response_format: ResponseFormat | None = None
    """Set for the structured reply form: the JSON schema the server constrains replies to."""


@dataclass(frozen=True, slots=True)
class JudgingTally:
    """What one execution did: calls made now, calls skipped as already decided, failures now."""

    requested: int
    skipped: int
    failed: int


Progress = Callable[[JudgementRecord, int, int], None]
"""`(judgement just stored, calls done so far, calls to make)`."""


def to_judgement(judging: JudgingRecord, job: JudgeJob, reply: JudgeReply) -> JudgementRecord:
    """The stored form of one reply: a verdict, or a failure (`unparseable` when it had none)."""
    common: dict[str, Any] = dict(
        judging_id=judging.id,
        task_id=job.task_id,
        ordering=job.ordering,
        attempt=job.attempt,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        e2e_ms=reply.e2e_ms,
        retries=reply.retries,
        judged_at=utc_now(),
    )
    if reply.error_class is not None:
        return JudgementRecord(**common, error_class=reply.error_class, error=reply.error)
    parsed = _parse(judging.kind, reply.text)
    if parsed.verdict is None:
        problem = unparseable_problem(judging, reply, parsed)
        return JudgementRecord(
            **common, rationale=parsed.rationale, raw_text=parsed.text, error_class=UNPARSEABLE, error=problem
        )
    if judging.kind == "scale":
        return JudgementRecord(
            **common,
            verdict=parsed.verdict,
            grade=int(parsed.verdict),
            rationale=parsed.rationale,
            raw_text=parsed.text,
        )
    preferred = parsed.verdict if judging.kind == "grade" else preferred_side(job.ordering, parsed.verdict)
    return JudgementRecord(
        **common, verdict=parsed.verdict, preferred=preferred, rationale=parsed.rationale, raw_text=parsed.text
    )


def unparseable_problem(judging: JudgingRecord, reply: JudgeReply, parsed: ParsedReply) -> str | None:
    """Why a reply gave no verdict, in the terms of the reply form the judge was asked for; a
    reply the server cut at max_tokens says so first (the likely cause, and what to change)."""
    key = "grade" if judging.kind == "scale" else "verdict"
    if reply.finish_reason == "length":
        return (
            f"the judge's reply stopped at the max_tokens limit before its {key} ({reply.completion_tokens or '?'} "
            "tokens): raise --max-tokens and judge again"
        )
    if judging.reply_form == "structured" and parsed.no_verdict_found:
        shown = parsed.text[-160:].replace("\n", " ") if parsed.text else "(empty reply)"
        return f"the judge's reply is not the JSON object with a `{key}` it was asked for: …{shown}"
    return parsed.problem


def _parse(kind: str, text: str) -> ParsedReply:
    if kind == "scale":
        return parse_scale_reply(text)
    return parse_grade_reply(text) if kind == "grade" else parse_pair_reply(text)


def pending_jobs(store: Store, plan: JudgingPlan) -> list[JudgeJob]:
    """The calls of `plan` with no stored verdict yet: what running it now would send."""
    decided = store.decided_judgement_ids(plan.judging.id)
    return [
        job for job in plan.jobs if judgement_id(plan.judging.id, job.task_id, job.ordering, job.attempt) not in decided
    ]


async def execute_judging(
    store: Store,
    plan: JudgingPlan,
    *,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> JudgingTally:
    """Make every judge call of `plan` that has no stored verdict yet; return what was done."""
    todo = pending_jobs(store, plan)
    settings = plan.settings
    if not todo:
        return JudgingTally(0, len(plan.jobs), 0)
    jobs: Iterator[JudgeJob] = iter(todo)
    counts = {"done": 0, "failed": 0}
    rng = random.Random()

    async def worker(client: ChatClient) -> None:
        for job in jobs:  # one shared iterator: each job goes to exactly one worker
            reply = await ask_judge(
                client,
                plan.entry,
                plan.headers,
                job.messages,
                settings,
                retry=retry,
                rng=rng,
                on_exchange=partial(_audit, store, plan.entry, job),
                response_format=plan.response_format,
            )
            record = to_judgement(plan.judging, job, reply)
            store.record_judgement(record)
            counts["done"] += 1
            counts["failed"] += record.failed
            if progress is not None:
                progress(record, counts["done"], len(todo))

    # The judge's requests go through the endpoint's one chat client, as a run's do.
    async with chat_client(timeout_s=settings.timeout_s, concurrency=settings.concurrency) as client:
        await asyncio.gather(*(worker(client) for _ in range(min(settings.concurrency, len(todo)))))
    return JudgingTally(counts["done"], len(plan.jobs) - len(todo), counts["failed"])


def _audit(store: Store, entry: ModelEntry, job: JudgeJob, ex: Exchange) -> None:
    # Every HTTP request is a row of the audit ledger. Judge calls belong to no run (run_id is
    # empty), so they can never be counted in a candidate's figures.
    store.record_audit(audit_row(ex, endpoint=entry.endpoint, model=entry.model, task_id=job.task_id))
