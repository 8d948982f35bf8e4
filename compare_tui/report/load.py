"""The report's one reader: store rows and golden sets → `ReportInputs`. Everything else in
`compare_tui.report` is pure.

A reference is a comparison id, a run id (either may be a unique prefix), or `latest` (the
newest comparison; the newest run when the store has no comparison).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from compare_tui.errors import CompareTuiError
from compare_tui.report.inputs import AttemptFacts, ReportInputs, RunInput, prompt_ms, text_call_kind
from compare_tui.store import AmbiguousIdError, RunNotFoundError, Store
from compare_tui.store.holders import live_lease
from compare_tui.store.records import ComparisonRecord, RunRecord
from compare_tui.vocabulary import BaselineSource, TextCall

if TYPE_CHECKING:
    from compare_tui.goldset import GoldenSet

GoldsetRead: TypeAlias = "GoldenSet | Exception"
"""A golden set the report's loader read (`load_report_inputs(…, goldsets=…)`, by its recorded
path): the set, or the error that kept it unread."""

# Only what the figures use: validating whole attempt records (answers, tool calls, score
# data, timestamps) costs more than the figures' own work, row by row, on a large report
# (bench/bench_report.py measures both ways side by side).
_FACT_COLUMNS = (
    "task_id",
    "attempt",
    "outcome",
    "ttft_ms",
    "e2e_ms",
    "prompt_tokens",
    "completion_tokens",
    "usage_missing",
    "isolation",
    "error_class",
    "score_detail",
    "score_data",
    "error",
    "server_timings",
    "cached_tokens",
)


class ReportNotFoundError(CompareTuiError, LookupError):
    """The reference names no comparison or run (the message says what to do)."""


def load_report_inputs(store: Store, ref: str, *, goldsets: dict[str, GoldsetRead] | None = None) -> ReportInputs:
    """The inputs of the report named by `ref`. Raises `ReportNotFoundError` when there is
    nothing to report on, or when a prefix is ambiguous.

    `goldsets`, when given, receives each golden set read (by its recorded path; the error when
    it could not be read), so a caller that needs the tasks too (`publish`) reads them once."""
    comparison_id, name, run_ids = _resolve(store, ref.strip())
    runs = tuple(_run_input(store, store.get_run_exact(run_id)) for run_id in run_ids)
    read: dict[str, GoldsetRead] = {} if goldsets is None else goldsets
    kinds, task_ids, caveats, notes, margin = _golden_sets([r.run for r in runs], read)
    baseline, source = _baseline(store, comparison_id, [r.run for r in runs])
    comparison = store.get_comparison(comparison_id) if comparison_id is not None else None
    recorded = comparison.margin_pp if comparison is not None else None
    return ReportInputs(
        runs=runs,
        task_kinds=kinds,
        task_ids=task_ids,
        task_traces=_traces(read.values()),
        manifest_caveats=caveats,
        notes=notes,
        comparison_id=comparison_id,
        comparison_name=name,
        baseline=baseline,
        baseline_source=source,
        # The margin recorded before the data is the comparison's; the manifest's only stands in
        # for comparisons made before margins were recorded.
        margin_pp=margin if recorded is None else None,
        recorded_margin_pp=recorded,
        skipped=comparison.skipped if comparison is not None else {},
        sequential=comparison.sequential if comparison is not None else None,
    )


def _baseline(store: Store, comparison_id: str | None, runs: list[RunRecord]) -> tuple[str | None, BaselineSource]:
    """The comparison's named baseline; else the workload's promoted one when it is among the
    runs (a report of one run has no baseline to be judged against)."""
    if comparison_id is not None:
        named = store.get_comparison(comparison_id).baseline
        if named:
            return named, BaselineSource.NAMED
    if len(runs) < 2 or not runs[0].goldset_id:
        return None, BaselineSource.NAMED
    current = store.current_baseline(runs[0].goldset_id)
    if current is not None and any(run.model_name == current.model for run in runs):
        return current.model, BaselineSource.WORKLOAD
    return None, BaselineSource.NAMED


def attempt_facts(store: Store, run_id: str) -> tuple[AttemptFacts, ...]:
    """A run's attempts, reduced to what the figures use, ordered by task then attempt."""
    rows = store.attempt_columns(run_id, _FACT_COLUMNS)
    return tuple(
        AttemptFacts(
            task_id=row["task_id"],
            attempt=row["attempt"],
            outcome=row["outcome"],
            ttft_ms=row["ttft_ms"],
            e2e_ms=row["e2e_ms"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            usage_missing=row["usage_missing"],
            server_ttft_ms=prompt_ms(json.loads(row["server_timings"])) if row["server_timings"] else None,
            isolation=json.loads(row["isolation"]) if row["isolation"] else None,
            error_class=row["error_class"],
            detail=row["score_detail"] or row["error"] or "",
            text_call=_text_call(row["score_data"]),
            cached_tokens=row["cached_tokens"],
        )
        for row in rows
    )


def _text_call(score_data: str | None) -> TextCall | None:
    # Parsed only where a call written as text was recorded: most rows have none, and a
    # 10,000-row report must not decode every attempt's scorer data.
    if not score_data or '"written_as_text"' not in score_data:
        return None
    return text_call_kind(json.loads(score_data))


def _run_input(store: Store, run: RunRecord) -> RunInput:
    verdicts = {task: review.verdict for task, review in store.reviews_for_run(run.id).items()}
    lease = live_lease(store, run.id)
    return RunInput(
        run=run,
        attempts=attempt_facts(store, run.id),
        verdicts=verdicts,
        running=lease.running_note() if lease is not None else None,
    )


def _resolve(store: Store, ref: str) -> tuple[str | None, str, list[str]]:
    """(comparison id or None, comparison name, run ids) for a reference."""
    if ref == "latest":
        comparisons = store.list_comparisons()
        if comparisons:
            return _comparison_runs(comparisons[0], latest=True)
        latest = store.list_runs(limit=1)
        if not latest:
            raise ReportNotFoundError(
                f"the store at {store.path} has no runs yet: start one with `compare-tui run SET --model NAME`"
            )
        return None, "", [latest[0].id]
    found: dict[str, ComparisonRecord | RunRecord] = {}
    problems = []
    for noun, lookup in (("comparison", store.get_comparison), ("run", store.get_run)):
        try:
            found[noun] = lookup(ref)
        except AmbiguousIdError as exc:
            problems.append(str(exc))
        except RunNotFoundError:
            pass
    exact = [noun for noun, record in found.items() if record.id == ref]
    if exact:
        chosen = exact[0]
    elif len(found) == 1 and not problems:
        chosen = next(iter(found))
    elif found or problems:
        raise ReportNotFoundError(
            f"{ref!r} is the start of more than one comparison or run id; type more of it"
            + (f" ({'; '.join(problems)})" if problems else "")
        )
    else:
        raise ReportNotFoundError(
            f"no comparison or run with id {ref!r} in the store at {store.path}: "
            "`compare-tui runs list` shows the runs, or use `latest`"
        )
    record = found[chosen]
    if isinstance(record, RunRecord):
        return None, "", [record.id]
    return _comparison_runs(record)


def _comparison_runs(comparison: ComparisonRecord, *, latest: bool = False) -> tuple[str, str, list[str]]:
    if not comparison.run_ids:
        # A session records its comparison first and links the runs once every model is
        # prepared (endpoints probed, weights hashed): until then it has none to show.
        started = comparison.created_at[:19].replace("T", " ")
        named = f"{comparison.id}" + (f" ({comparison.name})" if comparison.name else "")
        if latest:
            raise ReportNotFoundError(
                f"the latest comparison, {named}, is starting (since {started} UTC): its models are "
                "being prepared and no run is linked yet; report again in a moment, or name an earlier "
                "comparison or run (`compare-tui runs list`)"
            )
        raise ReportNotFoundError(
            f"comparison {named} has no runs to report on: it is starting (since {started} UTC), "
            "or its start was stopped before its models were prepared"
        )
    return comparison.id, comparison.name, list(comparison.run_ids)


def _traces(goldsets: Iterable[GoldsetRead]) -> dict[str, tuple[str, int, int]]:
    """task id → (run, step, of) of the traced tasks in the golden sets read (errors skipped)."""
    from compare_tui.goldset import GoldenSet

    traces: dict[str, tuple[str, int, int]] = {}
    for goldset in goldsets:
        if isinstance(goldset, GoldenSet):
            for task in goldset.tasks:
                if task.trace is not None and task.id not in traces:
                    traces[task.id] = (task.trace.run, task.trace.step, task.trace.of)
    return traces


def _golden_sets(
    runs: list[RunRecord], read: dict[str, GoldsetRead]
) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...], tuple[str, ...], float | None]:
    """Scorer kinds, task order, manifest caveats, loader notes and the `[decision]` margin
    from the runs' golden sets."""
    from compare_tui.goldset import GoldenSetError, load_golden_set

    kinds: dict[str, str] = {}
    task_ids: list[str] = []
    caveats: list[str] = []
    notes: list[str] = []
    margin: float | None = None
    if runs and not any(run.goldset_path for run in runs):
        notes.append(
            "The runs did not record where their golden set is, so its caveats are not shown and "
            "tasks scored by a person are recognised from their attempts only."
        )
    for path in dict.fromkeys(run.goldset_path for run in runs if run.goldset_path):
        try:
            goldset = read[path] = load_golden_set(Path(path))
        except (GoldenSetError, OSError) as exc:
            read[path] = exc
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            notes.append(
                f"The golden set at {path} could not be read ({first_line}), so its caveats are not "
                "shown and tasks scored by a person are recognised from their attempts only."
            )
            continue
        for run in runs:
            if run.goldset_path == path and run.goldset_digest and run.goldset_digest != goldset.digest:
                notes.append(
                    f"The golden set at {path} has changed since run {run.id} of {run.model_name} "
                    "(its digest differs): scorer kinds and caveats shown are the set's current ones."
                )
        for task in goldset.tasks:
            if task.id not in kinds:
                kinds[task.id] = goldset.scorer_for(task).kind
                task_ids.append(task.id)
        caveats += [text for text in goldset.manifest.caveats if text not in caveats]
        if margin is None and goldset.manifest.decision is not None:
            margin = goldset.manifest.decision.margin_pp
    return kinds, tuple(task_ids), tuple(caveats), tuple(notes), margin
