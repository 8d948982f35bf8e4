"""The report object and `build_report`, the one place a report's figures are put together.

`build_report` is a pure, deterministic function of `ReportInputs`: the same stored rows give
the same report (no figure depends on a seed), so the terminal, the TUI, JSON,
Markdown and JUnit always agree. Renderers read a `Report`; they never compute a figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.endpoint.account import stack_of
from compare_tui.errors import CompareTuiError
from compare_tui.report.agreement import RuleCheck, rule_check
from compare_tui.report.caveats import Caveat, build_caveats, grouped
from compare_tui.report.decision import DEFAULT_MARGIN_PP, Decision, decide
from compare_tui.report.distribution import LatencyDistribution, latency_distributions
from compare_tui.report.figures import ModelFigures, RefusedRow, model_figures, refusal
from compare_tui.report.inputs import ReportInputs, StepGrading
from compare_tui.report.paired import PairedComparison, paired_comparisons
from compare_tui.report.prompt_cache import CacheCondition, cache_caveats, cache_condition
from compare_tui.report.rule import Recommendation, Standing, recommend
from compare_tui.report.sequential_run import SequentialRun, sequential_run
from compare_tui.report.server_latency import LatencyCrossCheck, cross_check, cross_check_caveats
from compare_tui.report.serving import (
    ServingSummary,
    serving_caveats,
    serving_confound,
    serving_summary,
    stack_confound,
)
from compare_tui.report.trajectories import Trajectories, replay_caveats, trajectories
from compare_tui.vocabulary import BaselineSource


@dataclass(frozen=True, slots=True)
class GoldenSetInfo:
    """Which golden set the report is over (from the first run)."""

    workload_id: str
    name: str
    version: str
    digest: str


@dataclass(frozen=True, slots=True)
class Report:
    """A comparison (or a single run) as the user sees it. Immutable."""

    title: str
    comparison_id: str | None
    goldset: GoldenSetInfo
    run_ids: tuple[str, ...]
    """Every run in the report, in the comparison's order, shown or refused."""
    task_ids: tuple[str, ...]
    """The grid's columns: every model's `blocks` follow this order."""
    models: tuple[ModelFigures, ...]
    """The shown rows, in the comparison's order."""
    refused: tuple[RefusedRow, ...]
    recommendation: Recommendation
    paired: tuple[PairedComparison, ...]
    """The pairs the paired section shows: the decision's own (candidate − baseline, at its
    level) when there is a baseline, else the leader against each other model at 95 %."""
    caveats: tuple[Caveat, ...]
    decision: Decision | None = None
    """Each candidate against the baseline (None: no baseline named or promoted)."""
    decision_note: str | None = None
    """Why a baseline that was asked for has no decision (its row refused or absent)."""
    latency_distributions: tuple[LatencyDistribution, ...] = ()
    """TTFT and end-to-end distributions of every shown row, on shared bins."""
    trajectories: tuple[Trajectories, ...] = ()
    """Whole-run replay figures per shown row (`report.trajectories`); () when no task of the
    set is a step of a recorded agent run."""
    step_grading: StepGrading | None = None
    """The judge whose stored grades decided steps waiting for a person (opt-in), else None."""
    serving: tuple[ServingSummary, ...] = ()
    """What served each shown row, in the rows' order (`report.serving`)."""
    prompt_cache: tuple[CacheCondition, ...] = ()
    """Each shown row's prompt-cache condition and measured cache share (`report.prompt_cache`)."""
    server_latency: tuple[LatencyCrossCheck, ...] = ()
    """The server's own TTFT beside the client's, for each shown row whose server reported it
    (`report.server_latency`)."""
    sequential: SequentialRun | None = None
    """A `--stop-when-settled` comparison's sequences, look by look, and what was not sent
    (`report.sequential_run`); None for a fixed-N comparison."""
    rating_note: str | None = None
    """One sentence that every surface prints right under the rule's recommendation (and first
    among the caveats) when the rule's line could be read against the paired test or the
    decision: "medium" or "high" beside a lead within noise, "low" beside a lead larger than
    noise, or a winner that the decision does not pick (`report.agreement`)."""
    rule_check: RuleCheck | None = None
    """The rule's recommendation read against the paired test and the decision, for the
    rule-based gates (`report.gate`)."""

    def figures_for(self, label: str) -> ModelFigures | None:
        """The shown row with this label (usually the model name), or None."""
        return next((row for row in self.models if row.label == label), None)


class BaselineError(CompareTuiError, LookupError):
    """The baseline named is not a model of the report (the message lists the models)."""


def report_task_ids(inputs: ReportInputs) -> tuple[str, ...]:
    """The golden set's tasks in order, then any recorded task the set no longer has."""
    recorded = {a.task_id for r in inputs.runs for a in r.attempts}
    known = set(inputs.task_ids)
    return tuple(inputs.task_ids) + tuple(sorted(recorded - known))


def labels(inputs: ReportInputs) -> list[str]:
    """The name each run is shown under: its model name, made unique with the run id's start
    when one model was run twice (a reproduce check), so a winner is never ambiguous."""
    names = [r.run.model_name for r in inputs.runs]
    return [
        name if names.count(name) == 1 else f"{name}@{r.run.id[:8]}" for name, r in zip(names, inputs.runs, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class ReportRows:
    """A report's grid alone, as `build_report` computes it: what a one-line view (a run's pass
    rate, the review queue) reads, without the decision, paired statistics and caveats."""

    task_ids: tuple[str, ...]
    """The grid's columns, as `Report.task_ids`."""
    models: tuple[ModelFigures, ...]
    """The shown rows, as `Report.models`."""
    refused: tuple[RefusedRow, ...]
    """As `Report.refused`."""


def build_rows(inputs: ReportInputs) -> ReportRows:
    """The report's grid: the same rows `build_report(inputs)` shows. Deterministic; no IO."""
    task_ids = report_task_ids(inputs)
    rows, refused = [], []
    for run_input, label in zip(inputs.runs, labels(inputs), strict=True):
        refused_row = refusal(run_input, label)
        if refused_row is not None:
            refused.append(refused_row)
        else:
            rows.append(model_figures(run_input, label, task_ids, inputs.task_kinds))
    return ReportRows(task_ids, tuple(rows), tuple(refused))


def build_report(inputs: ReportInputs) -> Report:
    """Compute every figure of a report from its inputs. Deterministic; no IO."""
    grid = build_rows(inputs)
    task_ids, rows, refused = grid.task_ids, list(grid.models), list(grid.refused)
    standings = [
        Standing(
            row.label, row.pass_rate.passed, row.pass_rate.scored, row.completed, row.missing, len(row.awaiting_review)
        )
        for row in rows
    ]
    recommendation = recommend(standings, [r.label for r in refused])
    first = inputs.runs[0].run if inputs.runs else None
    goldset = GoldenSetInfo(
        first.goldset_id if first else "",
        first.goldset_name if first else "",
        first.goldset_version if first else "",
        first.goldset_digest if first else "",
    )
    seq = _sequential(inputs, rows)
    decision, note = _decision(inputs, rows, refused, seq)
    # One interval per pair on the page: with a decision, its own pairs (candidate − baseline,
    # at its level) are the ones the paired section explains.
    paired = (
        tuple(v.paired for v in decision.versus) if decision is not None else paired_comparisons(rows, recommendation)
    )
    # Not named `check`: the cross-check comprehension below binds that name (`:=`) in this scope.
    against_test = rule_check(recommendation, rows, paired, decision)
    rating = against_test.note
    replay = trajectories(rows, inputs.task_traces, task_ids, inputs.step_grading)
    by_run = {r.run.id: r.run for r in inputs.runs}
    # Grouped as the other per-model caveats are: one line for models the same thing is true of.
    inputs_by_run = {r.run.id: r for r in inputs.runs}
    caches = tuple(
        cache_condition(
            row.label,
            by_run[row.run_id].settings or {},
            by_run[row.run_id].environment or {},
            inputs_by_run[row.run_id].attempts,
            stack_of(by_run[row.run_id].serving),
        )
        for row in rows
    )
    serving = tuple(
        serving_summary(by_run[row.run_id], row.label, cache.text()) for row, cache in zip(rows, caches, strict=True)
    )
    checks = {
        row.label: check
        for row, summary in zip(rows, serving, strict=True)
        if (
            check := cross_check(
                row.run_id,
                row.label,
                by_run[row.run_id].environment,
                inputs_by_run[row.run_id].attempts,
                concurrency=_positive((by_run[row.run_id].settings or {}).get("concurrency")),
                slots=_positive(summary.fingerprint.get("slots")),
            )
        )
    }
    per_model = [
        (
            row.label,
            serving_caveats(s, row.provenance)
            + (cross_check_caveats(checks[row.label]) if row.label in checks else []),
        )
        for row, s in zip(rows, serving, strict=True)
    ]
    caveats = build_caveats(inputs, rows) + tuple(grouped(per_model))
    confound = serving_confound(serving)
    stack = stack_confound(serving)
    title = inputs.comparison_name or " ".join(p for p in (goldset.name or goldset.workload_id, goldset.version) if p)
    return Report(
        title=title or "report",
        comparison_id=inputs.comparison_id,
        goldset=goldset,
        run_ids=tuple(r.run.id for r in inputs.runs),
        task_ids=task_ids,
        models=tuple(rows),
        refused=tuple(refused),
        recommendation=recommendation,
        paired=paired,
        caveats=((Caveat("rating", rating),) if rating else ())
        + (() if confound is None else (confound,))
        + (() if stack is None else (stack,))
        + tuple(cache_caveats(caches))
        + caveats
        + tuple(replay_caveats(replay, inputs.step_grading)),
        decision=decision,
        decision_note=note,
        latency_distributions=latency_distributions(
            [(row.label, row.latency.ttft_values, row.latency.e2e_values) for row in rows]
        ),
        trajectories=replay,
        step_grading=inputs.step_grading,
        serving=serving,
        prompt_cache=caches,
        server_latency=tuple(checks.values()),
        rating_note=rating,
        rule_check=against_test,
        sequential=seq,
    )


def _decision(
    inputs: ReportInputs, rows: list[ModelFigures], refused: list[RefusedRow], seq: SequentialRun | None
) -> tuple[Decision | None, str | None]:
    if inputs.baseline is None:
        return None, None
    name = inputs.baseline
    if any(name in (r.label, r.model_name) for r in rows):
        decision = decide(
            rows,
            name,
            source=inputs.baseline_source,
            margin_pp=inputs.margin_pp,
            recorded_margin_pp=inputs.recorded_margin_pp,
            sequential=None if seq is None else seq.standings(),
        )
        return decision, None
    if any(name in (r.label, r.model_name) for r in refused):
        return None, f"No verdict against the baseline {name}: its row is not shown (see below)."
    if inputs.baseline_source == BaselineSource.WORKLOAD:
        return None, None
    shown = ", ".join(r.label for r in rows) or "none"
    raise BaselineError(
        f"the baseline {name!r} is not a model of this report (its models: {shown}); name one of them with --baseline"
    )


def _sequential(inputs: ReportInputs, rows: list[ModelFigures]) -> SequentialRun | None:
    """The sequences of a `--stop-when-settled` comparison, at its recorded margin (a margin asked
    for after the data does not change where a sequence stopped), with the baseline among `rows`."""
    order, name = inputs.sequential, inputs.baseline
    base = next((r for r in rows if name is not None and name in (r.label, r.model_name)), None)
    if order is None or base is None:
        return None
    margin = inputs.recorded_margin_pp if inputs.recorded_margin_pp is not None else DEFAULT_MARGIN_PP
    task_ids = [b.task_id for b in base.blocks]
    return sequential_run(order.seed, order.order, rows, base, task_ids, margin, len(inputs.runs) - 1)


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
