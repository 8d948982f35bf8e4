"""The analyst's checked review as text (after the insights) and as JSON (`analyst`)."""

from __future__ import annotations

import textwrap
from typing import Any

from compare_tui.judge.analyst.ask import AnalystReview
from compare_tui.judge.run.usage import JudgeUsage

WIDTH = 80


def usage_sentence(usage: JudgeUsage) -> str:
    """The analyst's own cost, apart from every model's figures."""
    cost = "not shown" if usage.cost is None else f"{usage.cost:.6f} {usage.currency}"
    latency = usage.latency_ms.p50
    took = "" if latency is None else f", {latency / 1000:.2f} s"
    return (
        f"Analyst cost (apart from every model's figures): {usage.calls} call{took}; tokens "
        f"{usage.prompt_tokens:,} in / {usage.completion_tokens:,} out; cost {cost} — {usage.cost_note}."
    )


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)


def render_review(review: AnalystReview) -> str:
    """The kept sentences (summary, then insights), the dropped ones counted with why, the cost."""
    lines = _wrap(
        f"Analyst {review.model} ({review.provenance}; opt-in: its words, each sentence checked "
        "against the groups and tasks it cites; the decision's statistics stay the report's)"
    )
    if review.error is not None:
        lines += _wrap(f"no reply: {review.error}", "  ")
    for kind in ("summary", "insight"):
        kept = [c for c in review.kept if c.kind == kind]
        if kept:
            lines.append(f"  {kind.capitalize()}:")
            for claim in kept:
                lines += _wrap(f"- {claim.text}", "    ")
    dropped = review.dropped
    if review.error is None:
        lines += _wrap(
            f"{len(review.kept)} sentences kept, {len(dropped)} dropped (a citation the data does not bear out)", "  "
        )
    for claim in dropped:
        lines += _wrap(f"dropped: {claim.text} — {claim.dropped}", "    ")
    lines += _wrap(usage_sentence(review.usage), "  ")
    return "\n".join(lines) + "\n"


def review_document(review: AnalystReview) -> dict[str, Any]:
    usage = review.usage
    return {
        "model": review.model,
        "provenance": review.provenance,
        "error": review.error,
        "claims": [
            {"kind": c.kind, "text": c.text, "groups": list(c.groups), "tasks": list(c.tasks), "dropped": c.dropped}
            for c in review.claims
        ],
        "kept": len(review.kept),
        "dropped": len(review.dropped),
        "usage": {
            "calls": usage.calls,
            "failed": usage.failed,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "e2e_ms": usage.latency_ms.p50,
            "cost": usage.cost,
            "currency": usage.currency,
            "cost_note": usage.cost_note,
        },
    }
