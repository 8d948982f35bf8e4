"""One run's figures as an experiment counts them, taken from the run's own report.

The report is the one place a run's figures are computed (task status, latency, tokens,
cost): this module builds the run's report and reads it. It adds only what experiments need
on top, automated-only scoring:

- tasks a person scores (`human`) leave both numerator and denominator, and are counted;
- a task whose scorer itself errored (an answer came back but the scorer could not judge it:
  a missing expected value, an unloadable schema, a check program that crashed) is
  *inconclusive*, not failed, and leaves the pass rate too; so does a non-human task still
  awaiting a person, or one the run recorded nothing for;
- a task where nothing came back (timeouts, HTTP errors) counts as not passed, exactly as in
  the report: that failure is the model's or its server's.

With no inconclusive task, the pass rate here equals the report's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compare_tui.report import ReportInputs, RunInput, build_report
from compare_tui.report.figures import ModelFigures
from compare_tui.report.prompt_cache import CacheCondition
from compare_tui.vocabulary import MISSING, Outcome, RunStatus

VERDICTS = ("pass", "fail", "inconclusive", "human")


@dataclass(frozen=True, slots=True)
class RunFigures:
    """One held run of an arm."""

    run_id: str
    created_at: str
    verdicts: Mapping[str, str]
    """task id → `pass`, `fail`, `inconclusive` or `human` (excluded from the pass rate)."""
    passed: int
    conclusive: int
    """Tasks automatically scored pass or fail: the pass rate's denominator."""
    inconclusive: int
    human: int
    rate: float | None
    """`passed / conclusive`; None when no task was conclusive."""
    latency_p50_ms: float | None
    """The report's end-to-end p50 (one value per completed task)."""
    ttft_p50_ms: float | None
    tokens_total: int
    """The report's prompt + completion tokens over every attempt."""
    cost_per_task: float | None
    """The report's cost per completed task, on the run's own cost basis."""
    currency: str
    refused: str | None = None
    """Why the report refuses to show this run (no cost basis / provenance): then no figures."""
    not_sent: int = 0
    """Tasks a `settled` run was never sent (its verdicts had settled): in no tally, never failed."""
    cache: CacheCondition | None = None
    """The run's prompt-cache condition and share (`report.prompt_cache`), None when refused."""


def run_figures(run_input: RunInput, task_ids: Sequence[str], task_kinds: Mapping[str, str]) -> RunFigures:
    """The figures of one run, read from its single-run report."""
    run = run_input.run
    report = build_report(ReportInputs(runs=(run_input,), task_kinds=task_kinds, task_ids=tuple(task_ids)))
    if not report.models:
        reason = report.refused[0].reason if report.refused else "the report shows no row for this run"
        return RunFigures(run.id, run.created_at, {}, 0, 0, 0, 0, None, None, None, 0, None, "", reason)
    row = report.models[0]
    verdicts = _verdicts(row, run_input)
    tally = {name: 0 for name in VERDICTS}
    for verdict in verdicts.values():
        tally[verdict] += 1
    conclusive = tally["pass"] + tally["fail"]
    return RunFigures(
        run_id=run.id,
        created_at=run.created_at,
        verdicts=verdicts,
        passed=tally["pass"],
        conclusive=conclusive,
        inconclusive=tally["inconclusive"],
        human=tally["human"],
        rate=tally["pass"] / conclusive if conclusive else None,
        latency_p50_ms=row.latency.e2e_ms.p50,
        ttft_p50_ms=row.latency.ttft_ms.p50,
        tokens_total=row.tokens.prompt_total + row.tokens.completion_total,
        cost_per_task=row.cost.per_task,
        currency=row.cost.currency,
        cache=report.prompt_cache[0] if report.prompt_cache else None,
        not_sent=len(row.blocks) - len(verdicts),
    )


def _verdicts(row: ModelFigures, run_input: RunInput) -> dict[str, str]:
    # Attempts whose answer the scorer could not judge: an error with no transport error class.
    scorer_errors = {a.task_id for a in run_input.attempts if a.outcome == Outcome.ERROR and not a.error_class}
    verdicts = {}
    for block in row.blocks:
        if block.status == MISSING and run_input.run.status == RunStatus.SETTLED:
            continue  # not sent: the verdicts it served had settled
        if block.human:
            verdicts[block.task_id] = "human"
        elif block.status in (Outcome.PASS, Outcome.FAIL):
            verdicts[block.task_id] = block.status
        elif block.status == Outcome.ERROR:
            verdicts[block.task_id] = "inconclusive" if block.task_id in scorer_errors else "fail"
        else:  # still awaiting a person, or not recorded by this run
            verdicts[block.task_id] = "inconclusive"
    return verdicts
