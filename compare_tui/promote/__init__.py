"""Promote: act on a decision. Make a candidate the workload's baseline, recorded in the store
with what it was decided on, or refuse (nothing written) when its verdict does not allow it.

The rule: a promotion of B is allowed when B's verdict against the comparison's baseline (else
the workload's current one) is `better` or `no worse`. `worse` or `inconclusive` refuse unless
forced with a reason (recorded as `forced`). A workload's first baseline may be set from a
comparison without one (`initial`). Pure planning (`plan_promotion`) apart from the one write
(`Store.record_decision`), so the CLI and the TUI confirm exactly what will be recorded.
"""

from compare_tui.promote.offer import Offer, promotion_offer
from compare_tui.promote.plan import ALLOWED, Promotion, PromotionRefused, VerdictRefused, plan_promotion

__all__ = [
    "ALLOWED",
    "Offer",
    "Promotion",
    "PromotionRefused",
    "VerdictRefused",
    "plan_promotion",
    "promotion_offer",
]
