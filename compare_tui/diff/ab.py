"""An A/B diff of two retained runs, built from the report: `build_report` over exactly the two
runs computes every figure and `report.paired.paired` the flips, McNemar test and paired interval
interval with A as the base. This module only picks out what the Diff screen (and any other surface) lists.

`read_run_pair` does the IO (a worker thread); everything else is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.report import ModelFigures, PairedComparison, Report, ReportInputs, build_report, load_report_inputs
from compare_tui.report import formatting as fmt
from compare_tui.report.paired import paired
from compare_tui.report.stats import Percentiles
from compare_tui.store import Store
from compare_tui.vocabulary import Outcome, TaskStatus


@dataclass(frozen=True, slots=True)
class ChangedTask:
    """A task whose outcome differs between run A and run B (the A/B diff and the reproduce
    check both list these)."""

    task_id: str
    status_a: TaskStatus
    status_b: TaskStatus

    @property
    def change(self) -> str:
        """`only A passes`, `only B passes`, or `A fail → B error`, …"""
        if self.status_a == Outcome.PASS and self.status_b != Outcome.PASS:
            return "only A passes"
        if self.status_b == Outcome.PASS and self.status_a != Outcome.PASS:
            return "only B passes"
        return f"A {self.status_a} → B {self.status_b}"


@dataclass(frozen=True, slots=True)
class FigureDelta:
    figure: str
    a: str
    b: str
    delta: str
    """B − A, in the figure's unit (— when either side has no value)."""


@dataclass(frozen=True, slots=True)
class RunPairDiff:
    report: Report
    """The report over exactly runs A and B (in that order)."""
    a: ModelFigures | None
    b: ModelFigures | None
    """None when that run's row was refused (`problems` says why)."""
    paired: PairedComparison | None
    """None when a row is refused, or when A and B ran different golden sets (no paired verdict
    across sets: the flips would compare different tasks or checks)."""
    same_set: bool
    sets: tuple[str, str]
    """Each side's golden set as `workload version (digest start)`."""
    problems: tuple[str, ...]
    """Warnings to show above everything (different golden sets, refused rows)."""
    changed: tuple[ChangedTask, ...]
    deltas: tuple[FigureDelta, ...]


def pair_inputs(store: Store, run_a: str, run_b: str) -> ReportInputs:
    """The report inputs of runs A and B, read with the report's own loader one run at a time."""
    first, second = load_report_inputs(store, run_a), load_report_inputs(store, run_b)
    kinds = {**second.task_kinds, **first.task_kinds}
    task_ids = first.task_ids + tuple(t for t in second.task_ids if t not in set(first.task_ids))
    caveats = first.manifest_caveats + tuple(c for c in second.manifest_caveats if c not in first.manifest_caveats)
    notes = first.notes + tuple(n for n in second.notes if n not in first.notes)
    return ReportInputs(
        runs=first.runs + second.runs,
        task_kinds=kinds,
        task_ids=task_ids,
        manifest_caveats=caveats,
        notes=notes,
        comparison_name="A/B diff",
    )


def read_run_pair(store: Store, run_a: str, run_b: str) -> RunPairDiff:
    inputs = pair_inputs(store, run_a, run_b)
    labels = tuple(set_label(r.run.goldset_id, r.run.goldset_version, r.run.goldset_digest) for r in inputs.runs)
    return diff_of(build_report(inputs), (labels[0], labels[-1]))


def set_label(workload_id: str, version: str, digest: str | None) -> str:
    """`support-triage 1.0.0 (sha256:1a2b3c4d)`: enough to tell two sets, or two versions, apart."""
    return f"{workload_id} {version}" + (f" ({digest[:15]})" if digest else "")


LATENCY_CONFOUNDS = ("prompt_cache_differs", "stack_confound")
"""Report caveats that the diff shows above its latency and cost deltas."""


def diff_of(report: Report, sets: tuple[str, str] = ("", "")) -> RunPairDiff:
    """What the Diff screen shows, picked out of a report over exactly two runs (`sets`: each
    run's golden set, as `set_label` spells it)."""
    run_a, run_b = report.run_ids
    rows = {row.run_id: row for row in report.models}
    a, b = rows.get(run_a), rows.get(run_b)
    problems = [f"run {r.run_id[:8]} ({r.label}) is not shown: {r.reason}" for r in report.refused]
    same_set = not any(c.code == "different_sets" for c in report.caveats)
    if not same_set:
        problems.insert(
            0,
            f"A ran {sets[0] or 'one golden set'}, B ran {sets[1] or 'another'}: no paired "
            "verdict across sets (the flips would compare different tasks or checks). c picks "
            "two runs of the same set version.",
        )
    # The Δ TTFT and Δ cost below are not the models' alone when the two runs met a different
    # prompt cache or were served differently: said above them, not only in the report.
    problems += [c.text for c in report.caveats if c.code in LATENCY_CONFOUNDS]
    if a is None or b is None:
        return RunPairDiff(report, a, b, None, same_set, sets, tuple(problems), (), ())
    changed = tuple(
        ChangedTask(x.task_id, x.status, y.status)
        for x, y in zip(a.blocks, b.blocks, strict=True)
        if x.status != y.status
    )
    return RunPairDiff(
        report, a, b, paired(a, b) if same_set else None, same_set, sets, tuple(problems), changed, deltas(a, b)
    )


def _points(a: float | None, b: float | None) -> str:
    return fmt.DASH if a is None or b is None else fmt.signed((b - a) * 100, " pts")


def _latency_delta(a: Percentiles, b: Percentiles) -> str:
    """`p50 +12 ms, p95 +40 ms`, in seconds when either side is spelled in seconds
    (`fmt.latency`: its p99 is 10 s or more), so a row never mixes ms and s."""
    seconds = any(p.p99 is not None and p.p99 >= 10_000 for p in (a, b))

    def one(x: float | None, y: float | None) -> str:
        if x is None or y is None:
            return fmt.DASH
        return fmt.signed((y - x) / 1000, " s") if seconds else fmt.signed(y - x, " ms", 0)

    return f"p50 {one(a.p50, b.p50)}, p95 {one(a.p95, b.p95)}"


def _number(a: float | None, b: float | None) -> str:
    # Rounded first, so a change under half a token reads +0, never -0.
    return fmt.DASH if a is None or b is None else fmt.number(round(b - a), "+,")


def _money(a: float | None, b: float | None, currency: str) -> str:
    if a is None or b is None:
        return fmt.DASH
    text = fmt.money(abs(b - a), currency)
    return ("+" if b >= a else fmt.MINUS) + text


def deltas(a: ModelFigures, b: ModelFigures) -> tuple[FigureDelta, ...]:
    """Side by side figures of A and B, with B − A (as the report spells each figure)."""
    la, lb = a.latency, b.latency
    rows = [
        FigureDelta(
            "pass rate",
            fmt.pass_rate(a.pass_rate),
            fmt.pass_rate(b.pass_rate),
            _points(a.pass_rate.rate, b.pass_rate.rate),
        ),
        FigureDelta(
            "TTFT p50/p95/p99", fmt.latency(la.ttft_ms), fmt.latency(lb.ttft_ms), _latency_delta(la.ttft_ms, lb.ttft_ms)
        ),
        FigureDelta(
            "E2E p50/p95/p99", fmt.latency(la.e2e_ms), fmt.latency(lb.e2e_ms), _latency_delta(la.e2e_ms, lb.e2e_ms)
        ),
        FigureDelta(
            "tokens/task",
            fmt.tokens(a.tokens),
            fmt.tokens(b.tokens),
            # Each part signed on its own: "-516 + -358" read as arithmetic.
            f"prompt {_number(a.tokens.prompt_per_task, b.tokens.prompt_per_task)}, "
            f"completion {_number(a.tokens.completion_per_task, b.tokens.completion_per_task)}",
        ),
        FigureDelta(
            "cost/completed task",
            fmt.cost_per_task(a.cost),
            fmt.cost_per_task(b.cost),
            _money(a.cost.per_task, b.cost.per_task, a.cost.currency)
            if a.cost.currency == b.cost.currency
            else "different currencies",
        ),
    ]
    if a.cost.basis != b.cost.basis:
        rows.append(FigureDelta("cost basis", a.cost.basis, b.cost.basis, "not equivalent: compare with care"))
    return tuple(rows)
