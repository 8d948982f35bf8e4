"""The decision: each candidate against the baseline, with a verdict by one documented rule.

The baseline is the model the team runs today: named for a comparison (`--baseline`), or the
workload's promoted baseline. Per candidate, on the tasks both scored:

- Δ pass rate in points with its paired 95% interval (L, U) and the exact McNemar p; the
  interval excludes zero exactly when p < 0.05, so the verdict never contradicts the test;
- Δ TTFT p50, Δ end-to-end p50 and p95 over the same tasks (those both scored, each task's
  deciding attempt, so a model is not timed on easier tasks than the other), and Δ tokens per
  completed task, in % of the baseline;
- Δ cost per completed task and the **savings** (baseline − candidate) / baseline, only when
  both rows have the same cost basis and currency (else both figures, no savings);
- the **verdict**, with margin M (points, default 5):
  `better` when L > 0; `no worse` when L > −M and not better; `worse` when U < 0 and not
  no worse; `inconclusive` otherwise, with the tasks needed for 80 % power (Connor 1987).

Pure and deterministic, like the rest of the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report.figures import ModelFigures
from compare_tui.report.paired import PairedComparison, both_scored, paired
from compare_tui.report.stats import Percentiles, percentiles
from compare_tui.report.text_calls import decision_note

DEFAULT_MARGIN_PP = 5.0
VERDICT_RULE = (
    "better when the 95% interval's lower bound L > 0; no worse when L > −M and not better; "
    "worse when its upper bound U < 0 and not no worse; inconclusive otherwise "
    "(M: the margin, in points)"
)


class Verdict(StrEnum):
    BETTER = "better"
    NO_WORSE = "no worse"
    WORSE = "worse"
    INCONCLUSIVE = "inconclusive"


def verdict_for(low_pp: float, high_pp: float, margin_pp: float) -> Verdict:
    """The verdict on a paired interval [low_pp, high_pp] (candidate − baseline, in points)."""
    if margin_pp < 0:
        raise ValueError("the margin must be non-negative")
    if low_pp > 0:
        return Verdict.BETTER
    if low_pp > -margin_pp:
        return Verdict.NO_WORSE
    if high_pp < 0:
        return Verdict.WORSE
    return Verdict.INCONCLUSIVE


def percent_change(candidate: float | None, baseline: float | None) -> float | None:
    """(candidate − baseline) / baseline in %, or None when either is unknown or baseline is 0."""
    if candidate is None or baseline is None or baseline == 0:
        return None
    return (candidate - baseline) / baseline * 100


@dataclass(frozen=True, slots=True)
class CostVersus:
    """Cost per completed task of both rows, and savings only when they are comparable."""

    baseline_per_task: float | None
    candidate_per_task: float | None
    baseline_basis: str
    candidate_basis: str
    currency: str
    comparable: bool
    """Same cost basis and currency: the two figures may be subtracted."""
    change_pct: float | None
    """Δ cost per completed task in % of the baseline (None when not comparable or unknown)."""
    savings: float | None
    """(baseline − candidate) / baseline, a share (None when not comparable or unknown)."""
    note: str | None
    """Why there is no savings figure, in words (None when there is one)."""


@dataclass(frozen=True, slots=True)
class Versus:
    """One candidate against the baseline."""

    candidate: str
    """The candidate row's label."""
    model_name: str
    run_id: str
    paired: PairedComparison
    """The candidate as A, the baseline as B: `difference` is candidate − baseline."""
    verdict: Verdict | None
    """None when the two scored no task in common."""
    ttft_p50_pct: float | None
    e2e_p50_pct: float | None
    e2e_p95_pct: float | None
    tokens_per_task_pct: float | None
    cost: CostVersus

    @property
    def delta_pp(self) -> float | None:
        return None if self.paired.difference is None else self.paired.difference * 100

    @property
    def interval_pp(self) -> tuple[float, float] | None:
        interval = self.paired.interval
        return None if interval is None else (interval.low * 100, interval.high * 100)

    @property
    def tasks_needed(self) -> int | None:
        """Tasks for 80 % power at the observed effect, shown with an inconclusive verdict."""
        return self.paired.tasks_needed if self.verdict is Verdict.INCONCLUSIVE else None


@dataclass(frozen=True, slots=True)
class Decision:
    """The versus-baseline half of a report."""

    baseline: str
    """The baseline row's label."""
    baseline_source: str
    """How it was chosen: `named` (for this comparison) or `workload` (the promoted baseline)."""
    margin_pp: float
    versus: tuple[Versus, ...]
    summary: str
    """The one line that leads the report: switch to a candidate, or keep the baseline."""
    rule: str = VERDICT_RULE

    def for_candidate(self, label: str) -> Versus | None:
        """The candidate with this label or model name, or None."""
        return next((v for v in self.versus if v.candidate == label), None) or next(
            (v for v in self.versus if v.model_name == label), None
        )


def _tokens_per_task(row: ModelFigures) -> float | None:
    prompt, completion = row.tokens.prompt_per_task, row.tokens.completion_per_task
    return None if prompt is None or completion is None else prompt + completion


def cost_versus(candidate: ModelFigures, baseline: ModelFigures) -> CostVersus:
    base, cand = baseline.cost, candidate.cost
    comparable = base.basis == cand.basis and base.currency == cand.currency
    change = percent_change(cand.per_task, base.per_task) if comparable else None
    savings = None if change is None else -change / 100
    if not comparable:
        note = (
            f"not comparable: {baseline.label} is costed on {base.basis.replace('_', ' ')} ({base.currency}) and "
            f"{candidate.label} on {cand.basis.replace('_', ' ')} ({cand.currency}), so no savings figure is given"
        )
    elif savings is None:
        note = "no savings figure: a cost per completed task is unknown (see the cost column)"
    else:
        note = None
    return CostVersus(
        base.per_task, cand.per_task, base.basis, cand.basis, base.currency, comparable, change, savings, note
    )


def paired_latency(
    candidate: ModelFigures, baseline: ModelFigures
) -> tuple[Percentiles, Percentiles, Percentiles, Percentiles]:
    """(candidate TTFT, baseline TTFT, candidate E2E, baseline E2E) over the tasks both scored
    (the paired set), each task's deciding attempt, where both sides have the timing."""
    pairs = [(c, b) for c, b in zip(candidate.blocks, baseline.blocks, strict=True) if both_scored(c, b)]
    ttft = [(c.ttft_ms, b.ttft_ms) for c, b in pairs if c.ttft_ms is not None and b.ttft_ms is not None]
    e2e = [(c.e2e_ms, b.e2e_ms) for c, b in pairs if c.e2e_ms is not None and b.e2e_ms is not None]
    return (
        percentiles(c for c, _ in ttft),
        percentiles(b for _, b in ttft),
        percentiles(c for c, _ in e2e),
        percentiles(b for _, b in e2e),
    )


def versus(candidate: ModelFigures, baseline: ModelFigures, margin_pp: float) -> Versus:
    p = paired(candidate, baseline)
    verdict = None if p.interval is None else verdict_for(p.interval.low * 100, p.interval.high * 100, margin_pp)
    ttft_c, ttft_b, e2e_c, e2e_b = paired_latency(candidate, baseline)
    return Versus(
        candidate=candidate.label,
        model_name=candidate.model_name,
        run_id=candidate.run_id,
        paired=p,
        verdict=verdict,
        ttft_p50_pct=percent_change(ttft_c.p50, ttft_b.p50),
        e2e_p50_pct=percent_change(e2e_c.p50, e2e_b.p50),
        e2e_p95_pct=percent_change(e2e_c.p95, e2e_b.p95),
        tokens_per_task_pct=percent_change(_tokens_per_task(candidate), _tokens_per_task(baseline)),
        cost=cost_versus(candidate, baseline),
    )


def _signed(value: float, unit: str) -> str:
    return f"{value:+.1f}{unit}".replace("-", "−")


def _summary(baseline: str, margin_pp: float, items: Sequence[Versus]) -> str:
    """Switch to the best candidate shown better or no worse; else keep the baseline."""
    rank = {Verdict.BETTER: 0, Verdict.NO_WORSE: 1}
    eligible = [v for v in items if v.verdict in rank and v.delta_pp is not None]
    if not eligible:
        if not items:
            return f"Keep {baseline}: there is no candidate to compare against it."
        # Nothing measured is never a result: a candidate without one task scored beside the
        # baseline was not compared, and the summary says so instead of calling it not good enough.
        unmeasured = [v.candidate for v in items if v.paired.tasks == 0]
        names = ", ".join(unmeasured)
        if len(unmeasured) == len(items):
            return (
                f"Keep {baseline} for now: {names} not compared with it (no task scored by both); "
                "finish the run (`compare-tui run --resume RUN`) to decide."
            )
        tail = f" ({names} not compared: no task scored by both)" if unmeasured else ""
        return f"Keep {baseline}: no candidate is shown no worse within {margin_pp:g} points{tail}."

    def key(v: Versus) -> tuple[int, float, float]:
        savings = v.cost.savings if v.cost.savings is not None else float("-inf")
        return (rank[v.verdict] if v.verdict else 9, -savings, -(v.delta_pp or 0.0))

    best = min(eligible, key=key)
    assert best.delta_pp is not None and best.interval_pp is not None
    low, high = best.interval_pp
    words = "better than" if best.verdict is Verdict.BETTER else "no worse than"
    parts = [
        f"Switch to candidate {best.candidate}: {words} {baseline} ({_signed(best.delta_pp, ' pts')}, "
        f"95% CI {_signed(low, '')} to {_signed(high, '')})"
    ]
    if best.cost.savings is not None:
        share = abs(best.cost.savings) * 100
        parts.append(f"{share:.0f}% {'cheaper' if best.cost.savings >= 0 else 'dearer'} per completed task")
    elif best.cost.note and not best.cost.comparable:
        parts.append("cost not comparable (different cost bases)")
    if best.e2e_p50_pct is not None:
        parts.append(f"p50 end-to-end latency {_signed(best.e2e_p50_pct, '%')} on the tasks both scored")
    return ", ".join(parts)


def decide(
    rows: Sequence[ModelFigures], baseline: str, *, source: str = "named", margin_pp: float | None = None
) -> Decision:
    """Every shown candidate against the row labelled (or named) `baseline`."""
    margin = DEFAULT_MARGIN_PP if margin_pp is None else margin_pp
    base = next((r for r in rows if r.label == baseline), None) or next(
        (r for r in rows if r.model_name == baseline), None
    )
    if base is None:
        raise LookupError(baseline)
    items = tuple(versus(row, base, margin) for row in rows if row is not base)
    summary = _summary(base.label, margin, items)
    notes = [decision_note(base.label, "the baseline", base.text_calls)]
    notes += [decision_note(row.label, "candidate", row.text_calls) for row in rows if row is not base]
    if any(notes):  # a serving-stack result is named on the line that decides (issue 37)
        summary = " ".join([summary.rstrip(".") + ".", *(n for n in notes if n)])
    return Decision(base.label, source, margin, items, summary)
