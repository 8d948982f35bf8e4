"""Per-model figures: pass rate, blocks, latency, tokens, GPU memory, cost.

Every figure a user sees is computed here, once; the renderers only format it.

Words used below:
- a task's *status* is its outcome over all attempts (`vocabulary.task_outcome`): a
  person's `pass` or `fail` verdict when there is one (it replaces the scorer's outcome of a
  scored task: an *override*, counted apart); else `pass` when any attempt passed, `review`
  while a person has not decided, `fail`, or `error` when every attempt errored; `missing`
  when this run recorded no attempt for it;
- a *human* task is one whose scorer is `human` (from the golden set), or, when the set
  could not be read, one whose every attempt asked for review;
- an attempt that *measured nothing* (the endpoint failed: `store.NOT_MEASURED_CLASSES`) is
  left out of every figure; a task with no other attempt is `missing` (not done), and the
  reasons are counted apart (`not_measured`) for the caveat that says so;
- a task is *scored* when it is not human and its status is pass, fail or error: errors
  (a recorded outcome: the scorer failed, or the server rejected the request) count as not
  passed (and are shown separately); human tasks never enter the pass rate (their verdicts
  are counted apart: `Counts.human_passed`, `human_failed`);
- a task is *completed* when its status is `pass` (a person's pass included): the
  denominator of tokens and cost per completed task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.report.cost import Cost, cost_figure, refusal_reason, run_duration_s
from compare_tui.report.inputs import AttemptFacts, RunInput
from compare_tui.report.stats import Interval, Percentiles, percentiles, proportion_interval
from compare_tui.report.text_calls import TextCalls, text_calls
from compare_tui.vocabulary import (
    MISSING,
    GpuSource,
    ModelKind,
    Outcome,
    ReviewVerdict,
    RunStatus,
    TaskStatus,
    TextCall,
    measured,
    task_outcome,
)

STATUSES: tuple[TaskStatus, ...] = (*Outcome, MISSING)


@dataclass(frozen=True, slots=True)
class Block:
    """One task of one model, as a block in the grid."""

    task_id: str
    status: TaskStatus
    """`pass`, `fail`, `review` (needs a person), `error` or `missing` (not done)."""
    human: bool
    verdict: ReviewVerdict | None = None
    """The latest verdict a person gave (`pass`, `fail`, `skip`), if any."""
    detail: str = ""
    """Why, in the scorer's words, from the attempt that decided the status."""
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    """Timings of the attempt that decided the status (for the paired latency of the decision)."""
    scorer_status: TaskStatus | None = None
    """The status the attempts alone give, when a person's verdict replaced it (an override of
    a scored task's `pass`, `fail` or `error`); None otherwise."""
    text_call: TextCall | None = None
    """The deciding attempt's tool call written as text (`AttemptFacts.text_call`), if any."""
    tokens: int | None = None
    """Prompt + completion tokens over every attempt of the task (for the decision's paired Δ
    tokens); None when an attempt that generated an answer reported no usage."""

    @property
    def overridden(self) -> bool:
        """A person's verdict replaced the scorer's outcome of this (scored) task."""
        return self.scorer_status is not None


@dataclass(frozen=True, slots=True)
class Counts:
    """Tasks by status. Each task counts once, however many attempts it had."""

    passed: int
    failed: int
    review: int
    """Tasks still waiting for a person."""
    errored: int
    missing: int
    """Tasks of the set this run recorded nothing for."""
    human: int
    """Tasks scored by a person (excluded from the pass rate)."""
    human_decided: int
    """Human tasks with a pass or fail verdict."""
    human_passed: int
    """Human tasks a person passed (in `passed`, never in the pass rate)."""
    human_failed: int
    """Human tasks a person failed (in `failed`, never in the pass rate)."""
    overridden: int
    """Scored tasks whose outcome a person's verdict replaced (counted by the pass rate as the
    person decided)."""
    planned: int
    """Tasks the run set out to do."""
    attempts: int


@dataclass(frozen=True, slots=True)
class PassRate:
    """Share of scored tasks that passed, with its 95% interval (exact Clopper–Pearson, `stats.proportion_interval`)."""

    passed: int
    scored: int
    errored: int
    """Of the scored tasks, how many errored (counted as not passed)."""
    rate: float | None
    """`passed / scored`; None when no task was scored."""
    interval: Interval | None


@dataclass(frozen=True, slots=True)
class Latency:
    """TTFT and end-to-end time, one value per completed task (its passing attempt)."""

    ttft_ms: Percentiles
    e2e_ms: Percentiles
    includes_network: bool
    """True for hosted models: the time includes the network to the host."""
    ttft_values: tuple[float, ...] = ()
    """The values the TTFT percentiles are of, in task order (for the distributions)."""
    e2e_values: tuple[float, ...] = ()
    """The values the end-to-end percentiles are of, in task order."""


@dataclass(frozen=True, slots=True)
class Tokens:
    """Prompt and completion tokens per completed task, summed over every attempt."""

    prompt_per_task: float | None
    completion_per_task: float | None
    prompt_total: int
    completion_total: int
    attempts: int
    attempts_without_usage: int
    note: str | None = None


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """The GPU memory high-water mark of a self-served model, or why there is none."""

    applicable: bool
    """False for hosted models (the GPU is not on this machine)."""
    measured: bool
    peak_bytes: int | None
    """Peak device memory in use, summed over `devices` (whole device, not one process)."""
    baseline_bytes: int | None
    devices: int
    reason: str | None
    notes: tuple[str, ...] = ()
    source: str | None = None
    """Where it was read (`vocabulary.GpuSource`); None when the run recorded none."""
    host: str | None = None
    """The DCGM exporter read (`HOST:PORT`); None: this machine (NVML)."""
    device_names: tuple[str, ...] = ()
    """Each sampled GPU's name, in device order."""
    uuids: tuple[str, ...] = ()
    """Each sampled GPU's UUID, in device order: the report's device scope."""
    kv_cache_peak: float | None = None
    """vLLM's KV cache at its fullest during the run (0–1, `vllm:kv_cache_usage_perc`): the share of
    the cache vLLM reserved, not device memory; None for any other server or when unread."""


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """Everything shown in one model's row of a report."""

    run_id: str
    model_name: str
    label: str
    """The name shown: the model name, with the run id's start when two runs share a model."""
    model_kind: str | None
    """`local`, `hosted`, or None when the run did not record it."""
    provenance: str
    run_status: RunStatus
    completed: int
    pass_rate: PassRate
    counts: Counts
    blocks: tuple[Block, ...]
    """One per task of the report, in the report's task order."""
    latency: Latency
    tokens: Tokens
    gpu: GpuMemory
    cost: Cost
    missing: tuple[str, ...]
    """Required figures that could not be computed, each with its reason."""
    awaiting_review: tuple[str, ...]
    """Ids of the tasks still waiting for a person."""
    error_classes: tuple[tuple[str, int], ...]
    """How many measured attempts errored, by error class (most frequent first)."""
    not_measured: tuple[tuple[str, int], ...] = ()
    """Attempts that measured nothing (left out of every figure), by error class."""
    text_calls: TextCalls = TextCalls()
    """Tasks decided by a tool call written as text that the server did not parse."""


@dataclass(frozen=True, slots=True)
class RefusedRow:
    """A run that is not shown, and why."""

    run_id: str
    model_name: str
    label: str
    reason: str


def refusal(run_input: RunInput, label: str) -> RefusedRow | None:
    """The refusal of a run with no cost basis or no provenance label, or None."""
    run = run_input.run
    reason = refusal_reason(run.cost_basis)
    if reason is None and not run.provenance:
        reason = (
            "no provenance label: the run did not record whether its weights were verified; "
            "run the model again so that the check is made"
        )
    return RefusedRow(run.id, run.model_name, label, reason) if reason else None


def is_human(task_id: str, outcomes: Sequence[str], task_kinds: Mapping[str, str]) -> bool:
    """Scored by a person: the set says `human`, or (kind unknown) every attempt asked for review."""
    kind = task_kinds.get(task_id)
    if kind is not None:
        return kind == "human"
    return bool(outcomes) and all(outcome == Outcome.REVIEW for outcome in outcomes)


def model_figures(
    run_input: RunInput, label: str, task_ids: Sequence[str], task_kinds: Mapping[str, str]
) -> ModelFigures:
    """The figures of one (not refused) run over the report's tasks."""
    run = run_input.run
    kept = tuple(a for a in run_input.attempts if measured(a.outcome, a.error_class))
    by_task: dict[str, list[AttemptFacts]] = defaultdict(list)
    for attempt in kept:
        by_task[attempt.task_id].append(attempt)
    blocks, representative = [], []
    for task_id in task_ids:
        attempts = sorted(by_task.get(task_id, ()), key=lambda a: a.attempt)
        outcomes = [a.outcome for a in attempts]
        verdict = run_input.verdicts.get(task_id)
        status: TaskStatus = task_outcome(outcomes, verdict) if attempts else MISSING
        own: TaskStatus = task_outcome(outcomes) if attempts else MISSING
        # A verdict on a task that was waiting for a person decides it; on any other (scored)
        # task it is an override, which the block keeps the scorer's word for.
        scorer_status = own if status != own and own != Outcome.REVIEW else None
        passing = next((a for a in attempts if a.outcome == Outcome.PASS), None)
        # The attempt that decided the status: the (first) passing one, else the last with
        # that outcome (a fail after a timeout reads as the fail), else the last attempt.
        shown = passing or next((a for a in reversed(attempts) if a.outcome == status), None)
        shown = shown or (attempts[-1] if attempts else None)
        blocks.append(
            Block(
                task_id,
                status,
                is_human(task_id, outcomes, task_kinds),
                verdict,
                shown.detail if shown else "",
                shown.ttft_ms if shown else None,
                shown.e2e_ms if shown else None,
                scorer_status,
                shown.text_call if shown else None,
                _task_tokens(attempts),
            )
        )
        if status == Outcome.PASS:
            # The passing attempt, or for a person's pass the attempt they were shown (the one
            # awaiting review, else the last).
            representative.append(passing or next((a for a in attempts if a.outcome == Outcome.REVIEW), attempts[-1]))
    kind = run.model_entry.get("kind") if run.model_entry else None
    counts = _counts(blocks, run.task_count, len(kept))
    completed = counts.passed
    ttft = tuple(a.ttft_ms for a in representative if a.ttft_ms is not None)
    e2e = tuple(a.e2e_ms for a in representative if a.e2e_ms is not None)
    latency = Latency(
        percentiles(ttft), percentiles(e2e), includes_network=kind == ModelKind.HOSTED, ttft_values=ttft, e2e_values=e2e
    )
    tokens = _tokens(kept, completed)
    gpu = gpu_memory(run.gpu, kind)
    cost = cost_figure(run.cost_basis or {}, kept, completed, run_duration_s(run.started_at, run.finished_at))
    return ModelFigures(
        run_id=run.id,
        model_name=run.model_name,
        label=label,
        model_kind=kind,
        provenance=run.provenance or "",
        run_status=run.status,
        completed=completed,
        pass_rate=_pass_rate(blocks),
        counts=counts,
        blocks=tuple(blocks),
        latency=latency,
        tokens=tokens,
        gpu=gpu,
        cost=cost,
        missing=_missing(completed, latency, tokens, gpu, cost),
        awaiting_review=tuple(b.task_id for b in blocks if b.status == Outcome.REVIEW),
        error_classes=_error_classes(kept),
        not_measured=_error_classes(a for a in run_input.attempts if not measured(a.outcome, a.error_class)),
        text_calls=text_calls(blocks),
    )


def _task_tokens(attempts: Sequence[AttemptFacts]) -> int | None:
    if not attempts or any(a.usage_unreported for a in attempts):
        return None
    return sum((a.prompt_tokens or 0) + (a.completion_tokens or 0) for a in attempts)


def _counts(blocks: Sequence[Block], planned: int, attempts: int) -> Counts:
    tally = dict.fromkeys(STATUSES, 0)
    for block in blocks:
        tally[block.status] += 1
    humans = [b for b in blocks if b.human]
    return Counts(
        passed=tally[Outcome.PASS],
        failed=tally[Outcome.FAIL],
        review=tally[Outcome.REVIEW],
        errored=tally[Outcome.ERROR],
        missing=tally[MISSING],
        human=len(humans),
        human_decided=sum(1 for b in humans if b.status in (Outcome.PASS, Outcome.FAIL)),
        human_passed=sum(1 for b in humans if b.status == Outcome.PASS),
        human_failed=sum(1 for b in humans if b.status == Outcome.FAIL),
        overridden=sum(1 for b in blocks if b.overridden and not b.human),
        planned=planned,
        attempts=attempts,
    )


def _pass_rate(blocks: Sequence[Block]) -> PassRate:
    scored = [b for b in blocks if not b.human and b.status in (Outcome.PASS, Outcome.FAIL, Outcome.ERROR)]
    passed = sum(1 for b in scored if b.status == Outcome.PASS)
    errored = sum(1 for b in scored if b.status == Outcome.ERROR)
    rate = passed / len(scored) if scored else None
    return PassRate(passed, len(scored), errored, rate, proportion_interval(passed, len(scored)))


def _tokens(attempts: Sequence[AttemptFacts], completed: int) -> Tokens:
    prompt = sum(a.prompt_tokens for a in attempts if a.prompt_tokens is not None)
    completion = sum(a.completion_tokens for a in attempts if a.completion_tokens is not None)
    without = sum(1 for a in attempts if a.usage_unreported)
    note = None
    if without:
        note = (
            f"{without} of {len(attempts)} attempts reported no token usage (their tokens are "
            "not counted, so these figures are a lower bound)"
        )
    if completed == 0:
        return Tokens(None, None, prompt, completion, len(attempts), without, note)
    return Tokens(prompt / completed, completion / completed, prompt, completion, len(attempts), without, note)


def gpu_memory(gpu: Mapping[str, Any] | None, kind: str | None) -> GpuMemory:
    """The GPU memory figure of a run from what its sampler recorded (`RunRecord.gpu`)."""
    applicable = kind != ModelKind.HOSTED
    if not gpu:
        return GpuMemory(applicable, False, None, None, 0, None)
    devices = [d for d in gpu.get("devices") or () if isinstance(d, Mapping)]
    notes = tuple(str(n) for n in gpu.get("notes") or ())
    source = str(gpu["source"]) if gpu.get("source") else None
    host = str(gpu["host"]) if gpu.get("host") else None
    read = gpu.get("kv_cache")
    kv_cache: Mapping[str, Any] = read if isinstance(read, Mapping) else {}
    kv_peak = float(kv_cache["peak"]) if isinstance(kv_cache.get("peak"), (int, float)) else None
    if not gpu.get("measured"):
        return GpuMemory(
            applicable,
            False,
            None,
            None,
            len(devices),
            gpu.get("reason") or None,
            notes,
            source=source,
            host=host,
            kv_cache_peak=kv_peak,
        )
    peaks = [int(d["peak_bytes"]) for d in devices if d.get("peak_bytes") is not None]
    bases = [int(d["baseline_bytes"]) for d in devices if d.get("baseline_bytes") is not None]
    return GpuMemory(
        applicable,
        True,
        sum(peaks) if peaks else None,
        sum(bases) if bases else None,
        len(devices),
        gpu.get("reason") or None,
        notes,
        # A run recorded before sources were (NVML was the only one) read as NVML.
        source=source or GpuSource.NVML,
        host=host,
        device_names=tuple(str(d.get("name") or "") for d in devices),
        uuids=tuple(str(d.get("uuid") or "") for d in devices),
        kv_cache_peak=kv_peak,
    )


def _error_classes(attempts: Iterable[AttemptFacts]) -> tuple[tuple[str, int], ...]:
    tally: dict[str, int] = defaultdict(int)
    for attempt in attempts:
        if attempt.outcome == Outcome.ERROR:
            tally[attempt.error_class or "unclassified"] += 1
    return tuple(sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def _missing(completed: int, latency: Latency, tokens: Tokens, gpu: GpuMemory, cost: Cost) -> tuple[str, ...]:
    missing = []
    if completed and latency.e2e_ms.n == 0:
        missing.append("latency: no timing was recorded for any completed task")
    if completed and tokens.attempts and tokens.attempts_without_usage == tokens.attempts:
        missing.append("tokens: the server reported no token usage for any attempt")
    if completed and cost.per_task is None:
        missing.append(f"cost: {cost.note}")
    if gpu.applicable and not gpu.measured and not gpu.reason:
        missing.append("GPU memory: not measured, and the run recorded no reason")
    elif gpu.applicable and gpu.measured and gpu.peak_bytes is None:
        missing.append("GPU memory: measured, but no peak was recorded")
    return tuple(missing)
