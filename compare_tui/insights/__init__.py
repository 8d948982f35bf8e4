"""Why a comparison's answers failed (docs/insights.md): failed attempts grouped by cause, the
candidates' discordant tasks against the baseline by tag, and suspect tasks of the golden set.

Pure apart from `load_insight_inputs` (one read of the store through the report's loader):
`build_insights` computes every count once; `render_text`, `render_group` and
`insights_document` lay it out. Nothing runs at import time.
"""

from compare_tui.insights.causes import REFUSAL_PATTERNS, Cause, FailedAttempt, classify, is_refusal
from compare_tui.insights.load import insight_inputs_for, load_insight_inputs
from compare_tui.insights.model import (
    FailureGroup,
    InsightInputs,
    Insights,
    ModelAttempts,
    Suspect,
    TagSplit,
    build_insights,
)
from compare_tui.insights.render import SCHEMA, insights_document, render_group, render_md, render_text

__all__ = [
    "REFUSAL_PATTERNS",
    "SCHEMA",
    "Cause",
    "FailedAttempt",
    "FailureGroup",
    "InsightInputs",
    "Insights",
    "ModelAttempts",
    "Suspect",
    "TagSplit",
    "build_insights",
    "classify",
    "insight_inputs_for",
    "insights_document",
    "is_refusal",
    "load_insight_inputs",
    "render_group",
    "render_md",
    "render_text",
]
