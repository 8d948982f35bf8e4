"""The optional analyst (`compare-tui insights … --analyst MODEL`): a catalogue model given the
grouped evidence of `compare_tui.insights` (never the raw set) writes a short summary and
insights; each sentence must cite groups or tasks, and `claims.check_claims` keeps only those
whose citations the data bears out (the rest are dropped and counted). Its one request goes
through the judge's call and is audited; its cost is shown apart; it never changes a figure.
"""

from compare_tui.judge.analyst.ask import ANALYST_SETTINGS, AnalystRefused, AnalystReview, review_insights
from compare_tui.judge.analyst.claims import Claim, check_claims
from compare_tui.judge.analyst.evidence import analyst_messages, evidence_text
from compare_tui.judge.analyst.render import render_review, review_document, usage_sentence

__all__ = [
    "ANALYST_SETTINGS",
    "AnalystRefused",
    "AnalystReview",
    "Claim",
    "analyst_messages",
    "check_claims",
    "evidence_text",
    "render_review",
    "review_document",
    "review_insights",
    "usage_sentence",
]
