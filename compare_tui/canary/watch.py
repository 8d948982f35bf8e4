"""`canary watch`'s one pass: read the traffic log from where the canary stopped, pair each of
B's new requests, and act on the assessment (roll back at once when worse; advance only with
`--auto-advance`). A request that matches no golden-set task is replayed and judged only when
the canary has a judge (`judged.py`). A pass is resumable at any point: each pair is committed
with the log's offset after its line, so a watch killed mid-pass starts again at the next line
with the same evidence.

Replays are rate-limited (`replays_per_s`) and capped in spend per UTC day (`max_usd_per_day`,
at the baseline's cost basis, the judge's calls at its own); over the cap, B's requests are
counted as `over budget`, not replayed. Replays also count against the user's daily eval budget
(`[budget]`, engine/budget.py): from the first whose estimate (its prompt, and its `max_tokens`
where the request set one, at the baseline's cost basis, plus the judge's two calls where it will
be asked) would exceed what today leaves, the pass replays no more, each request counted `over
the daily eval budget`, and the pass says why (`WatchPass.budget_stop`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from compare_tui.canary.control import Restart, advance, refuse_hand_edit, roll_back
from compare_tui.canary.evidence import (
    LoggedCall,
    graded,
    logged_answer,
    messages_key,
    paired_outcome,
    read_calls,
    replay_body,
    replay_usd,
    served_by,
    task_index,
)
from compare_tui.canary.judged import estimated_judge_usd, judge_pair, judge_similarity
from compare_tui.canary.policy import Assessment, Move, assess
from compare_tui.catalogue import Catalogue, ModelEntry
from compare_tui.endpoint import key_headers
from compare_tui.endpoint.client import chat_client
from compare_tui.engine.audit import audit_row
from compare_tui.engine.budget import DailyBudget, limit_exceeded
from compare_tui.engine.estimate import estimate_requests
from compare_tui.engine.exchange import Exchange, stream_chat
from compare_tui.engine.request import estimated_message_tokens
from compare_tui.goldset import GoldenSet, Task, load_golden_set
from compare_tui.store import CanaryPair, CanaryRecord, Store, utc_now
from compare_tui.store.rows import audit_values
from compare_tui.vocabulary import CanaryChange, CanaryJudgeRubric, PairGrader, PairSkip, money

REPLAY_TIMEOUT_S = 120.0


def replay_task_id(canary_id: str, call_id: str) -> str:
    """The audit row's `task_id` of a replay: which canary, which logged request."""
    return f"canary:{canary_id}:{call_id}"


@dataclass
class WatchPass:
    """What one pass did."""

    canary: CanaryRecord
    assessment: Assessment
    lines: int = 0
    candidate_requests: int = 0
    new_pairs: list[CanaryPair] = field(default_factory=list)
    change: CanaryChange | None = None
    budget_stop: str | None = None
    """Why replays stopped before the daily eval budget, when they did (one sentence)."""


async def _replay(
    store: Store, canary: CanaryRecord, entry: ModelEntry, call: LoggedCall, key: str | None
) -> tuple[Exchange, int | None]:
    task_id = replay_task_id(canary.id, call.call_id)
    opened = store.open_request(
        audit_values(endpoint=entry.endpoint, model=entry.name, task_id=task_id, attempt=1, at=utc_now())
    )
    ex = Exchange()
    try:
        async with chat_client(timeout_s=REPLAY_TIMEOUT_S) as client:
            ex = await stream_chat(
                client,
                entry.endpoint,
                replay_body(call.record, entry),
                headers=key_headers(key),
                timeout_s=REPLAY_TIMEOUT_S,
            )
    finally:
        row = audit_row(ex, endpoint=entry.endpoint, model=entry.name, task_id=task_id, attempt=1)
        store.record_audit(row.model_copy(update={"id": opened}))
    return ex, opened


@dataclass(frozen=True)
class Judge:
    """The canary's judge for pairs no check grades: its catalogue entry and request headers."""

    entry: ModelEntry
    headers: dict[str, str] = field(repr=False)


def _pair(
    store: Store, canary: CanaryRecord, goldset: GoldenSet, index: Mapping[str, Task], entry: ModelEntry,
    call: LoggedCall, seq: int, key: str | None, spent_today: float,
    over_daily: Callable[[LoggedCall], str | None] = lambda call: None, judge: Judge | None = None,
) -> CanaryPair:  # fmt: skip
    pair = CanaryPair(canary_id=canary.id, call_id=call.call_id, seq=seq)
    answer = logged_answer(call.record)
    task = index.get(messages_key(call.record.get("messages")))
    if answer is None or (task is None and judge is None):
        return pair.model_copy(update={"skipped": PairSkip.NO_CHECK})
    pair = pair.model_copy(update={"task_id": task.id if task else None})
    if canary.max_usd_per_day is not None and spent_today >= canary.max_usd_per_day:
        return pair.model_copy(update={"skipped": PairSkip.OVER_BUDGET})
    if over_daily(call):
        return pair.model_copy(update={"skipped": PairSkip.OVER_DAILY_BUDGET})
    ex, audit_id = asyncio.run(_replay(store, canary, entry, call, key))
    prompt, completion = ex.tokens()
    pair = pair.model_copy(
        update={"replay_audit_id": audit_id, "replay_usd": replay_usd(entry, prompt, completion, ex.duration_ms)}
    )
    if ex.error_class is not None or ex.acc is None:
        return pair.model_copy(update={"skipped": PairSkip.REPLAY_FAILED})
    if task is None:
        assert judge is not None  # no check and no judge returned above
        similarity = canary.judge_rubric is CanaryJudgeRubric.SIMILARITY
        judged = asyncio.run(
            (judge_similarity if similarity else judge_pair)(
                store, judge.entry, judge.headers, canary_id=canary.id, call_id=call.call_id,
                messages=call.record.get("messages"), baseline=ex.acc.answer(), candidate=answer,
                structured=canary.judge_structured,
            )
        )  # fmt: skip
        return pair.model_copy(
            update={
                "grader": PairGrader.SIMILARITY if similarity else PairGrader.JUDGE, "judge": judge.entry.name, "judge_result": judged.result.value,
                "judge_audit_ids": judged.audit_ids, "judge_usd": judged.usd, "judge_detail": judged.detail, "paired": judged.paired,
                "skipped": judged.skipped,
            }
        )  # fmt: skip
    b_outcome = graded(goldset, task, answer)
    a_outcome = graded(goldset, task, ex.acc.answer())
    paired = paired_outcome(b_outcome, a_outcome)
    return pair.model_copy(
        update={
            "candidate_outcome": b_outcome.value,
            "baseline_outcome": a_outcome.value,
            "paired": paired,
            "grader": PairGrader.CHECK,
            "skipped": None if paired is not None else PairSkip.NOT_GRADED,
        }
    )


def watch_once(
    store: Store,
    catalogue: Catalogue,
    canary: CanaryRecord,
    *,
    restart: Restart,
    by: str,
    environ: Mapping[str, str],
    replays_per_s: float = 5.0,
    max_pairs: int | None = None,
    budget: DailyBudget | None = None,
) -> WatchPass:
    """Pair B's requests logged since the canary's offset, then act; returns what it did.
    With `budget`, a replay that would exceed today's eval budget stops the replays (module docstring)."""
    result = WatchPass(canary, assess(canary, store.canary_pairs(canary.id)))
    if not canary.active:
        return result
    # A person changed the routes: the watch takes no step of its own until they are put back.
    refuse_hand_edit(store, canary, by or "canary watch")
    goldset = load_golden_set(canary.set_path)
    index = task_index(goldset)
    entry = catalogue.get(canary.baseline)
    key = environ.get(entry.key_env) if entry.key_env else None
    judge = None
    if canary.judge:
        judge_entry = catalogue.get(canary.judge)
        judge_key = environ.get(judge_entry.key_env) if judge_entry.key_env else None
        judge = Judge(judge_entry, key_headers(judge_key))
    seq = len(store.canary_pairs(canary.id))
    day = utc_now()[:10]
    spent = store.replay_usd_since(canary.id, day)
    offset, last_replay = canary.log_offset, 0.0

    def over_daily(call: LoggedCall) -> str | None:
        if budget is None or not budget.set or result.budget_stop:
            return result.budget_stop
        params = call.record.get("model_parameters")
        params = params if isinstance(params, dict) else {}
        cap = params.get("max_tokens") or params.get("max_completion_tokens") or 0
        prompt = estimated_message_tokens(call.record.get("messages") or [], call.record.get("tools"))
        usd = estimate_requests(entry.cost, 1, prompt, int(cap), 1).usd or 0.0
        if judge is not None and messages_key(call.record.get("messages")) not in index:
            calls = 1 if canary.judge_rubric is CanaryJudgeRubric.SIMILARITY else 2
            usd += estimated_judge_usd(judge.entry, call.record.get("messages") or [], int(cap) or 1024, calls)
        if not usd:
            return None
        now = datetime.now(UTC)
        over = limit_exceeded({canary.workload_id: usd}, budget=budget, store=store, catalogue=catalogue, now=now)
        if over:
            result.budget_stop = (
                f"replays stopped: the next replay's estimated spend ≤ {money(usd)} would exceed {over}"
            )
        return result.budget_stop

    for call in read_calls(canary.traffic_log, canary.log_offset):
        result.lines += 1
        offset = call.end_offset
        if not served_by(call.record, canary.alias, canary.candidate, shadow=canary.step < 0):
            continue
        result.candidate_requests += 1
        wait = last_replay + 1 / replays_per_s - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        last_replay = time.monotonic()
        pair = _pair(store, canary, goldset, index, entry, call, seq, key, spent, over_daily, judge)
        store.add_canary_pair(pair, offset)
        seq += 1
        spent += pair.replay_usd + pair.judge_usd
        result.new_pairs.append(pair)
        canary = canary.model_copy(update={"log_offset": offset})
        assessment = assess(canary, store.canary_pairs(canary.id))
        if assessment.move is Move.ROLL_BACK:  # at once: not one more request is read first
            result.canary = roll_back(store, catalogue, canary, assessment, restart=restart, by=by or "canary watch")
            result.assessment, result.change = (
                assess(result.canary, store.canary_pairs(canary.id)),
                CanaryChange.ROLLED_BACK,
            )
            result.assessment = assessment
            return result
        if max_pairs is not None and len(result.new_pairs) >= max_pairs:
            break
    if offset != canary.log_offset:
        store.set_canary_offset(canary.id, offset)
        canary = canary.model_copy(update={"log_offset": offset})
    result.canary = canary
    result.assessment = assess(canary, store.canary_pairs(canary.id))
    if result.assessment.move is Move.READY and canary.auto_advance:
        result.canary = advance(store, catalogue, canary, restart=restart, by=by or "canary watch", automatic=True)
        result.change = CanaryChange.PROMOTED if not result.canary.active else CanaryChange.ADVANCED
    return result
