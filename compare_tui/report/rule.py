"""The recommendation and its confidence, by the report's fixed rule.

The rule, exactly:
- no recommendation when no model completed a task;
- otherwise the winner is the model with the highest pass rate (a tie has no single winner);
- confidence is **low** when fewer than two models completed tasks, a required figure is
  missing (a row refused included), any task still needs human review, the winner completed
  fewer than five tasks, or the lead is under five percentage points (or there is no second
  pass rate to measure a lead against);
- **high** only when the lead is ten points or more and no low condition applies;
- **medium** otherwise.

Pass rates are compared as exact fractions, so 60 % − 50 % is a lead of exactly ten points
(in floating point it would be 9.999… and miss "high").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

RULE_LABEL = "the report's own rating, by a fixed rule: a measurement on your tasks, not a decision"
LOW_LEAD = Fraction(5, 100)
HIGH_LEAD = Fraction(10, 100)
MIN_WINNER_COMPLETED = 5
CONFIDENCE_ORDER = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Standing:
    """One shown model as the rule sees it."""

    model: str
    passed: int
    scored: int
    completed: int
    missing: tuple[str, ...] = ()
    """Required figures that could not be computed."""
    awaiting_review: int = 0


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The rule's verdict. `confidence` is None exactly when there is no recommendation."""

    winner: str | None
    tied: tuple[str, ...]
    """The models sharing the highest pass rate when there is no single winner."""
    runner_up: str | None
    lead_points: float | None
    """Winner's pass rate minus the next best, in percentage points."""
    confidence: str | None
    reasons: tuple[str, ...]
    """Why the confidence is what it is (every low condition that applies)."""
    summary: str
    label: str = RULE_LABEL


def _rate(standing: Standing) -> Fraction:
    return Fraction(standing.passed, standing.scored)


def recommend(standings: Sequence[Standing], refused: Sequence[str] = ()) -> Recommendation:
    """Apply the fixed rule to the shown models; `refused` names the rows not shown."""
    if not any(s.completed for s in standings):
        return Recommendation(
            None, (), None, None, None, ("no model completed a task",), "No recommendation: no model completed a task."
        )
    ranked = sorted((s for s in standings if s.scored), key=_rate, reverse=True)
    if not ranked:
        return Recommendation(
            None,
            (),
            None,
            None,
            None,
            ("no model has a scored task",),
            "No recommendation: every completed task was scored by a person, so no model has a pass rate.",
        )
    top = _rate(ranked[0])
    leaders = [s for s in ranked if _rate(s) == top]
    others = [s for s in ranked if _rate(s) < top]
    if len(leaders) > 1:
        lead: Fraction | None = Fraction(0)
    elif others:
        lead = top - _rate(others[0])
    else:
        lead = None  # one model with a pass rate: nothing to lead
    winner = leaders[0] if len(leaders) == 1 else None
    runner_up = others[0].model if winner and others else None
    reasons = _low_reasons(standings, refused, leaders[0], lead)
    if reasons or lead is None:  # a lone model has no lead; `_low_reasons` says why
        confidence = "low"
    elif lead >= HIGH_LEAD:
        confidence = "high"
        reasons = [f"the lead is {_points(lead)} points (ten or more) and no condition for low applies"]
    else:
        confidence = "medium"
        reasons = [f"the lead is {_points(lead)} points: five or more but under ten"]
    if winner is not None:
        summary = f"Recommended: {winner.model} (highest pass rate, {_points(top)} %), confidence {confidence}."
    else:
        names = " and ".join(s.model for s in leaders)
        summary = f"No single winner: {names} tie at {_points(top)} %; confidence {confidence}."
    return Recommendation(
        winner=winner.model if winner else None,
        tied=tuple(s.model for s in leaders) if winner is None else (),
        runner_up=runner_up,
        lead_points=float(lead * 100) if lead is not None else None,
        confidence=confidence,
        reasons=tuple(reasons),
        summary=summary,
    )


def _low_reasons(
    standings: Sequence[Standing], refused: Sequence[str], leader: Standing, lead: Fraction | None
) -> list[str]:
    reasons = []
    if sum(1 for s in standings if s.completed) < 2:
        reasons.append("fewer than two models completed tasks")
    for standing in standings:
        for figure in standing.missing:
            reasons.append(f"a required figure is missing for {standing.model}: {figure}")
    for model in refused:
        reasons.append(f"a required figure is missing: the row of {model} was refused")
    waiting = [(s.model, s.awaiting_review) for s in standings if s.awaiting_review]
    if len(waiting) == 1:
        model, count = waiting[0]
        tasks, verb = ("1 task", "needs") if count == 1 else (f"{count} tasks", "need")
        reasons.append(f"{tasks} of {model} still {verb} human review")
    elif waiting:  # answers, not tasks: the same task waits once per model
        total = sum(count for _, count in waiting)
        reasons.append(
            f"{total} answers still need human review ("
            + ", ".join(f"{count} of {model}" for model, count in waiting)
            + ")"
        )
    if leader.completed < MIN_WINNER_COMPLETED:
        reasons.append(
            f"the leading model completed only {leader.completed} task"
            f"{'s' if leader.completed != 1 else ''} (fewer than {MIN_WINNER_COMPLETED})"
        )
    if lead is None:
        reasons.append("there is no second pass rate to measure a lead against")
    elif lead < LOW_LEAD:
        reasons.append(f"the lead is {_points(lead)} points, under five")
    return reasons


def _points(share: Fraction) -> str:
    return f"{float(share * 100):.1f}"


def meets(confidence: str | None, required: str) -> bool:
    """Whether `confidence` is at least `required` (`low` < `medium` < `high`)."""
    if confidence is None:
        return False
    return CONFIDENCE_ORDER.index(confidence) >= CONFIDENCE_ORDER.index(required)
