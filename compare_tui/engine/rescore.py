"""Scoring a stored run's answers again with the set's current scorers (`compare-tui rescore`).

No request reaches any model: the answers are the source run's, read from the store, and the
new run gets no audit row (the audit ledger records requests, and none is made). Callers can
rely on:
- a refusal (`RescoreRefusedError`, exit 2) before anything is written when a task's input
  changed since the answers were generated (its `input_digest` differs from the one the source
  run recorded), when the set lost or gained tasks, or when the source run cannot prove its
  inputs (made before per-task digests were recorded, and its set's digest changed since);
- otherwise a new run with the source's answers, timings, tokens and statuses, each measured
  attempt scored again (an attempt that measured nothing stays as it was), the source's
  latest human verdicts carried over, and `rescore` naming the source run, when its answers
  were generated, the scorers' digest and the tasks whose outcome moved;
- a rescore under which no attempt's outcome moves writes nothing (no run, no comparison: the
  store's latest run stays what it was) and says so (`Rescored.run` is None): the same answers
  with the same outcomes are not a new measurement, and a copy would read as a repeat;
- `rescore_comparison` does that for each run of a comparison and links the new runs in a new
  comparison with the same baseline (nothing at all when no run's outcomes moved).

A rescored run is not a repeat of its source: the answers, timings and tokens are the
source's. It is marked wherever runs are listed (`runs list`, the report's `rescored`
caveat) and experiments never hold one (`experiment.selection`).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.goldset.digest import input_digest, scorers_digest
from compare_tui.goldset.models import GoldenSet, Task
from compare_tui.scoring import Answer, ScoreResult, ToolCall
from compare_tui.scoring.executor import LocalScorers, ScoreItem
from compare_tui.store import RunRecord, RunStatus, Store
from compare_tui.store.records import AttemptRecord, ComparisonRecord, ReviewRecord, new_run_id, utc_now
from compare_tui.vocabulary import FINISHED_STATUSES, measured, task_outcome

_LISTED = 8


class RescoreRefusedError(CompareTuiError):
    """Nothing was rescored: the answers cannot be scored against the set as it is now."""


@dataclass(frozen=True)
class Rescored:
    run: RunRecord | None
    """The new run; None when no attempt's outcome moved, so nothing was written."""
    source: RunRecord
    changed: list[dict[str, str]]
    """`{"task", "from", "to"}` per task whose outcome moved, in task order."""
    rescored_attempts: int
    """Attempts whose outcome or score detail differs from the source's."""
    moved_attempts: int = 0
    """Attempts whose outcome differs from the source's (none: nothing written)."""


@dataclass(frozen=True)
class _Plan:
    """A rescore computed, not yet written."""

    run: RunRecord
    source: RunRecord
    attempts: list[AttemptRecord]
    old: list[AttemptRecord]
    reviews: dict[str, ReviewRecord]
    changed: list[dict[str, str]]

    @property
    def moved(self) -> int:
        return sum(1 for a, b in zip(self.old, self.attempts) if a.outcome != b.outcome)

    def outcome(self, run: RunRecord | None) -> Rescored:
        detail = sum(
            1 for a, b in zip(self.old, self.attempts) if a.outcome != b.outcome or a.score_detail != b.score_detail
        )
        return Rescored(run, self.source, self.changed, detail, self.moved)


def _names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")


def check_inputs(source: RunRecord, goldset: GoldenSet) -> None:
    """Raise `RescoreRefusedError` unless every task of `goldset` sends what it sent in `source`."""
    if goldset.manifest.workload_id != source.goldset_id:
        raise RescoreRefusedError(
            f"run {source.id} ran workload {source.goldset_id!r}, the set at {goldset.root} is "
            f"{goldset.manifest.workload_id!r}; give the run's own set with --set"
        )
    if source.task_inputs is None:
        if goldset.digest == source.goldset_digest:
            return
        raise RescoreRefusedError(
            f"run {source.id} was made before compare-tui recorded each task's input, and its set changed since "
            f"(digest {source.goldset_digest[:19]}… ≠ {goldset.digest[:19]}…), so it cannot tell whether the answers "
            "still answer the same inputs; run the set again instead"
        )
    now = {task.id: input_digest(task) for task in goldset.tasks}
    changed = [t for t in now if t in source.task_inputs and source.task_inputs[t] != now[t]]
    added = [t for t in now if t not in source.task_inputs]
    removed = [t for t in source.task_inputs if t not in now]
    problems = []
    if changed:
        problems.append(
            f"the input of {len(changed)} task(s) changed since the answers were generated: {_names(changed)}"
        )
    if added:
        problems.append(f"{len(added)} task(s) were added and have no answers: {_names(added)}")
    if removed:
        problems.append(f"{len(removed)} task(s) of the run are no longer in the set: {_names(removed)}")
    if problems:
        raise RescoreRefusedError(
            f"run {source.id} cannot be rescored with the set at {goldset.root}: "
            + "; ".join(problems)
            + ". Rescoring changes only scorers and expected outcomes; run the set again for changed tasks"
        )


def _scorers_digest(goldset: GoldenSet) -> str:
    forms: dict[str, Any] = {}
    for task in goldset.tasks:
        spec = goldset.scorer_for(task)
        forms[task.id] = {
            "scorer": spec.model_dump(mode="json", by_alias=True),
            "expected": task.expected.model_dump(mode="json", by_alias=True, exclude_none=True),
        }
    return scorers_digest(forms, goldset.files)


def _answer(attempt: AttemptRecord) -> Answer:
    calls = tuple(
        ToolCall(name=str(c.get("name", "")), arguments=str(c.get("arguments", "")), id=c.get("id"))
        for c in attempt.tool_calls
    )
    return Answer(text=attempt.answer_text, tool_calls=calls, reasoning=attempt.reasoning)


def _rescorable(attempt: AttemptRecord) -> bool:
    """An attempt whose answer a scorer decided (not one whose request or scorer measured nothing)."""
    return measured(str(attempt.outcome), attempt.error_class) and attempt.error_class is None


def _score_all(
    attempts: Sequence[AttemptRecord], tasks: dict[str, Task], goldset: GoldenSet
) -> dict[tuple[str, int], ScoreResult]:
    """Every rescorable attempt's new result, by (task id, attempt), scored through the executor
    seam (command scorers as many at once as this machine has cores)."""
    items = [
        ScoreItem(tasks[a.task_id], a.attempt, _answer(a), goldset.scorer_for(tasks[a.task_id]))
        for a in attempts
        if _rescorable(a)
    ]
    executor = LocalScorers()

    async def collect() -> dict[tuple[str, int], ScoreResult]:
        found = {}
        async for scored in executor.score_batch(goldset, items):
            assert scored.result is not None  # this machine always runs its scorers
            found[(scored.item.task.id, scored.item.attempt)] = scored.result
        return found

    try:
        return asyncio.run(collect())
    finally:
        executor.close()


def _rescored_attempt(attempt: AttemptRecord, result: ScoreResult | None, run_id: str) -> AttemptRecord:
    data = attempt.model_dump()
    data.update(id="", run_id=run_id)
    if result is not None:
        notes = attempt.score_data.get("notes")
        data.update(
            outcome=result.outcome,
            score_detail=result.detail,
            score_data=result.data | ({"notes": notes} if notes else {}),
            isolation=result.isolation,
        )
    return AttemptRecord.model_validate(data)


def _outcomes(attempts: Sequence[AttemptRecord], verdicts: dict[str, str]) -> dict[str, str]:
    by_task: dict[str, list[str]] = defaultdict(list)
    for a in attempts:
        if measured(str(a.outcome), a.error_class):
            by_task[a.task_id].append(str(a.outcome))
    return {t: str(task_outcome(o, verdicts.get(t))) for t, o in by_task.items()}


def rescore_run(store: Store, source: RunRecord, goldset: GoldenSet, *, comparison_id: str | None = None) -> Rescored:
    """Score `source`'s answers again with `goldset`'s scorers and store the result as a new
    run, unless no attempt's outcome moved (then nothing is written and `run` is None)."""
    plan = _plan(store, source, goldset, comparison_id)
    if not plan.moved:
        return plan.outcome(None)
    return plan.outcome(_write(store, plan))


def _plan(store: Store, source: RunRecord, goldset: GoldenSet, comparison_id: str | None) -> _Plan:
    """The rescored run and its attempts, computed without writing anything."""
    if source.status not in FINISHED_STATUSES:
        raise RescoreRefusedError(
            f"run {source.id} is {source.status}; rescore a finished run (resume it first: compare-tui run --resume {source.id})"
        )
    if source.rescore is not None and source.rescore.get("source_run"):
        origin = store.get_run(str(source.rescore["source_run"]))
        source_answers_at = origin.started_at
    else:
        source_answers_at = source.started_at
    check_inputs(source, goldset)
    tasks = {task.id: task for task in goldset.tasks}
    old = store.attempts_for_run(source.id)
    reviews = store.reviews_for_run(source.id)
    verdicts = {t: str(r.verdict) for t, r in reviews.items()}
    scored_at = utc_now()
    run = source.model_copy(
        update={
            "id": new_run_id(),
            "created_at": scored_at,
            "status": RunStatus.PENDING,
            "goldset_name": goldset.manifest.name,
            "goldset_version": goldset.manifest.version,
            "goldset_digest": goldset.digest,
            "goldset_path": str(goldset.root),
            "comparison_id": comparison_id,
        }
    )
    results = _score_all(old, tasks, goldset)
    new = [_rescored_attempt(a, results.get((a.task_id, a.attempt)), run.id) for a in old]
    before, after = _outcomes(old, verdicts), _outcomes(new, verdicts)
    changed = [
        {"task": t, "from": before[t], "to": after[t]} for t in tasks if t in before and before[t] != after.get(t)
    ]
    rescore = {
        "source_run": source.id,
        "answers_generated": {
            "started_at": source_answers_at or source.created_at,
            "finished_at": source.finished_at,
        },
        "scored_at": scored_at,
        "scorers_digest": _scorers_digest(goldset),
        "set_digest_before": source.goldset_digest,
        "changed": changed,
        "requests": 0,
    }
    run = run.model_copy(update={"rescore": json.loads(json.dumps(rescore))})
    return _Plan(run, source, new, old, reviews, changed)


def _write(store: Store, plan: _Plan, comparison_id: str | None = None) -> RunRecord:
    """Store a planned rescore: the run, its attempts and the source's carried-over reviews."""
    run, source = plan.run, plan.source
    if comparison_id is not None:
        run = run.model_copy(update={"comparison_id": comparison_id})
    store.create_run(RunRecord.model_validate(run.model_dump()))
    store.record_attempts(plan.attempts)
    for task_id, review in plan.reviews.items():
        note = (review.note + " " if review.note else "") + f"(carried over from run {source.id})"
        store.add_review(
            ReviewRecord(
                run_id=run.id,
                task_id=task_id,
                verdict=review.verdict,
                note=note,
                reviewer=review.reviewer,
                at=review.at,
            )
        )
    # The source's status and its start and finish stay: they say when the answers were made.
    return store.update_run(run.id, status=source.status)


def rescore_comparison(
    store: Store, comparison: ComparisonRecord, load_set: Callable[[RunRecord], GoldenSet]
) -> tuple[ComparisonRecord | None, list[Rescored]]:
    """Rescore every run of `comparison` (each checked and scored before any is written) and
    link the new runs in a new comparison with the same baseline and order. When no run's
    outcomes moved, nothing is written: the comparison is None and every `Rescored.run` None."""
    sources = [store.get_run(run_id) for run_id in comparison.run_ids]
    sets = [load_set(source) for source in sources]
    for source, goldset in zip(sources, sets):
        check_inputs(source, goldset)
    plans = [_plan(store, source, goldset, None) for source, goldset in zip(sources, sets)]
    if not any(plan.moved for plan in plans):
        return None, [plan.outcome(None) for plan in plans]
    linked = ComparisonRecord(name=(comparison.name + " (rescored)").strip(), run_ids=[], baseline=comparison.baseline)
    store.create_comparison(linked)
    done = [plan.outcome(_write(store, plan, linked.id)) for plan in plans]
    final = store.set_comparison_runs(linked.id, [r.run.id for r in done if r.run is not None])
    if comparison.baseline is not None:
        final = store.set_comparison_baseline(linked.id, comparison.baseline)
    return final, done
