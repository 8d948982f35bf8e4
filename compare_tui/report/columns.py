"""The columns of the report's tables, spelled once for every surface that draws them (the
text report, the TUI): headers, cells (`report.formatting`), and which columns may be left
out at a narrow width (`report.fit`), lowest drop rank first. Pure: no Rich, no Textual."""

from __future__ import annotations

from collections.abc import Iterable

from compare_tui.report import formatting as fmt
from compare_tui.report.decision import Versus
from compare_tui.report.figures import Counts
from compare_tui.report.fit import Column
from compare_tui.report.model import Report
from compare_tui.report.power import need_words, plan_basis
from compare_tui.report.sequential_run import candidate_words
from compare_tui.vocabulary import BaselineSource

UTILISATION_DROP_RANKS = {0.10: 0, 0.75: 1, 0.25: 2, 0.50: 3}
"""At a narrow width the extremes' neighbours go first; full utilisation is always shown."""

TITLES = {
    "pass": "Pass rate of the scored tasks (human tasks apart)",
    "latency": "Latency (one value per completed task) and tokens",
    "cost": "Provenance, GPU memory and cost",
    "utilisation": "Hardware cost per completed task by utilisation",
    "paired": "Is the lead larger than noise? (paired, on tasks both scored)",
    "versus": "Versus the baseline (paired, on tasks both scored; Δ = candidate − baseline)",
}
PASS_RATE_CAPTION = (
    "pass rate = ✓ ÷ (✓ + ✗ + !) over the tasks a scorer checked (a person's verdict on a "
    "flagged one replaces the scorer's); human tasks never enter it: human ✓/✗/? = passed, "
    "failed, waiting"
)
LATENCY_CAPTION = "tokens/task = prompt + completion per completed task, summed over every attempt"


def _number(header: str, cells: Iterable[str], drop_rank: int | None = None) -> Column:
    return Column(header, tuple(cells), "number", drop_rank)


WINNER_MARK = " ★"
"""After the recommended model's label (a cell cut short keeps it: `tui.widgets.report_tables.shorten`)."""


def labels(report: Report) -> tuple[str, ...]:
    """Each model's label, the recommended one marked with ★."""
    winner = report.recommendation.winner
    return tuple(row.label + (WINNER_MARK if row.label == winner else "") for row in report.models)


def pass_rate_columns(report: Report) -> list[Column]:
    rows = report.models
    as_text = (
        # Only when a scorer accepted calls written as text (`accept_text_calls`): those passes
        # are the model's, not its serving stack's, and a team reads them apart.
        [_number("✓ as text", (str(r.text_calls.passed_as_text) for r in rows), 6)]
        if any(r.text_calls.passed_as_text for r in rows)
        else []
    )
    return [
        Column("model", labels(report), "label"),
        _number("pass rate", (fmt.pass_rate(r.pass_rate) for r in rows)),
        _number("95% CI", (fmt.interval(r.pass_rate.interval) for r in rows), 5),
        _number("✓ pass", (str(r.pass_rate.passed) for r in rows), 1),  # also in "(7/10)"
        *as_text,
        _number("✗ fail", (str(r.pass_rate.scored - r.pass_rate.passed - r.pass_rate.errored) for r in rows), 3),
        _number("! error", (str(r.pass_rate.errored) for r in rows), 4),
        _number("human ✓/✗/?", (human_counts(r.counts) for r in rows), 2),
        _number("· not done", (str(r.counts.missing) for r in rows), 0),
    ]


def human_counts(counts: Counts) -> str:
    """`2/1/3`: human tasks a person passed / failed, and tasks still waiting for a person (a
    task of another scorer whose attempt asked for review waits too); never in the pass rate."""
    return f"{counts.human_passed}/{counts.human_failed}/{counts.review}"


def latency_columns(report: Report) -> list[Column]:
    rows = report.models
    return [
        Column("model", labels(report), "label"),
        _number("TTFT p50/p95/p99", (fmt.latency(r.latency.ttft_ms) for r in rows), 1),
        _number("E2E p50/p95/p99", (fmt.latency(r.latency.e2e_ms) for r in rows)),
        _number("n", (str(r.latency.e2e_ms.n) for r in rows), 2),
        _number("tokens/task", (fmt.tokens(r.tokens) for r in rows), 0),
    ]


def cost_columns(report: Report) -> list[Column]:
    rows = report.models
    return [
        Column("model", labels(report), "label"),
        Column("provenance", tuple(r.provenance for r in rows), "text"),
        Column("GPU peak", tuple(fmt.gpu(r.gpu) for r in rows), "text"),
        Column("cost basis", tuple(fmt.cost_basis(r.cost, r.gpu) for r in rows), "text"),
        _number("run total", (fmt.money(r.cost.total, r.cost.currency) for r in rows), 0),
        _number("per completed task", (fmt.cost_per_task(r.cost) for r in rows)),
    ]


def utilisation_columns(report: Report) -> list[Column]:
    """Empty when no model is on a hardware cost basis."""
    rows = [row for row in report.models if row.cost.utilisation]
    if not rows:
        return []
    winner = report.recommendation.winner
    columns = [Column("model", tuple(r.label + (WINNER_MARK if r.label == winner else "") for r in rows), "label")]
    for index, point in enumerate(rows[0].cost.utilisation):
        columns.append(
            _number(
                f"{point.utilisation * 100:.0f}%",
                (fmt.money(r.cost.utilisation[index].per_task, r.cost.currency) for r in rows),
                UTILISATION_DROP_RANKS.get(point.utilisation),
            )
        )
    return columns


def paired_title(report: Report) -> str:
    """The paired section's title: with a decision, the decision's own intervals explained
    (candidate − baseline, at its level); without, 95 % for each pair alone, said so when the
    page shows several pairs (their intervals are not adjusted for one another)."""
    if report.decision is not None:
        return (
            "Is the difference larger than noise? The decision's intervals, task by task "
            f"(Δ = candidate − baseline, {fmt.level(report.decision.level)})"
        )
    if len(report.paired) > 1:
        return "Is the lead larger than noise? (paired, on tasks both scored; 95%, unadjusted, for one pair alone)"
    return TITLES["paired"]


def paired_heading(report: Report) -> tuple[str, str]:
    """`paired_title` as a heading and its label: ("Is the lead larger than noise?", "(paired, …)")."""
    question, _, label = paired_title(report).partition("? ")
    return question + "?", label


def paired_columns(report: Report) -> list[Column]:
    pairs = report.paired
    level = fmt.level(pairs[0].level) if pairs else "95%"
    return [
        Column("A", tuple(p.model_a for p in pairs), "label"),
        Column("B", tuple(p.model_b for p in pairs), "label"),
        _number("tasks", (str(p.tasks) for p in pairs)),
        _number("both pass", (str(p.both) for p in pairs), 2),
        _number("only A", (str(p.only_a) for p in pairs)),
        _number("only B", (str(p.only_b) for p in pairs)),
        _number("neither", (str(p.neither) for p in pairs), 1),
        _number("McNemar p", (fmt.DASH if p.mcnemar_p is None else f"{p.mcnemar_p:.3g}" for p in pairs), 3),
        _number(
            f"{level} CI of A − B",
            (
                fmt.DASH if p.interval is None else fmt.points_interval((p.interval.low * 100, p.interval.high * 100))
                for p in pairs
            ),
            0,
        ),
    ]


def versus_columns(report: Report) -> list[Column]:
    """One row per candidate against the baseline (empty without a decision)."""
    if report.decision is None:
        return []
    items = report.decision.versus
    return [
        Column("candidate", tuple(v.candidate for v in items), "label"),
        Column("verdict", tuple(verdict_cell(v) for v in items), "text", whole=True),
        _number("Δ pass", (fmt.signed(v.delta_pp, " pts") for v in items)),
        _number(
            f"{fmt.level(report.decision.level)} CI",
            (fmt.points_interval(v.interval_pp, marks=(-report.decision.margin_pp,)) for v in items),
        ),
        _number(
            "McNemar p", (fmt.DASH if v.paired.mcnemar_p is None else f"{v.paired.mcnemar_p:.3g}" for v in items), 4
        ),
        _number("tasks", (str(v.paired.tasks) for v in items), 3),
        _number("Δ TTFT p50", (fmt.signed(v.ttft_p50_pct, "%", 0) for v in items), 1),
        _number("Δ E2E p50", (fmt.signed(v.e2e_p50_pct, "%", 0) for v in items), 6),
        _number("Δ E2E p95", (fmt.signed(v.e2e_p95_pct, "%", 0) for v in items), 2),
        _number("Δ tokens", (fmt.signed(v.tokens_paired_pct, "%", 0) for v in items), 0),
        _number("Δ cost/task", (fmt.signed(v.cost.change_pct, "%", 0) for v in items), 5),
    ]


def basis_note(v: Versus) -> str:
    """What each Δ of the versus table is over, for one candidate: the latency and token
    figures are paired on the tasks both scored, unlike the per-completed-task tables."""
    return (
        f"{v.candidate}: Δ over the {v.paired.tasks} tasks both scored (latency: the {v.latency_tasks} timed on "
        f"both sides, each task's deciding attempt; tokens: the {v.tokens_tasks} with usage on both, every "
        "attempt); Δ cost per completed task."
    )


def sequential_notes(report: Report) -> list[str]:
    """A `--stop-when-settled` comparison's lines: the verdicts are the confidence sequences',
    where each settled, what was not sent, and that the table's interval is fixed-N, beside."""
    seq = report.sequential
    if seq is None:
        return []
    lines = [
        f"Sequential verdicts (--stop-when-settled): each verdict is its anytime-valid confidence sequence's, "
        f"at {fmt.level(seq.level)}, over the tasks in the order recorded before the first request "
        f"(seed {seq.seed}); {seq.words}."
    ]
    lines += [f"{c.candidate}: {candidate_words(c, seq.total, seq.level)}." for c in seq.candidates]
    lines.append(
        "The table's Δ and CI are the fixed-N figures over the tasks sent, shown beside the sequential "
        "verdict; they are not the test the comparison stopped on."
    )
    return lines


def verdict_cell(v: Versus) -> str:
    """The verdict in a table cell: `no worse (lower)` where the interval lies below zero."""
    if v.verdict is None:
        return fmt.DASH
    return "no worse (lower)" if v.lower_though_no_worse else str(v.verdict)


def needed_words(v: Versus, margin_pp: float) -> str | None:
    """With an inconclusive verdict: the tasks that would show no worse, and better, at 80 % power
    by the verdict's own test, or why no number of tasks like these would."""
    if not v.needed:
        return None
    parts = []
    for need in v.needed:
        goal = f"no worse (within {margin_pp:g} points)" if need.goal == "no worse" else "better"
        parts.append(f"to show it {goal}: {need_words(need, v.paired.tasks, basis=False)}")
    return (
        f"{v.candidate}: inconclusive at {fmt.level(v.level)}; by this same test, "
        + "; ".join(parts)
        + f"; {plan_basis(v.needed[0], v.paired.tasks)}."
    )


BASELINE_SOURCE_WORDS: dict[str, str] = {
    BaselineSource.NAMED: "named for this comparison",
    BaselineSource.WORKLOAD: "the workload's promoted baseline",
    BaselineSource.AFTER_DATA: "chosen after the data, with report --baseline, not the one recorded when it ran",
}


def versus_notes(report: Report) -> list[str]:
    """The sentences under the versus table: rule, margin, level, tasks needed, cost notes, left out."""
    decision = report.decision
    if decision is None:
        return []
    source = BASELINE_SOURCE_WORDS.get(decision.baseline_source, decision.baseline_source)
    lines = [f"Baseline: {decision.baseline} ({source}); {decision.margin_words}. Verdict: {decision.rule}."]
    if decision.multiplicity:
        lines.append(f"Several candidates: {decision.multiplicity}.")
    lines += sequential_notes(report)
    for v in decision.versus:
        if v.verdict is not None:
            lines.append(basis_note(v))
        base_cost = fmt.money(v.cost.baseline_per_task, v.cost.currency)
        cand_cost = fmt.money(v.cost.candidate_per_task, v.cost.currency)
        if v.lower_though_no_worse:
            lines.append(f"{v.candidate}: {v.verdict_words(decision.margin_pp)}.")
        interval = v.interval_pp
        if interval is not None and 0.0 in interval and interval[0] != interval[1] and v.paired.mcnemar_p is not None:
            shown = "worse" if interval[1] == 0 else "better"
            lines.append(
                f"{v.candidate}: its interval ends at exactly 0 because the exact test does not reject "
                f"(McNemar p = {v.paired.mcnemar_p:.2g}, not below {1 - v.level:.3g}), so it is not shown {shown}."
            )
        needed = needed_words(v, decision.margin_pp)
        if needed:
            lines.append(needed)
        if v.cost.note:
            lines.append(
                f"{v.candidate}: cost per completed task {cand_cost} vs {base_cost} for "
                f"{decision.baseline}: {v.cost.note}."
            )
        if v.paired.left_out:
            lines.append(f"{v.candidate}: left out " + "; ".join(f"{n} {why}" for why, n in v.paired.left_out) + ".")
    return lines
