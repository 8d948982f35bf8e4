"""The decision: each candidate against the baseline, with a verdict by one documented rule.

The baseline is the model the team runs today: named for a comparison (`--baseline`), or the
workload's promoted baseline. Per candidate, on the tasks both scored:

- Δ pass rate in points with its paired 95% interval (L, U) and the exact McNemar p; the
  interval excludes zero exactly when p < 0.05, so the verdict never contradicts the test;
- Δ TTFT p50, Δ end-to-end p50 and p95 over the same tasks (those both scored, each task's
  deciding attempt, passed or not, so a model is not timed on easier tasks than the other; not
  the latency table's one value per completed task), and Δ tokens over the same tasks (every
  attempt's prompt + completion, tasks where both reported usage; `tokens_paired_pct`), in % of
  the baseline; each with the number of tasks it is over (`latency_tasks`, `tokens_tasks`);
  Δ tokens per completed task (`tokens_per_task_pct`) is kept apart, on its own basis;
- Δ cost per completed task, and the **savings** (baseline − candidate) / baseline (the same
  figure, opposite sign: tables show only Δ cost, the decision line says "cheaper"/"dearer"),
  only when both rows have the same cost basis and currency (else both figures, no savings);
- the **verdict**, with margin M (points, default 5):
  `better` when L > 0; `no worse` when L > −M and not better; `worse` when U < 0 and not
  no worse; `inconclusive` otherwise, with the tasks needed for 80 % power to show *no worse*
  and, separately, *better*, by this same test (`report.power.plan_tasks`: planned for as many
  flips as the tasks so far allow, so a pilot's luck does not overpromise); these are the
  report's only "tasks needed" for the pair (the paired section shows this same interval);
- **several candidates** (K > 1): each interval is at 1 − 0.05/K (Bonferroni), so the chance
  that any "Switch" is wrong stays at most 5 %; the level is printed wherever the interval is;
- the **margin** is the one recorded on the comparison when it ran (the manifest's `[decision]
  margin_pp`, else 5); another one asked for at report time is allowed and labelled as chosen
  after the data.

The decision's `action` (switch or keep) is a value: renderers style by it, never by its words.

Pure and deterministic, like the rest of the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from compare_tui.report import formatting as fmt
from compare_tui.report.figures import ModelFigures
from compare_tui.report.paired import PairedComparison, both_scored, paired
from compare_tui.report.power import TasksNeeded, plan_tasks
from compare_tui.report.stats import Interval, Percentiles, paired_interval, percentiles
from compare_tui.report.text_calls import decision_note
from compare_tui.vocabulary import BaselineSource

DEFAULT_MARGIN_PP = 5.0
FAMILY_ALPHA = 0.05
"""The family-wise chance of a wrong "Switch", whatever the number of candidates."""
VERDICT_RULE = (
    "better when the paired interval's lower bound L > 0; no worse when L > −M and not better; "
    "worse when its upper bound U < 0 and not no worse; inconclusive otherwise "
    "(M: the margin, in points)"
)


class DecisionAction(StrEnum):
    """What the decision's line says to do: the value renderers style by."""

    SWITCH = "switch"
    KEEP = "keep"


def family_level(candidates: int) -> float:
    """Each candidate's interval level so that K of them keep a 5 % family-wise error (Bonferroni)."""
    return 1 - FAMILY_ALPHA / max(1, candidates)


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
class SequentialStanding:
    """A candidate's verdict from its confidence sequence (`report.sequential_run`): in a
    `--stop-when-settled` comparison it is the verdict, and its bounds the interval shown."""

    verdict: Verdict
    low_pp: float
    high_pp: float
    tasks: int
    """The look it stands at: the settled one, else the last."""
    total: int
    settled: bool

    @property
    def words(self) -> str:
        """`sequential, settled at task 7 of 20`."""
        if self.settled:
            return f"sequential, settled at task {self.tasks} of {self.total}"
        return f"sequential, not settled after {self.tasks} of {self.total} tasks"


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
    level: float = 0.95
    """The confidence level of `paired.interval` and of the verdict (1 − 0.05/K)."""
    needed: tuple[TasksNeeded, ...] = ()
    """With an inconclusive verdict: tasks for 80 % power to show no worse, then better."""
    interval95: Interval | None = None
    """The plain 95 % interval of the difference (equal to `paired.interval` with one candidate)."""
    latency_tasks: int = 0
    """Tasks both scored with an end-to-end time on both sides: what Δ E2E is over."""
    tokens_paired_pct: float | None = None
    """Δ tokens over the tasks both scored (every attempt's prompt + completion), in % of the
    baseline's: the table's Δ tokens. `tokens_per_task_pct` is per completed task, a figure on
    another basis (a model that passes fewer tasks spreads its tokens over fewer)."""
    tokens_tasks: int = 0
    """Tasks both scored with token usage on both sides: what `tokens_paired_pct` is over."""
    sequential: SequentialStanding | None = None
    """In a `--stop-when-settled` comparison, the verdict from the confidence sequence (then
    `verdict` is its verdict; `paired` keeps the fixed-N figures, shown beside)."""

    @property
    def delta_pp(self) -> float | None:
        return None if self.paired.difference is None else self.paired.difference * 100

    @property
    def interval_pp(self) -> tuple[float, float] | None:
        interval = self.paired.interval
        return None if interval is None else (interval.low * 100, interval.high * 100)

    @property
    def tasks_needed(self) -> int | None:
        """Tasks for 80 % power to show *no worse*, shown with an inconclusive verdict (None:
        not inconclusive, or out of reach)."""
        return next((n.tasks for n in self.needed if n.goal == "no worse"), None)

    @property
    def lower_though_no_worse(self) -> bool:
        """No worse within the margin, though the interval lies wholly below zero: the test
        finds the candidate lower."""
        interval = self.interval_pp
        if self.sequential is not None:  # its interval is the confidence sequence
            return self.verdict is Verdict.NO_WORSE and self.sequential.high_pp < 0
        return self.verdict is Verdict.NO_WORSE and interval is not None and interval[1] < 0

    def verdict_words(self, margin_pp: float) -> str:
        """The verdict in words: `no worse (within 5 points), though lower: p = 0.031 against
        smollm2` where the interval excludes zero on the candidate's losing side."""
        if self.verdict is None:
            return fmt.DASH
        if self.sequential is not None:
            return f"{self.verdict} ({self.sequential.words})"
        if self.lower_though_no_worse:
            return (
                f"no worse (within {margin_pp:g} points), though lower: p = {self.paired.mcnemar_p:.2g} "
                f"against {self.candidate}"
            )
        return str(self.verdict)


@dataclass(frozen=True, slots=True)
class Decision:
    """The versus-baseline half of a report."""

    baseline: str
    """The baseline row's label."""
    baseline_source: BaselineSource
    """How it was chosen (`vocabulary.BaselineSource`): `named` (for this comparison), `workload`
    (the promoted baseline) or `after_data` (`report --baseline`, after seeing the data)."""
    margin_pp: float
    versus: tuple[Versus, ...]
    summary: str
    """The one line that leads the report: switch to a candidate, or keep the baseline."""
    rule: str = VERDICT_RULE
    action: DecisionAction = DecisionAction.KEEP
    chosen: str | None = None
    """The candidate the summary switches to (None: keep the baseline)."""
    level: float = 0.95
    """Each candidate's interval level (1 − 0.05/K, Bonferroni, for K candidates compared)."""
    recorded_margin_pp: float | None = None
    """The margin recorded on the comparison when it ran (None: none recorded)."""

    @property
    def margin_after_data(self) -> bool:
        """The margin differs from the one recorded before the data: chosen after seeing it."""
        return self.recorded_margin_pp is not None and self.recorded_margin_pp != self.margin_pp

    @property
    def margin_words(self) -> str:
        """`margin M = 5 points`, and when it was chosen after the data, that and the recorded one."""
        text = f"margin M = {self.margin_pp:g} points"
        if self.margin_after_data:
            text += f", chosen after the data ({self.recorded_margin_pp:g} was recorded when the comparison ran)"
        return text

    @property
    def multiplicity(self) -> str | None:
        """How several candidates are accounted for, in words (None with one candidate)."""
        compared = sum(1 for v in self.versus if v.verdict is not None)
        if compared < 2:
            return None
        return (
            f"{compared} candidates: each interval at {fmt.level(self.level)} (Bonferroni, 5 % ÷ {compared}), "
            "so the chance that any switch is wrong stays at most 5 %"
        )

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


def paired_tokens(candidate: ModelFigures, baseline: ModelFigures) -> tuple[float | None, int]:
    """Δ tokens in % of the baseline's over the tasks both scored where both reported usage
    (every attempt's prompt + completion), and how many tasks that is."""
    pairs = [
        (c.tokens, b.tokens)
        for c, b in zip(candidate.blocks, baseline.blocks, strict=True)
        if both_scored(c, b) and c.tokens is not None and b.tokens is not None
    ]
    cand, base = sum(c for c, _ in pairs if c is not None), sum(b for _, b in pairs if b is not None)
    return (percent_change(float(cand), float(base)) if pairs else None), len(pairs)


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


def versus(
    candidate: ModelFigures,
    baseline: ModelFigures,
    margin_pp: float,
    level: float = 0.95,
    sequential: SequentialStanding | None = None,
) -> Versus:
    p = paired(candidate, baseline, level=level, plan=False)
    verdict = None if p.interval is None else verdict_for(p.interval.low * 100, p.interval.high * 100, margin_pp)
    if sequential is not None:
        verdict = sequential.verdict
    needed: tuple[TasksNeeded, ...] = ()
    if verdict is Verdict.INCONCLUSIVE and p.tasks and sequential is None:
        needed = (
            plan_tasks(p.only_a, p.only_b, p.tasks, margin=margin_pp / 100, level=level),
            plan_tasks(p.only_a, p.only_b, p.tasks, margin=None, level=level),
        )
    ttft_c, ttft_b, e2e_c, e2e_b = paired_latency(candidate, baseline)
    tokens_pct, tokens_tasks = paired_tokens(candidate, baseline)
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
        level=level,
        needed=needed,
        interval95=p.interval if level == 0.95 else paired_interval(p.only_a, p.only_b, p.both + p.neither),
        latency_tasks=e2e_c.n,
        tokens_paired_pct=tokens_pct,
        tokens_tasks=tokens_tasks,
        sequential=sequential,
    )


def _summary(baseline: str, margin_pp: float, items: Sequence[Versus]) -> tuple[str, Versus | None]:
    """Switch to the best candidate shown better or no worse; else keep the baseline."""
    rank = {Verdict.BETTER: 0, Verdict.NO_WORSE: 1}
    eligible = [v for v in items if v.verdict in rank and v.delta_pp is not None]
    if not eligible:
        if not items:
            return f"Keep {baseline}: there is no candidate to compare against it.", None
        # Nothing measured is never a result: a candidate without one task scored beside the
        # baseline was not compared, and the summary says so instead of calling it not good enough.
        unmeasured = [v.candidate for v in items if v.paired.tasks == 0]
        names = ", ".join(unmeasured)
        if len(unmeasured) == len(items):
            return (
                f"Keep {baseline} for now: {names} not compared with it (no task scored by both); "
                "finish the run (`compare-tui run --resume RUN`) to decide."
            ), None
        tail = f" ({names} not compared: no task scored by both)" if unmeasured else ""
        return f"Keep {baseline}: no candidate is shown no worse within {margin_pp:g} points{tail}.", None

    def key(v: Versus) -> tuple[int, float, float]:
        savings = v.cost.savings if v.cost.savings is not None else float("-inf")
        return (rank[v.verdict] if v.verdict else 9, -savings, -(v.delta_pp or 0.0))

    best = min(eligible, key=key)
    assert best.delta_pp is not None and best.interval_pp is not None
    low, high = best.interval_pp
    if best.verdict is Verdict.BETTER:
        words = f"better than {baseline}"
    elif best.lower_though_no_worse:
        words = f"no worse than {baseline} within {margin_pp:g} points, though lower"
    else:
        words = f"no worse than {baseline}"
    stats_words = (
        f"{fmt.signed(best.delta_pp, ' pts')}, {fmt.level(best.level)} CI {fmt.bound(low)} to {fmt.bound(high)}"
    )
    seq = best.sequential
    if seq is not None:  # the interval of a sequential verdict is its confidence sequence
        stats_words = (
            f"{seq.words}: {fmt.level(best.level)} confidence sequence {fmt.bound(seq.low_pp)} to "
            f"{fmt.bound(seq.high_pp)} pts"
        )
    if best.lower_though_no_worse and seq is None:
        stats_words += f"; McNemar p = {best.paired.mcnemar_p:.2g} against {best.candidate}"
    parts = [f"Switch to candidate {best.candidate}: {words} ({stats_words})"]
    if best.cost.savings is not None:
        share = abs(best.cost.savings) * 100
        parts.append(f"{share:.0f}% {'cheaper' if best.cost.savings >= 0 else 'dearer'} per completed task")
    elif best.cost.note and not best.cost.comparable:
        parts.append("cost not comparable (different cost bases)")
    if best.e2e_p50_pct is not None:
        parts.append(f"p50 end-to-end latency {fmt.signed(best.e2e_p50_pct, '%')} on the tasks both scored")
    return ", ".join(parts), best


def decide(
    rows: Sequence[ModelFigures],
    baseline: str,
    *,
    source: BaselineSource = BaselineSource.NAMED,
    margin_pp: float | None = None,
    recorded_margin_pp: float | None = None,
    sequential: Mapping[str, SequentialStanding] | None = None,
) -> Decision:
    """Every shown candidate against the row labelled (or named) `baseline`, each at the
    Bonferroni level for the candidates compared. `margin_pp` None: the recorded margin, else 5."""
    margin = margin_pp if margin_pp is not None else recorded_margin_pp
    margin = DEFAULT_MARGIN_PP if margin is None else margin
    base = next((r for r in rows if r.label == baseline), None) or next(
        (r for r in rows if r.model_name == baseline), None
    )
    if base is None:
        raise LookupError(baseline)
    others = [row for row in rows if row is not base]
    compared = sum(1 for row in others if any(both_scored(c, b) for c, b in zip(row.blocks, base.blocks, strict=True)))
    level = family_level(compared)
    items = tuple(versus(row, base, margin, level, (sequential or {}).get(row.label)) for row in others)
    summary, best = _summary(base.label, margin, items)
    open_ = [v for v in items if v.sequential is not None and not v.sequential.settled]
    if best is None and open_:
        # A sequential comparison stopped before its verdicts settled: not a verdict of "not good
        # enough", only one not reached yet.
        where = "; ".join(f"{v.candidate} {v.verdict} ({v.sequential.words})" for v in open_ if v.sequential)
        summary = (
            f"Keep {base.label} for now: the sequential verdicts have not settled ({where}); "
            f"`compare-tui run --resume {open_[0].run_id}` goes on where it stopped."
        )
    if recorded_margin_pp is not None and recorded_margin_pp != margin:
        # The decision line itself says so: a margin picked after seeing the data is not the test.
        summary = (
            f"{summary.rstrip('.')} (margin {margin:g} points, chosen after the data; "
            f"{recorded_margin_pp:g} was recorded before it)."
        )
    if source == BaselineSource.AFTER_DATA:
        summary = f"{summary.rstrip('.')} (baseline {base.label} chosen after the data, with report --baseline)."
    notes = [decision_note(base.label, "the baseline", base.text_calls)]
    notes += [decision_note(row.label, "candidate", row.text_calls) for row in others]
    if any(notes):  # a serving-stack result is named on the line that decides
        summary = " ".join([summary.rstrip(".") + ".", *(n for n in notes if n)])
    return Decision(
        base.label,
        source,
        margin,
        items,
        summary,
        action=DecisionAction.KEEP if best is None else DecisionAction.SWITCH,
        chosen=None if best is None else best.candidate,
        level=level,
        recorded_margin_pp=recorded_margin_pp,
    )
