"""`Insights` as plain text (80 columns) and as a JSON document (docs/insights.md, "JSON").

Formatting only: every count and share is `build_insights`'s.
"""

from __future__ import annotations

import textwrap
from typing import Any

from compare_tui.insights.causes import clip
from compare_tui.insights.model import CAPABLE_SHARE, DIRECTIONAL_UNDER, FailureGroup, Insights, Suspect, TagSplit
from compare_tui.insights.traffic import TrafficProblems
from compare_tui.vocabulary import SuspectReason

SCHEMA = "compare-tui.insights/1"
WIDTH = 80
SHOWN = 15
SHOWN_TASKS = 5
"""Task ids named in one sentence; the rest are counted."""
"""Groups, tag lines and suspect tasks shown in text, each; the rest are counted (JSON has all)."""


def _more(hidden: int, what: str) -> list[str]:
    return _wrap(f"… and {hidden} more {what} (--format json lists every one)", "  ") if hidden > 0 else []


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)


def share_text(share: float | None) -> str:
    """A group's share of a model's failed attempts, as every surface spells it (`–`: none failed)."""
    return "–" if share is None else f"{share:.0%}"


GROUPS_TITLE = "Failures by cause (failed attempts; share of the model's failed attempts)"
SUSPECTS_TITLE = "Check your golden set (suspect tasks)"
NO_SUSPECT = "none: no task failed the same way on every model, none unlike its expected text, none flaky"


TRAFFIC_TITLE = "Problems found in the traffic (the logged model's own replies, before any candidate)"


def traffic_lines(traffic: TrafficProblems) -> list[str]:
    """One line per problem of the logged replies (`insights.traffic`)."""
    if not traffic.problems:
        return [f"none among the {traffic.sampled} sampled replies or the sampler's skips"]
    lines = []
    for problem in traffic.problems:
        if problem.examples:
            share = f"{problem.count} of {traffic.sampled} sampled replies"
            lines.append(f"{problem.words}: {share}, e.g. {', '.join(problem.examples)}")
        else:
            lines.append(f"{problem.words}: {problem.count} log lines")
    return lines


def tags_title(insights: Insights) -> str:
    """The heading of the discordant tasks by tag."""
    return (
        f"Against the baseline {insights.baseline}, discordant tasks by tag (a tag with fewer than "
        f"{DIRECTIONAL_UNDER} is directional)"
    )


def split_line(split: TagSplit) -> str:
    """One candidate's discordant tasks on one tag, in one sentence."""
    mark = " (directional)" if split.directional else ""
    total = split.losses + split.wins
    lost = f"; lost e.g. {', '.join(split.lost_examples)}" if split.lost_examples else ""
    return f"{split.candidate}, {split.tag}: worse on {split.losses} of {total}, better on {split.wins}{mark}{lost}"


def unpassed_line(insights: Insights) -> str:
    """The tasks no model passes when no model is capable, in one sentence (empty: none such)."""
    if not insights.unpassed:
        return ""
    measured = sorted((-share, model) for model, share in insights.pass_shares.items() if share is not None)
    field = f"the best, {measured[0][1]}, passes {-measured[0][0]:.0%}" if measured else "none measured"
    shown = ", ".join(insights.unpassed[:SHOWN_TASKS])
    more = f" and {len(insights.unpassed) - SHOWN_TASKS} more" if len(insights.unpassed) > SHOWN_TASKS else ""
    return (
        f"no model passes {len(insights.unpassed)} tasks ({shown}{more}); no model passes "
        f"{CAPABLE_SHARE:.0%} of its tasks ({field}), so these say more about the models than "
        "about the expected outcomes: not marked suspect"
    )


def suspect_line(suspect: Suspect) -> str:
    """A suspect task and why it is one."""
    if suspect.reason is SuspectReason.SAME_FAILURE:
        return f"{suspect.task_id}: every model fails it the same way: {suspect.detail}"
    if suspect.reason is SuspectReason.UNLIKE_EXPECTED:
        return f"{suspect.task_id}: every model fails it and {suspect.detail}"
    return f"{suspect.task_id}: flaky: {suspect.detail}"


def render_text(insights: Insights) -> str:
    """The insights for a terminal: failure groups, the baseline's discordant tasks by tag,
    suspect tasks; every line at most 80 columns (a long task id or label wraps)."""
    title = f"Insights of {insights.ref}" + (f" ({insights.comparison_name})" if insights.comparison_name else "")
    lines = _wrap(title, "")
    totals = ", ".join(f"{m} {insights.failed[m]} of {insights.attempts[m]}" for m in insights.models)
    lines += _wrap(f"Failed attempts: {totals}.", "")
    lines.append("")
    lines.append(GROUPS_TITLE)
    if not insights.groups:
        lines.append("  no failed attempt")
    for group in insights.groups[:SHOWN]:
        lines += _wrap(f"{group.number}. {group.cause.words()}", "  ")
        counts = " · ".join(f"{m} {group.counts[m]} ({share_text(group.shares[m])})" for m in insights.models)
        lines += _wrap(counts, "     ")
        lines += _wrap(f"e.g. {', '.join(group.examples)}", "     ")
        lines += _wrap(f"open: {insights.open_command(group)}", "     ")
    lines += _more(len(insights.groups) - SHOWN, "groups")
    if insights.baseline is not None and len(insights.models) > 1:
        lines.append("")
        lines += _wrap(tags_title(insights), "")
        if not insights.tag_splits:
            lines.append("  no discordant task")
        for split in insights.tag_splits[:SHOWN]:
            lines += _wrap(split_line(split), "  ")
        lines += _more(len(insights.tag_splits) - SHOWN, "tags")
    lines.append("")
    lines.append(SUSPECTS_TITLE)
    if unpassed_line(insights):
        lines += _wrap(unpassed_line(insights), "  ")
    elif not insights.suspects:
        lines += _wrap(NO_SUSPECT, "  ")
    for suspect in insights.suspects[:SHOWN]:
        lines += _wrap(suspect_line(suspect), "  ")
    lines += _more(len(insights.suspects) - SHOWN, "suspect tasks")
    if insights.traffic is not None:
        lines += ["", *_wrap(TRAFFIC_TITLE, "")]
        for line in traffic_lines(insights.traffic):
            lines += _wrap(line, "  ")
    for note in insights.notes:
        lines += ["", *_wrap(f"Note: {note}", "")]
    return "\n".join(lines) + "\n"


def render_group(insights: Insights, group: FailureGroup) -> str:
    """A group's failed attempts one by one: model, task, attempt, the scorer's detail and the
    answer's first characters."""
    lines = _wrap(f"Group {group.number} of {insights.ref}: {group.cause.words()}", "")
    lines += _wrap(f"{group.total} failed attempt{'' if group.total == 1 else 's'}", "")
    for member in group.members:
        failed = member.failed
        lines.append("")
        lines += _wrap(f"{failed.task_id} · {member.model} · attempt {failed.attempt}", "  ")
        if failed.detail:
            lines += _wrap(f"detail: {clip(failed.detail, 200)}", "    ")
        answer = clip(failed.answer_head, 120) if failed.answer_head.strip() else "(no text)"
        lines += _wrap(f"answer: {answer}", "    ")
    return "\n".join(lines) + "\n"


def insights_document(insights: Insights) -> dict[str, Any]:
    """The JSON document (`SCHEMA`; its fields are described in docs/insights.md)."""
    return {
        "schema": SCHEMA,
        "ref": insights.ref,
        "name": insights.comparison_name,
        "baseline": insights.baseline,
        "models": [
            {"model": m, "attempts": insights.attempts[m], "failed": insights.failed[m]} for m in insights.models
        ],
        "groups": [
            {
                "number": g.number,
                "cause": g.cause.kind.value,
                "label": g.cause.label,
                "words": g.cause.words(),
                "total": g.total,
                "counts": dict(g.counts),
                "shares": dict(g.shares),
                "examples": list(g.examples),
                "open": insights.open_command(g),
                "attempts": [
                    {"model": m.model, "task": m.failed.task_id, "attempt": m.failed.attempt} for m in g.members
                ],
            }
            for g in insights.groups
        ],
        "against_baseline": [
            {
                "candidate": s.candidate,
                "tag": s.tag,
                "losses": s.losses,
                "wins": s.wins,
                "directional": s.directional,
                "lost_examples": list(s.lost_examples),
                "won_examples": list(s.won_examples),
            }
            for s in insights.tag_splits
        ],
        "suspects": [{"task": s.task_id, "reason": s.reason.value, "detail": s.detail} for s in insights.suspects],
        "unpassed": list(insights.unpassed),
        "pass_shares": dict(insights.pass_shares),
        "notes": list(insights.notes),
        "traffic": None
        if insights.traffic is None
        else {
            "sampled": insights.traffic.sampled,
            "problems": [
                {"kind": p.kind, "words": p.words, "count": p.count, "examples": list(p.examples)}
                for p in insights.traffic.problems
            ],
        },
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(insights: Insights) -> str:
    """The insights as a Markdown section (`## Insights`), for `report --format md`: the same
    groups, tags and suspect tasks as the text, as tables (the first `SHOWN` of each)."""
    lines = ["## Insights: why answers failed", ""]
    if not insights.groups:
        lines += ["No failed attempt.", ""]
    else:
        lines += [
            "Every failed attempt (fail or error) in one group, by its first cause "
            "(`compare-tui insights` explains the order); a share is of the model's own failed attempts. "
            f"Open a group's attempts with `compare-tui insights {insights.ref} --group N`.",
            "",
            "| # | cause | " + " | ".join(_cell(m) for m in insights.models) + " | e.g. tasks |",
            "|---:|---|" + "---:|" * len(insights.models) + "---|",
        ]
        for g in insights.groups[:SHOWN]:
            counts = " | ".join(f"{g.counts[m]} ({share_text(g.shares[m])})" for m in insights.models)
            lines.append(f"| {g.number} | {_cell(g.cause.words())} | {counts} | {_cell(', '.join(g.examples))} |")
        if len(insights.groups) > SHOWN:
            hidden = len(insights.groups) - SHOWN
            lines += ["", f"… and {hidden} more groups (`compare-tui insights --format json` lists every one)."]
        lines.append("")
    if insights.baseline is not None and len(insights.models) > 1 and insights.tag_splits:
        lines += [
            f"Against the baseline {_cell(insights.baseline)}, discordant tasks by tag "
            f"(fewer than {DIRECTIONAL_UNDER}: directional).",
            "",
            "| candidate | tag | worse on | better on | lost e.g. |",
            "|---|---|---:|---:|---|",
        ]
        for s in insights.tag_splits[:SHOWN]:
            mark = " (directional)" if s.directional else ""
            lines.append(
                f"| {_cell(s.candidate)} | {_cell(s.tag)}{mark} | {s.losses} | {s.wins} | "
                f"{_cell(', '.join(s.lost_examples))} |"
            )
        lines.append("")
    if insights.unpassed:
        lines += [f"Check your golden set: {_cell(unpassed_line(insights))}.", ""]
    if insights.suspects:
        lines += ["Check your golden set:", ""]
        for suspect in insights.suspects[:SHOWN]:
            lines.append(f"- `{suspect.task_id}`: {_cell(suspect_line(suspect).removeprefix(suspect.task_id + ': '))}")
        if len(insights.suspects) > SHOWN:
            lines.append(f"- … and {len(insights.suspects) - SHOWN} more")
        lines.append("")
    if insights.traffic is not None:
        lines += [f"{TRAFFIC_TITLE}:", "", *(f"- {_cell(line)}" for line in traffic_lines(insights.traffic)), ""]
    return "\n".join(lines)
