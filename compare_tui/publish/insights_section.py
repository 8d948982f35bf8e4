"""The published page's Insights section (`compare-tui insights`): failure groups, discordant
tasks by tag, suspect tasks; and report.json's `insights`, masked as every text from the store.

Layout only: every count, share and sentence is `compare_tui.insights`'s.
"""

from __future__ import annotations

from typing import Any

from compare_tui.insights import Insights
from compare_tui.insights.render import (
    GROUPS_TITLE,
    NO_SUSPECT,
    SHOWN,
    SUSPECTS_TITLE,
    TRAFFIC_TITLE,
    share_text,
    split_line,
    suspect_line,
    tags_title,
    traffic_lines,
)
from compare_tui.publish.details import Masker
from compare_tui.publish.html import bullets, column_table, esc, section
from compare_tui.report.fit import Column


def insights_section(insights: Insights | None, mask: Masker) -> str:
    """The section (`id="insights"`), or nothing when no insights were read."""
    if insights is None:
        return ""
    groups = insights.groups[:SHOWN]
    parts = [f"<h3>{esc(GROUPS_TITLE)}</h3>"]
    if not groups:
        parts.append("<p>No failed attempt.</p>")
    else:
        columns = [
            Column("#", tuple(str(g.number) for g in groups)),
            Column("cause", tuple(mask(g.cause.words()) for g in groups), "text"),
            *(
                Column(mask(m), tuple(f"{g.counts[m]} ({share_text(g.shares[m])})" for g in groups))
                for m in insights.models
            ),
            Column("e.g. tasks", tuple(mask(", ".join(g.examples)) for g in groups), "text"),
        ]
        parts.append(column_table(columns, "insight-groups"))
        parts.append(
            f'<p class="note">A share is of the model\'s own failed attempts. '
            f"<code>compare-tui insights {esc(insights.ref)} --group N</code> lists a group's attempts"
            + (
                f"; {len(insights.groups) - SHOWN} more groups are in report.json"
                if len(insights.groups) > SHOWN
                else ""
            )
            + ".</p>"
        )
    if insights.baseline is not None and len(insights.models) > 1:
        parts.append(f"<h3>{esc(mask(tags_title(insights)))}</h3>")
        parts.append(bullets((mask(split_line(s)) for s in insights.tag_splits[:SHOWN]), "insight-tags"))
        if not insights.tag_splits:
            parts.append("<p>No discordant task.</p>")
    parts.append(f"<h3>{esc(SUSPECTS_TITLE)}</h3>")
    parts.append(bullets((mask(suspect_line(s)) for s in insights.suspects[:SHOWN]), "insight-suspects"))
    if not insights.suspects:
        parts.append(f"<p>{esc(NO_SUSPECT.capitalize())}.</p>")
    if insights.traffic is not None:
        parts.append(f"<h3>{esc(TRAFFIC_TITLE)}</h3>")
        parts.append(bullets((mask(line) for line in traffic_lines(insights.traffic)), "insight-traffic"))
    return section("insights", "Insights: why answers failed", *parts)


def masked_document(document: Any, mask: Masker) -> Any:
    """`document` (the insights' JSON) with every string masked: labels quote answers."""
    if isinstance(document, str):
        return mask(document)
    if isinstance(document, list):
        return [masked_document(item, mask) for item in document]
    if isinstance(document, dict):
        return {mask(key): masked_document(value, mask) for key, value in document.items()}
    return document
