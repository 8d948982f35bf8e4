"""What the report screen's Promote key offers (`promotion_offer`): the candidate to promote, or
the sentence saying why there is none. Pure; `plan_promotion` then decides what is recorded."""

from __future__ import annotations

from dataclasses import dataclass

from compare_tui.promote.plan import ALLOWED
from compare_tui.report.model import Report

NOT_A_COMPARISON = "Promote acts on a comparison of two or more models."


@dataclass(frozen=True, slots=True)
class Offer:
    """The model a Promote key offers on a report, or (`model` None) why there is none."""

    model: str | None
    note: str = ""
    """When there is no model: the sentence for the user."""
    initial: bool = False
    """The model would be the workload's first baseline (no decision, no baseline yet)."""


def promotion_offer(report: Report, current_baseline: str | None) -> Offer:
    """The decision's best candidate (allowed by its verdict, else the first compared), or without
    a baseline the recommended model; never the workload's `current_baseline` itself (the
    comparison may name another model as its own baseline)."""
    if report.comparison_id is None:
        return Offer(None, NOT_A_COMPARISON)
    decision = report.decision
    versus = [v for v in decision.versus if v.model_name != current_baseline] if decision else []
    allowed = [v for v in versus if v.verdict in ALLOWED]
    model = allowed[0].model_name if allowed else (versus[0].model_name if versus else None)
    if model is None and decision is None:
        model = report.recommendation.winner
    if model is None or model == current_baseline:
        if current_baseline and (model == current_baseline or decision is not None):
            note = f"{current_baseline} is already the baseline of {report.goldset.workload_id}; no other candidate to promote."
        else:
            note = "There is no candidate to promote."
        return Offer(None, note)
    return Offer(model, initial=decision is None and current_baseline is None)
