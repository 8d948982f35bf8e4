"""Candidates for a workload, chosen like a buyer (docs/catalogue.md, "Choosing candidates"):
today's model with its price and recent spend, each catalogue model's blended price at the
workload's token mix, projected savings, measured quality from this store's past runs, price
groups and the recommended pre-selection. `models list --for SET` and the New run screen show
the same `Shortlist`."""

from compare_tui.candidates.load import load_shortlist
from compare_tui.candidates.measure import (
    SPEND_WINDOWS_DAYS,
    GatewayRequest,
    ModelMeasures,
    Quality,
    measures_of,
    read_gateway_log,
    recent_spend,
)
from compare_tui.candidates.model import (
    DEFAULT_MIX,
    RECOMMENDED_MEASURED,
    SAME_BAND,
    BlendedPrice,
    Candidate,
    Shortlist,
    TodaysModel,
    TokenMix,
    build_shortlist,
    shortlist_json,
)

__all__ = [
    "DEFAULT_MIX",
    "RECOMMENDED_MEASURED",
    "SAME_BAND",
    "SPEND_WINDOWS_DAYS",
    "BlendedPrice",
    "Candidate",
    "GatewayRequest",
    "ModelMeasures",
    "Quality",
    "Shortlist",
    "TodaysModel",
    "TokenMix",
    "build_shortlist",
    "load_shortlist",
    "measures_of",
    "read_gateway_log",
    "recent_spend",
    "shortlist_json",
]
