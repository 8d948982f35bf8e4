"""Beside the rule (never changing it): is the lead larger than noise?

For two models, only the tasks both scored are compared, task by task: the 2×2 table of
flips, McNemar's exact test on the tasks where they disagree, and the 95% interval of the
pass-rate difference (Tango's score interval, made to agree with the exact test: it excludes
zero exactly when p < 0.05). When the interval includes zero the report says "the lead is
within noise" and how many tasks would give 80 % power to show the lead by that same exact
test (`report.power.plan_tasks`: planned for a discordance as high as the pilot allows, the
power computed exactly, not by a normal formula). No figure depends on a seed.

With a baseline, the pairs shown are the decision's own (candidate − baseline, at its level):
one interval per pair on the page, and the tasks needed are the decision's (`plan=False` here).
Without one, each pair is the leader against another model at 95 %, for that pair alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from compare_tui.report.figures import Block, ModelFigures
from compare_tui.report.formatting import bound
from compare_tui.report.power import TasksNeeded, need_words, plan_tasks
from compare_tui.report.rule import Recommendation
from compare_tui.report.stats import Interval, mcnemar_exact, paired_interval
from compare_tui.vocabulary import MISSING, Outcome

_SCORED = ("pass", "fail", "error")


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Model A (the leader) against model B on the tasks both scored."""

    model_a: str
    run_a: str
    model_b: str
    run_b: str
    tasks: int
    """Tasks both runs scored (not human, pass/fail/error in both)."""
    both: int
    only_a: int
    only_b: int
    neither: int
    difference: float | None
    """Pass rate of A minus pass rate of B on these tasks (a share, not points)."""
    interval: Interval | None
    """The `level` interval of `difference` (`PAIRED_METHOD`); excludes zero exactly when
    `mcnemar_p` < 1 − `level`."""
    mcnemar_p: float | None
    within_noise: bool | None
    """True when `interval` includes zero."""
    tasks_needed: int | None
    """Paired tasks (in all) for 80 % power to show the lead by the exact McNemar test at flip
    rates like these, when within noise (None: not within noise, no lead, or out of reach)."""
    more_tasks: int | None
    """`tasks_needed` minus the tasks compared, when the lead is within noise (else None)."""
    sentence: str
    left_out: tuple[tuple[str, int], ...] = ()
    """Tasks of the report not in `tasks`, by reason (e.g. "not done by B": 2), most first."""
    level: float = 0.95
    """The confidence level of `interval` (0.95; lower per candidate in a decision over several)."""
    plan: TasksNeeded | None = None
    """The plan behind `tasks_needed` (None where there is none, or the decision states it)."""


def paired_comparisons(rows: Sequence[ModelFigures], recommendation: Recommendation) -> tuple[PairedComparison, ...]:
    """The leader (the winner, else the first tied or first model) against each other model."""
    if len(rows) < 2:
        return ()
    leader_name = recommendation.winner or (recommendation.tied[0] if recommendation.tied else rows[0].label)
    leader = next((r for r in rows if r.label == leader_name), rows[0])
    return tuple(paired(leader, other) for other in rows if other is not leader)


def paired(a: ModelFigures, b: ModelFigures, level: float = 0.95, *, plan: bool = True) -> PairedComparison:
    """The paired comparison of two runs whose blocks are over the same tasks, in order, with
    its interval at `level`. `plan` False: no tasks needed here (the decision states them)."""
    both = only_a = only_b = neither = 0
    left_out: Counter[str] = Counter()
    for block_a, block_b in zip(a.blocks, b.blocks, strict=True):
        if not both_scored(block_a, block_b):
            left_out[_why_left_out(a.label, block_a, b.label, block_b)] += 1
            continue
        passed_a, passed_b = block_a.status == Outcome.PASS, block_b.status == Outcome.PASS
        if passed_a and passed_b:
            both += 1
        elif passed_a:
            only_a += 1
        elif passed_b:
            only_b += 1
        else:
            neither += 1
    tasks = both + only_a + only_b + neither
    if tasks == 0:
        return PairedComparison(
            a.label,
            a.run_id,
            b.label,
            b.run_id,
            0,
            0,
            0,
            0,
            0,
            None,
            None,
            None,
            None,
            None,
            None,
            f"{a.label} and {b.label} scored no task in common, so they cannot be compared task by task.",
            tuple(sorted(left_out.items(), key=lambda item: (-item[1], item[0]))),
        )
    difference = (only_a - only_b) / tasks
    interval = paired_interval(only_a, only_b, both + neither, level)
    assert interval is not None  # tasks > 0
    p_value = mcnemar_exact(only_a, only_b)
    within = interval.contains(0.0)
    leader, other = (only_a, only_b) if only_a >= only_b else (only_b, only_a)
    need = plan_tasks(leader, other, tasks, margin=None, level=level) if plan and within and only_a != only_b else None
    needed = None if need is None else need.tasks
    more = max(0, needed - tasks) if needed is not None else None
    sentence = _sentence(a.label, b.label, tasks, difference, interval, p_value, within, need, level, plan)
    reasons = tuple(sorted(left_out.items(), key=lambda item: (-item[1], item[0])))
    if reasons:
        sentence += " Left out: " + "; ".join(f"{n} {why}" for why, n in reasons) + "."
    return PairedComparison(
        a.label,
        a.run_id,
        b.label,
        b.run_id,
        tasks,
        both,
        only_a,
        only_b,
        neither,
        difference,
        interval,
        p_value,
        within,
        needed,
        more,
        sentence,
        reasons,
        level,
        need,
    )


def both_scored(block_a: Block, block_b: Block) -> bool:
    """The task counts in a paired comparison: automatically scored (pass, fail or error) by both."""
    return not (block_a.human or block_b.human) and block_a.status in _SCORED and block_b.status in _SCORED


def _why_left_out(name_a: str, block_a: Block, name_b: str, block_b: Block) -> str:
    """Why a task is not in the task-by-task comparison, in words."""
    if block_a.human or block_b.human:
        return "scored by a person"
    if block_a.status == MISSING and block_b.status == MISSING:
        return "not done by either"
    for name, block in ((name_a, block_a), (name_b, block_b)):
        if block.status == MISSING:
            return f"not done by {name} (nothing measured)"
    return "awaiting a person's review"


def _sentence(
    name_a: str,
    name_b: str,
    tasks: int,
    difference: float,
    interval: Interval,
    p_value: float,
    within: bool,
    need: TasksNeeded | None,
    level: float = 0.95,
    plan: bool = True,
) -> str:
    whose = "" if plan else ", the decision's,"
    span = (
        f"the {level * 100:.3g}% interval of the difference ({name_a} − {name_b}){whose} runs from "
        f"{bound(interval.low * 100)} to {bound(interval.high * 100)} points (McNemar exact p = {p_value:.3g})"
    )
    if not within:
        direction = "higher" if difference > 0 else "lower"
        return (
            f"The lead is larger than noise: on the {tasks} tasks both scored, {name_a}'s pass rate is "
            f"{abs(difference) * 100:.1f} points {direction} than {name_b}'s; {span}."
        )
    what = "The lead" if plan else "The difference"
    text = f"{what} is within noise: on the {tasks} tasks both scored, {span} and includes zero."
    if difference == 0:
        return text + " The two pass the same number of these tasks, so there is no lead to resolve."
    if not plan:
        return text + " The tasks that would settle it are the decision's, above."
    if need is None or need.tasks is None:
        return text + " More than 20,000 tasks would be needed to show a lead of this size."
    return text + f" To show a lead of this size by this exact test: {need_words(need, tasks)}."
