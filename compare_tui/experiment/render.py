"""Experiment figures as plain text (the CLI) and as a JSON document. They only format:
every number comes from `figures.ExperimentFigures`, so the CLI, JSON and the TUI agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from compare_tui.experiment.figures import (
    MIN_TASKS_FOR_TASKS_INTERVAL,
    RERUN_ESTIMAND,
    TASKS_ESTIMAND,
    ArmFigures,
    ExperimentFigures,
    Spread,
)
from compare_tui.experiment.sequential import ArmsSequence
from compare_tui.report.stats import MEAN_METHOD
from compare_tui.vocabulary import Consistency, money

JSON_SCHEMA_VERSION = 2


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f} %"


def interval_text(arm: ArmFigures) -> str:
    """`95% CI 61.0–74.2 %` from three rated runs; below that, the runs' range, said to be one."""
    interval, rates = arm.interval, arm.rate_range
    if interval is not None:
        return f"95% CI {interval.low * 100:.1f}–{interval.high * 100:.1f} %"
    if len(rates.values) == 2 and rates.low is not None and rates.high is not None:
        return f"range {rates.low * 100:.1f}–{rates.high * 100:.1f} % (2 runs: too few for a 95% CI)"
    return "a 95% CI needs three or more runs"


def interval_cell(arm: ArmFigures) -> str:
    """`interval_text` for a table cell: `61.0–74.2 %`, `range 61.0–74.2 %`, or `– (<3 runs)`
    (the table's note says what each is)."""
    interval, rates = arm.interval, arm.rate_range
    if interval is not None:
        return f"{interval.low * 100:.1f}–{interval.high * 100:.1f} %"
    if len(rates.values) == 2 and rates.low is not None and rates.high is not None:
        return f"range {rates.low * 100:.1f}–{rates.high * 100:.1f} %"
    return "– (<3 runs)"


INTERVAL_NOTE = (
    "95% CI this set: of this set's mean pass rate under re-running (these tasks, not tasks like them) "
    "from three runs (every task of every run pooled, exact, joined with a Student-t interval over runs); "
    "with two runs, their range (not an interval); latency p50: the median over the arm's runs"
)
"""What the arms table's re-running interval and latency cells are (under the table)."""

TOO_FEW_TASKS = "no 95% CI for tasks like these (fewer than five tasks scored)"
"""Said where an arm has no "tasks like these" interval (`MIN_TASKS_FOR_TASKS_INTERVAL`)."""

TASKS_INTERVAL_NOTE = (
    f"95% CI tasks like these: of {TASKS_ESTIMAND}, a bounded-mean interval on [0, 1] from five "
    f"tasks scored; – (<{MIN_TASKS_FOR_TASKS_INTERVAL} tasks): none (fewer than five tasks scored)"
)
"""What the arms table's "tasks like these" cells are (under the table)."""


def tasks_interval_figure(arm: ArmFigures) -> str:
    """`95% CI 48.0–90.1 %`, or `TOO_FEW_TASKS` where the arm has no "tasks like these" interval."""
    interval = arm.tasks_interval
    if interval is None:
        return TOO_FEW_TASKS
    return f"95% CI {interval.low * 100:.1f}–{interval.high * 100:.1f} %"


def tasks_interval_text(arm: ArmFigures) -> str:
    """The "tasks like these" interval with the rate it covers, or why there is none."""
    figure = tasks_interval_figure(arm)
    return figure if arm.tasks_interval is None else f"{figure} for {TASKS_ESTIMAND}"


def tasks_interval_cell(arm: ArmFigures) -> str:
    """`tasks_interval_text` for a table cell: `48.0–90.1 %` or `– (<5 tasks)` (the table's
    note, `TASKS_INTERVAL_NOTE`, says what each is)."""
    interval = arm.tasks_interval
    if interval is None:
        return f"– (<{MIN_TASKS_FOR_TASKS_INTERVAL} tasks)"
    return f"{interval.low * 100:.1f}–{interval.high * 100:.1f} %"


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms"


def spread_text(s: Spread, fmt: Callable[[float | None], str]) -> str:
    if s.median is None:
        return "not measured"
    return f"min {fmt(s.low)} · median {fmt(s.median)} · max {fmt(s.high)} over {len(s.values)} runs"


def controls_text(figures: ExperimentFigures) -> str:
    s = figures.settings
    return (
        f"attempts {s['attempts']} · temperature {s['temperature']:g} · max_tokens {s['max_tokens']} · "
        f"concurrency {s['concurrency']} · timeout {s['timeout_s']:g} s · N = {figures.repeats} runs per arm"
    )


def banner_lines(figures: ExperimentFigures) -> list[str]:
    """The confound banner: one line per confound (empty when there is none)."""
    return [f"⚠ CONFOUND — {c.sentence()}" for c in figures.confounds]


def arm_lines(arm: ArmFigures) -> list[str]:
    state = "complete" if arm.observed >= arm.desired else f"{arm.to_launch} to launch"
    flight = f" · {len(arm.in_flight)} in flight ({', '.join(i[:8] for i in arm.in_flight)})" if arm.in_flight else ""
    lines = [
        f"arm {arm.label}: runs {arm.observed}/{arm.desired} ({state}){flight}"
        + (f" · {arm.spare} more completed in the cell" if arm.spare else "")
    ]
    if arm.rescored:
        lines.append(
            f"  not counted: {len(arm.rescored)} rescored run(s) of the cell ({', '.join(i[:8] for i in arm.rescored)}): "
            "another run's answers scored again, not repeats"
        )
    rated = [r for r in arm.runs if r.rate is not None]
    lines.append(
        f"  pass rate, mean over runs: {percent(arm.pass_rate)}  {interval_text(arm)}"
        + (f" for {RERUN_ESTIMAND} ({MEAN_METHOD}, {len(rated)} runs)" if arm.interval else "")
    )
    if rated:
        lines.append(f"  {tasks_interval_text(arm)}")
    for run in arm.runs:
        if run.refused:
            lines.append(f"    run {run.run_id[:8]}: not shown: {run.refused}")
        else:
            lines.append(
                f"    run {run.run_id[:8]}: {percent(run.rate)} ({run.passed}/{run.conclusive}) · "
                f"p50 {ms(run.latency_p50_ms)} · {run.tokens_total} tokens · "
                f"{money(run.cost_per_task, run.currency)}/completed task"
                + (f" · {run.not_sent} task(s) not sent (settled)" if run.not_sent else "")
            )
    lines.append(f"  latency p50 across runs: {spread_text(arm.latency_p50_ms, ms)}")
    lines.append(
        f"  cost per completed task across runs: {spread_text(arm.cost_per_task, lambda v: money(v, arm.currency))}"
    )
    counts = {
        state: sum(1 for t in arm.tasks if t.state == state)
        for state in ("consistent pass", "consistent fail", "flaky", "inconclusive")
    }
    lines.append(
        "  tasks: " + ", ".join(f"{n} {state}" for state, n in counts.items() if n)
        if arm.tasks
        else "  tasks: none scored yet"
    )
    flaky = [t for t in arm.tasks if t.state == Consistency.FLAKY]
    if flaky:
        lines.append("  flaky: " + ", ".join(f"{t.task_id} ({t.passed}/{t.conclusive} runs passed)" for t in flaky))
    lines.append(
        f"  excluded from the pass rate: {arm.human_tasks} task(s) scored by a person; "
        f"{arm.inconclusive} inconclusive scoring(s) (the scorer could not judge the answer)"
    )
    for variable, runs in arm.unrecorded:
        lines.append(f"  note: {variable} was not recorded by run(s) {', '.join(r[:8] for r in runs)}")
    return lines


def sequence_lines(figures: ExperimentFigures, *, method: bool = True) -> list[str]:
    """With `--stop-when-settled`: the arms' sequential verdicts, each against the reference arm,
    where each settled and what was not sent; or why every run covers the full set. Every
    surface shows these lines (`method`: with the line naming the method)."""
    seq = figures.sequence
    if seq is None:
        return []
    lines = [seq.words]
    if seq.run is not None:
        for arm in figures.arms:
            words = seq.arm_words(arm.label)
            if words is not None:
                lines.append(f"  {arm.label}: {words}")
        if method:
            lines.append(
                f"  method: {seq.method}; a settled run's pass rate is over the tasks it was sent "
                "(a prefix of that order: no task was left out for how it went)"
            )
    return lines


def _sequence_document(seq: ArmsSequence | None) -> dict[str, Any] | None:
    if seq is None:
        return None
    run = seq.run
    arms = []
    for c in () if run is None else run.candidates:
        look = c.look
        arms.append(
            {
                "label": c.candidate,
                "verdict": None if look is None else str(look.verdict),
                "settled_at": look.tasks if look is not None and look.settled else None,
                "looked": None if look is None else look.tasks,
                "cs_pp": None if look is None else {"low": look.low * 100, "high": look.high * 100},
                "words": seq.arm_words(c.candidate),
            }
        )
    return {
        "mode": "stopped_when_settled" if seq.full_set_reason is None else "full_set",
        "full_set_reason": seq.full_set_reason,
        "reference": seq.reference,
        "comparison_id": seq.comparison_id,
        "method": seq.method,
        "words": seq.words,
        "total": None if run is None else run.total,
        "level": None if run is None else run.level,
        "settled": None if run is None else run.settled,
        "settled_after": None if run is None else run.settled_after,
        "requests_not_sent": None if run is None else run.requests_not_sent,
        "not_sent": {} if run is None else dict(run.not_sent),
        "not_spent": None if run is None else run.not_spent,
        "arms": arms,
    }


def render_text(figures: ExperimentFigures) -> str:
    """The whole experiment as plain text lines."""
    g = figures.goldset
    lines = banner_lines(figures)
    lines.append(f"experiment {figures.name}: {g['name'] or g['workload_id']} {g['version']} ({g['digest'][:19]}…)")
    lines.append(f"controls: {controls_text(figures)}")
    lines.append(
        "complete: every arm holds its runs"
        if figures.complete
        else f"incomplete: {figures.to_launch} run(s) to launch with `compare-tui experiment run {figures.name}`"
    )
    lines.extend(sequence_lines(figures))
    for arm in figures.arms:
        lines.append("")
        lines.extend(arm_lines(arm))
    lines.extend(f"note: {note}" for note in figures.notes)
    return "\n".join(lines) + "\n"


class SpreadJson(TypedDict):
    """One value per run, and how far they spread (None without a value)."""

    values: list[float]
    min: float | None
    median: float | None
    max: float | None


def _spread(s: Spread) -> SpreadJson:
    return {"values": list(s.values), "min": s.low, "median": s.median, "max": s.high}


def experiment_document(figures: ExperimentFigures) -> dict[str, Any]:
    """The experiment as a JSON-ready document (stable keys; schema version 2)."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "name": figures.name,
        "created_at": figures.created_at,
        "goldset": figures.goldset,
        "settings": figures.settings,
        "repeats": figures.repeats,
        "complete": figures.complete,
        "to_launch": figures.to_launch,
        "confounds": [
            {
                "arm": c.arm,
                "variable": c.variable,
                "sentence": c.sentence(),
                "values": [{"value": v.value, "sources": list(v.sources)} for v in c.values],
            }
            for c in figures.confounds
        ],
        "arms": [
            {
                "label": a.label,
                "model": a.model_name,
                "cell": a.cell,
                "desired": a.desired,
                "observed": a.observed,
                "in_flight": list(a.in_flight),
                "spare": a.spare,
                "to_launch": a.to_launch,
                "pass_rate": a.pass_rate,
                "interval": None if a.interval is None else {"low": a.interval.low, "high": a.interval.high},
                "interval_method": MEAN_METHOD if a.interval is not None else None,
                "interval_estimand": RERUN_ESTIMAND,
                "tasks_interval": None
                if a.tasks_interval is None
                else {"low": a.tasks_interval.low, "high": a.tasks_interval.high},
                "tasks_interval_estimand": TASKS_ESTIMAND,
                "rescored_not_counted": list(a.rescored),
                "rate_range": _spread(a.rate_range),
                "human_tasks": a.human_tasks,
                "inconclusive": a.inconclusive,
                "flaky": list(a.flaky),
                "tasks": [
                    {"task_id": t.task_id, "passed": t.passed, "conclusive": t.conclusive, "state": t.state}
                    for t in a.tasks
                ],
                "latency_p50_ms": _spread(a.latency_p50_ms),
                "cost_per_task": _spread(a.cost_per_task),
                "currency": a.currency,
                "runs": [
                    {
                        "id": r.run_id,
                        "rate": r.rate,
                        "passed": r.passed,
                        "conclusive": r.conclusive,
                        "inconclusive": r.inconclusive,
                        "human": r.human,
                        "latency_p50_ms": r.latency_p50_ms,
                        "ttft_p50_ms": r.ttft_p50_ms,
                        "tokens_total": r.tokens_total,
                        "cost_per_task": r.cost_per_task,
                        "refused": r.refused,
                        "not_sent": r.not_sent,
                    }
                    for r in a.runs
                ],
                "unrecorded": [{"variable": v, "runs": list(runs)} for v, runs in a.unrecorded],
            }
            for a in figures.arms
        ],
        "sequential": _sequence_document(figures.sequence),
        "notes": list(figures.notes),
    }
