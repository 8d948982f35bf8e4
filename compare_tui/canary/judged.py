"""A pair no golden-set check grades, graded by a pairwise judge with position-bias control.

The judge machinery of `compare-tui judge` is reused whole: its prompt
(`judge.prompt.templates.pair_messages`, here with the canary's built-in `direct` rubric), its one
call (`judge.run.call.ask_judge`: the endpoint's one chat client, the engine's retry policy),
its reading of a reply (`judge.run.runner.to_judgement`) and its position-bias control
(`judge.pair.figures.combine`): the judge is asked twice, A's answer shown first and then B's
first; a side wins the pair only when it wins both orders, two ties are a tie, and orders that
disagree make the pair `inconsistent`.

As paired evidence, on the same scale as a check's pass/fail (B − A ∈ {−1, 0, +1}): B
preferred in both orders is +1 (as "B passes, A fails"), A preferred in both is −1, a tie in
both is 0 (as "both pass, or both fail"). An inconsistent pair is a tie in `compare-tui judge`'s
win rate, but it is **no evidence** here: fed to the verdict as 0 it would let a judge that
picks by position walk B to `no worse` on noise, so it is left out (`PairSkip.JUDGE_INCONSISTENT`),
as is a pair whose judge call gave no verdict. Each pair's value depends on that pair alone, so
the judged part of the verdict's stream is the pairs the judge decided consistently, and the
anytime-valid guarantee holds for their mean: how much more often the judge prefers B's answer
than A's on such requests (docs/canary.md, "Traffic with no check").

With `--judge-rubric similarity` the judge instead grades B's answer alone against A's on
`compare-tui grade`'s 1–5 similarity rubric (one call; no position to be biased by): 4 or 5 (the
same result) is 0, less is −1 (B departed from A's result), no grade is no evidence. It can
never show B better, only as good as A or worse: a drop-in check, for traffic where A's answer
is the one wanted.

Each judge request is a row of the audit ledger (`task_id` `canary:<canary id>:<call id>:judge-ab`
and `…:judge-ba`, or `…:judge-single` for a similarity grade), priced at the judge's cost basis: it counts toward `--max-usd-per-day` and the
daily eval budget as a replay does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from compare_tui.canary.evidence import replay_usd
from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint.client import chat_client
from compare_tui.engine.audit import audit_row
from compare_tui.engine.estimate import estimate_requests
from compare_tui.engine.exchange import Exchange
from compare_tui.engine.request import estimated_message_tokens
from compare_tui.judge.evaluator.load import DEFAULT_PASS_AT
from compare_tui.judge.grade.scale import load_scale_rubric, scale_messages
from compare_tui.judge.grade.scale import response_format as scale_response_format
from compare_tui.judge.pair.figures import PairResult, combine
from compare_tui.judge.prompt.answers import render_answer
from compare_tui.judge.prompt.rubric import Rubric
from compare_tui.judge.prompt.templates import PAIR_VERDICTS, ResponseFormat, pair_messages, response_format
from compare_tui.judge.run.call import JudgeSettings, ask_judge
from compare_tui.judge.run.runner import JudgeJob, to_judgement
from compare_tui.scoring.result import Answer
from compare_tui.store import Store
from compare_tui.store.judgements import JudgementRecord, JudgingKind, JudgingRecord, RubricMode
from compare_tui.vocabulary import PairSkip

CANARY_RUBRIC = Rubric(
    "The better answer does what the request asks: correct, complete, and in the form the request "
    "wants. Wording, politeness and length do not matter; a wrong, missing or refused result does.",
    RubricMode.DIRECT,
    "built-in canary",
)
"""What the judge is asked to apply to live traffic: there is no expected outcome to compare with."""
JUDGE_SETTINGS = JudgeSettings(concurrency=2)
"""As `compare-tui judge` asks (temperature 0, 256 tokens), both orders at once."""
SIMILAR_FROM = DEFAULT_PASS_AT
"""A similarity grade from which B's answer counts as close to A's (4: the same result, a minor
difference in detail), as a 1–5 grader passes an answer elsewhere."""
POINTS = {PairResult.CANDIDATE: 1, PairResult.TIE: 0, PairResult.BASELINE: -1}
"""B − A of a pair the judge decided in both orders alike."""


@dataclass(frozen=True)
class JudgedPair:
    """The judge's result on one pair over both orders, its audit rows, what it cost, and each
    order's verdict or why it gave none (`detail`)."""

    result: PairResult
    audit_ids: tuple[int, ...]
    usd: float
    detail: str = ""

    @property
    def paired(self) -> int | None:
        """B − A (+1, 0, −1); None when the pair is no evidence (inconsistent, or a call failed)."""
        return POINTS.get(self.result)

    @property
    def skipped(self) -> PairSkip | None:
        if self.result is PairResult.INCONSISTENT:
            return PairSkip.JUDGE_INCONSISTENT
        return None if self.paired is not None else PairSkip.JUDGE_FAILED


def judge_task_id(canary_id: str, call_id: str, ordering: str) -> str:
    """The audit row's `task_id` of one judge request: which canary, which logged request, which order."""
    return f"canary:{canary_id}:{call_id}:judge-{ordering}"


def request_text(messages: Any) -> str:
    """The logged request as the judge reads it: each message with its role (as `task_text` writes a task's)."""
    lines = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        lines.append(f"[{message.get('role')}] {content or ''}".rstrip())
    return "\n".join(lines)


def canary_rubric(structured: bool) -> Rubric:
    """The canary's rubric, its replies constrained to a JSON verdict or not."""
    return replace(CANARY_RUBRIC, structured=structured)


def judge_jobs(
    call_id: str, request: str, baseline: Answer, candidate: Answer, *, structured: bool = False
) -> list[JudgeJob]:
    """The two calls: `ab` shows A's (the baseline's) answer first, `ba` shows B's first."""
    base, cand = render_answer(baseline), render_answer(candidate)
    rubric = canary_rubric(structured)
    return [
        JudgeJob(call_id, "ab", pair_messages(rubric, request, None, base, cand)),
        JudgeJob(call_id, "ba", pair_messages(rubric, request, None, cand, base)),
    ]


def _detail(judgement: JudgementRecord) -> str:
    said = judgement.verdict if judgement.verdict is not None else f"no verdict ({judgement.error})"
    return f"{judgement.ordering}: {said}"


def estimated_judge_usd(entry: ModelEntry, messages: Sequence[Any], answer_tokens: int, calls: int = 2) -> float:
    """An upper bound on the judge's calls for one request (two pairwise, one similarity grade):
    the request and both answers (each at most `answer_tokens`) in each prompt, each reply at
    `max_tokens`."""
    prompt = estimated_message_tokens(list(messages)) + 2 * answer_tokens + 200
    return estimate_requests(entry.cost, calls, calls * prompt, JUDGE_SETTINGS.max_tokens, 1).usd or 0.0


@dataclass
class _Asked:
    judgements: list[JudgementRecord]
    audit_ids: tuple[int, ...]
    usd: float


async def _ask(
    store: Store, entry: ModelEntry, headers: dict[str, str], judging: JudgingRecord, canary_id: str,
    jobs: list[JudgeJob], constrain: ResponseFormat | None,
) -> _Asked:  # fmt: skip
    """Ask the judge each of `jobs` at once; every request (retries too) an audit row, priced."""
    audit_ids: list[int] = []
    spent = [0.0]

    def audited(job: JudgeJob) -> Any:
        def record(ex: Exchange) -> None:
            task_id = judge_task_id(canary_id, job.task_id, job.ordering)
            row = store.record_audit(audit_row(ex, endpoint=entry.endpoint, model=entry.name, task_id=task_id))
            audit_ids.append(int(row.id or 0))
            spent[0] += replay_usd(entry, *ex.tokens(), ex.duration_ms)

        return record

    async with chat_client(timeout_s=JUDGE_SETTINGS.timeout_s, concurrency=JUDGE_SETTINGS.concurrency) as client:
        replies = await asyncio.gather(
            *(
                ask_judge(
                    client, entry, headers, job.messages, JUDGE_SETTINGS, on_exchange=audited(job),
                    response_format=constrain,
                )
                for job in jobs
            )
        )  # fmt: skip
    judgements = [to_judgement(judging, job, reply) for job, reply in zip(jobs, replies, strict=True)]
    return _Asked(judgements, tuple(sorted(audit_ids)), spent[0])


def _judging(kind: JudgingKind, canary_id: str, entry: ModelEntry, rubric: Rubric) -> JudgingRecord:
    # Never stored (a judging belongs to runs): it carries what `to_judgement` reads a reply by.
    return JudgingRecord(
        kind=kind, run_id=f"canary:{canary_id}", judge_model=entry.name, rubric_digest=rubric.digest,
        mode=rubric.mode, reply_form=rubric.reply_form,
    )  # fmt: skip


async def judge_pair(
    store: Store,
    entry: ModelEntry,
    headers: dict[str, str],
    *,
    canary_id: str,
    call_id: str,
    messages: Any,
    baseline: Answer,
    candidate: Answer,
    structured: bool = False,
) -> JudgedPair:
    """Ask the judge both orders of one pair; every request (retries too) an audit row."""
    judging = _judging("pair", canary_id, entry, canary_rubric(structured))
    jobs = judge_jobs(call_id, request_text(messages), baseline, candidate, structured=structured)
    asked = await _ask(
        store, entry, headers, judging, canary_id, jobs, response_format(PAIR_VERDICTS) if structured else None
    )
    ab, ba = asked.judgements
    return JudgedPair(combine(ab, ba), asked.audit_ids, asked.usd, f"{_detail(ab)}; {_detail(ba)}")


async def judge_similarity(
    store: Store,
    entry: ModelEntry,
    headers: dict[str, str],
    *,
    canary_id: str,
    call_id: str,
    messages: Any,
    baseline: Answer,
    candidate: Answer,
    structured: bool = False,
) -> JudgedPair:
    """Grade B's answer against A's on the 1–5 similarity rubric (`grade --rubric similarity`'s):
    as close (`SIMILAR_FROM` or more) is a `tie` (B − A = 0), less is `baseline` (−1, B departed
    from A's result), no grade is `failed`. One call, one audit row (retries too)."""
    rubric = load_scale_rubric("similarity", structured=structured)
    messages_ = scale_messages(rubric, request_text(messages), render_answer(candidate), render_answer(baseline))
    job = JudgeJob(call_id, "single", messages_)
    asked = await _ask(
        store, entry, headers, _judging("scale", canary_id, entry, rubric), canary_id, [job],
        scale_response_format() if structured else None,
    )  # fmt: skip
    (graded,) = asked.judgements
    if graded.grade is None:
        result = PairResult.FAILED
    else:
        result = PairResult.TIE if graded.grade >= SIMILAR_FROM else PairResult.BASELINE
    detail = f"grade {graded.grade}" if graded.grade is not None else f"no grade ({graded.error})"
    return JudgedPair(result, asked.audit_ids, asked.usd, detail)
