"""The analyst's reply, sentence by sentence, each checked against the data (pure).

A sentence is kept only when it cites (`[G2]`, `[T:task-id]`, several in one bracket) and every
citation holds: the group exists; the task is in the evidence (a member of a group, a discordant
or a suspect task); a task cited with groups is a member of one of them; a model the sentence
names has failed attempts in every group it cites. Anything else is dropped and counted, with
the reason: an analyst's sentence is never shown unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from compare_tui.insights import Insights

_BRACKET = re.compile(r"\[([^\[\]]{1,400})\]")
_GROUP = re.compile(r"^(?:G|group\s*)(\d+)$", re.IGNORECASE)
_TASK = re.compile(r"^(?:T|task)\s*[:\s]\s*(\S+)$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=\][.!?])\s+|(?<=[.!?])\s+(?=[A-Z])")
"""A sentence ends after its citations and a full stop, or at a full stop before a capital."""
_LABEL = re.compile(r"^\s*(?:[-*•]\s*)?(?:\*\*)?(SUMMARY|INSIGHT)S?(?:\*\*)?\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence of the analyst's, where it stands (`summary` or `insight`)."""

    kind: str
    text: str
    groups: tuple[int, ...]
    tasks: tuple[str, ...]
    dropped: str | None = None
    """Why it is not shown (None: every citation holds)."""


def _sentences(reply: str) -> list[tuple[str, str]]:
    found = []
    kind = "summary"
    for line in reply.splitlines():
        label = _LABEL.match(line)
        if label:
            kind = label.group(1).lower()
            line = line[label.end() :]
        for sentence in _SENTENCE_END.split(line.strip()):
            if sentence.strip():
                found.append((kind, sentence.strip()))
    return found


def _citations(sentence: str) -> tuple[tuple[int, ...], tuple[str, ...], list[str]]:
    groups: list[int] = []
    tasks: list[str] = []
    unread: list[str] = []
    for bracket in _BRACKET.findall(sentence):
        for part in (p.strip() for p in bracket.split(",")):
            group, task = _GROUP.match(part), _TASK.match(part)
            if group:
                groups.append(int(group.group(1)))
            elif task:
                tasks.append(task.group(1).strip("`'\""))
            elif part:
                unread.append(part)
    return tuple(groups), tuple(tasks), unread


def check_claims(reply: str, insights: Insights) -> tuple[Claim, ...]:
    """Every sentence of `reply` with its citations, kept or dropped (see the module docstring)."""
    members = {g.number: {m.failed.task_id for m in g.members} for g in insights.groups}
    counts = {g.number: g.counts for g in insights.groups}
    known = set().union(*members.values()) if members else set()
    for split in insights.tag_splits:
        known |= set(split.lost_examples) | set(split.won_examples)
    known |= {s.task_id for s in insights.suspects}
    claims = []
    for kind, sentence in _sentences(reply):
        groups, tasks, unread = _citations(sentence)
        claims.append(
            Claim(
                kind,
                sentence,
                groups,
                tasks,
                _why_dropped(sentence, groups, tasks, unread, insights, members, counts, known),
            )
        )
    return tuple(claims)


def _why_dropped(
    sentence: str,
    groups: tuple[int, ...],
    tasks: tuple[str, ...],
    unread: list[str],
    insights: Insights,
    members: dict[int, set[str]],
    counts: Mapping[int, Mapping[str, int]],
    known: set[str],
) -> str | None:
    if not groups and not tasks:
        return "cites no group or task" + (f" ({', '.join(unread)} is not a citation)" if unread else "")
    missing = [g for g in groups if g not in members]
    if missing:
        return f"cites group {missing[0]}, which does not exist"
    unknown = [t for t in tasks if t not in known]
    if unknown:
        return f"cites task {unknown[0]}, which the evidence does not show"
    if groups:
        outside = [t for t in tasks if not any(t in members[g] for g in groups)]
        if outside:
            return f"cites task {outside[0]}, which is in none of its groups ({', '.join(f'G{g}' for g in groups)})"
        lowered = sentence.lower()
        named = [m for m in insights.models if m.lower() in lowered]
        for group in groups if named else ():
            if not any(counts[group][m] for m in named):
                return f"names {' and '.join(named)} for group {group}, where {'neither' if len(named) > 1 else 'it'} failed"
    return None
