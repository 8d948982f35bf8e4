"""What the analyst is given: the grouped evidence of `compare_tui.insights` (never the raw set),
as numbered groups, tags and suspect tasks, and the instructions that make it cite them."""

from __future__ import annotations

from compare_tui.insights import Insights
from compare_tui.insights.render import share_text, split_line, suspect_line
from compare_tui.judge.prompt.templates import JudgeMessage

TASKS_PER_GROUP = 8
"""Task ids listed per group (the citations it can check are every member's, listed or not)."""
MAX_GROUPS = 20

INSTRUCTIONS = """You review why answers failed in a comparison of language models. You are given \
the evidence, already grouped: numbered failure groups (G1, G2, ...) with counts per model and \
task ids, the candidates' losses against the baseline by task tag, and suspect tasks of the golden \
set. Write plain words for a team lead.

Write at most 6 lines:
SUMMARY: two or three sentences on what fails and where.
INSIGHT: one sentence per line, at most four such lines.

Rules:
- Every sentence ends with its citations in square brackets: a group as [G2], a task as [T:task-id], \
several as [G1, T:task-id].
- Cite only groups and tasks listed below; say only what they show.
- You may say to keep the current model. The decision's statistics are not yours to change."""


def evidence_text(insights: Insights, decision: str | None = None) -> str:
    """The evidence as the analyst reads it (deterministic)."""
    lines = [f"Models: {', '.join(insights.models)}" + (f"; baseline {insights.baseline}" if insights.baseline else "")]
    if decision:
        lines.append(f"The decision (fixed statistics): {decision}")
    lines.append(
        "Failed attempts: " + ", ".join(f"{m} {insights.failed[m]} of {insights.attempts[m]}" for m in insights.models)
    )
    lines.append("")
    lines.append("Failure groups:")
    for group in insights.groups[:MAX_GROUPS]:
        counts = ", ".join(f"{m} {group.counts[m]} ({share_text(group.shares[m])})" for m in insights.models)
        tasks = list(dict.fromkeys(m.failed.task_id for m in group.members))
        shown = ", ".join(tasks[:TASKS_PER_GROUP]) + (
            f" and {len(tasks) - TASKS_PER_GROUP} more" if len(tasks) > TASKS_PER_GROUP else ""
        )
        lines.append(f"G{group.number}: {group.cause.words()}. Failed attempts: {counts}. Tasks: {shown}.")
    if not insights.groups:
        lines.append("none")
    if insights.tag_splits:
        lines += ["", "Against the baseline, by tag:"]
        lines += [f"- {split_line(s)}" for s in insights.tag_splits[:MAX_GROUPS]]
    if insights.suspects:
        lines += ["", "Suspect tasks (check the golden set):"]
        lines += [f"- {suspect_line(s)}" for s in insights.suspects[:MAX_GROUPS]]
    return "\n".join(lines)


def analyst_messages(insights: Insights, decision: str | None = None) -> list[JudgeMessage]:
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": evidence_text(insights, decision)},
    ]
