"""Logs → a sampled, scrubbed, pinned golden set (in memory; `writer` puts it on disk).

Callers can rely on:
- the same logs, options and seed give the same `SampledSet`, byte for byte once written,
  whatever the wall clock says: without `now`, the window ends at the newest usable
  timestamp in the logs; the tasks do not depend on the order of lines or files;
- each log is parsed once, streamed (see `passes`); memory is bounded by the sample size
  (see `selection`), not by the log size;
- every problem the user can fix raises `SamplingError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SamplingError
from .options import SampleOptions
from .passes import Filters, Progress, ScanResult, Seen, candidates, fetch, place, scan
from .redaction import Redactor
from .sampled import SampledSet, TaskProvenance, TurnCounts, describe
from .selection import PARTS, Candidate, TopConversations, recency_key, spread
from .sources import Source
from .tasks import TEXT_SCORERS, TOOL_MATCHES, build_task, task_id
from .window import iso, parse_now, parse_window, window_label

MAX_SAMPLES = 100_000
WORKLOAD_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"  # as `goldset.Manifest.workload_id` accepts


@dataclass
class _Pick:
    seen: Seen
    part: int
    turns_in_conversation: int


@dataclass
class _Plan:
    window_s: int
    anchor: float
    anchor_from: str
    scanned: ScanResult
    in_window: int = 0
    picks: list[_Pick] = field(default_factory=list)


def check_options(options: SampleOptions, paths: Sequence[Path | str]) -> None:
    """Raise `SamplingError` for options (or no logs) that cannot be sampled."""
    if not paths:
        raise SamplingError("give at least one log file (JSONL, plain or gzip)")
    if not 1 <= options.samples <= MAX_SAMPLES:
        raise SamplingError(f"--samples {options.samples}: give a number from 1 to {MAX_SAMPLES}")
    if not re.fullmatch(WORKLOAD_ID, options.workload_id):
        raise SamplingError(
            f"--workload-id {options.workload_id!r}: use letters, digits, `.`, `_` and `-`, starting with a letter or digit"
        )
    if options.text_scorer not in TEXT_SCORERS:
        raise SamplingError(f"--text-scorer {options.text_scorer!r}: give one of {', '.join(TEXT_SCORERS)}")
    if options.tool_match is not None and options.tool_match not in TOOL_MATCHES:
        raise SamplingError(f"--arguments-match {options.tool_match!r}: give one of {', '.join(TOOL_MATCHES)}")


def source_names(sources: Sequence[Source]) -> list[str]:
    """Display names: the file name, or the path where two files share a name. Scrubbed
    too (uncounted), since they land in the output folder."""
    plain = [s.path.name for s in sources]
    scrub = Redactor()
    return [scrub.text(name if plain.count(name) == 1 else str(s.path)) for name, s in zip(plain, sources)]


@dataclass
class OpenedLogs:
    """The logs after the first pass: what turn sampling and whole-run sampling both start from.
    The caller closes `scanned` (its spill files) when done with it."""

    window_s: int
    now: float | None
    redactor: Redactor
    sources: list[Source]
    names: list[str]
    scanned: ScanResult

    def anchor(self) -> float:
        """The window's end: `--now`, else the newest usable timestamp in the logs."""
        anchor = self.now if self.now is not None else self.scanned.newest
        if anchor is None:
            raise SamplingError(_nothing_usable(self.scanned, self.names))
        return anchor

    @property
    def anchor_from(self) -> str:
        return "--now" if self.now is not None else "newest usable timestamp in the logs"


def open_logs(paths: Sequence[Path | str], options: SampleOptions, progress: Progress | None = None) -> OpenedLogs:
    """Check the options, open every log and run the first pass over them."""
    check_options(options, paths)
    window_s = parse_window(options.window)
    now = parse_now(options.now) if options.now else None
    redactor = Redactor(options.redact)  # compiles the user's rules before any reading
    sources = [Source.open_path(Path(p)) for p in paths]
    names = source_names(sources)
    scanned = scan(sources, names, Filters(tuple(options.models), tuple(options.tags)), options.seed, progress)
    return OpenedLogs(window_s, now, redactor, sources, names, scanned)


def sample_logs(paths: Sequence[Path | str], options: SampleOptions, progress: Progress | None = None) -> SampledSet:
    """Sample `options.samples` turns from the logs at `paths` into a `SampledSet`."""
    logs = open_logs(paths, options, progress)
    window_s, redactor, sources, names, scanned = logs.window_s, logs.redactor, logs.sources, logs.names, logs.scanned
    try:
        anchor = logs.anchor()
        plan = _Plan(window_s, anchor, logs.anchor_from, scanned)
        _select(plan, names, options.samples)
    finally:
        scanned.close()
    if not plan.picks:
        raise SamplingError(
            f"no usable turn lies in the {window_label(window_s)} window ending {iso(anchor)}; widen --window or move --now"
        )
    turns = fetch(sources, [p.seen for p in plan.picks])
    tasks = [
        build_task(
            turns[p.seen.refs],
            p.seen.conversation,
            p.part,
            redactor,
            options.text_scorer,
            tool_match=options.tool_match or "exact",
        )
        for p in plan.picks
    ]
    tasks.sort(key=lambda t: t["id"])
    return describe(
        tasks=tasks,
        options=options,
        sources=[
            (name, s, digest, lines) for name, s, digest, lines in zip(names, sources, scanned.digests, scanned.lines)
        ],
        window_s=window_s,
        anchor=anchor,
        anchor_from=plan.anchor_from,
        counts=_counts(plan, tasks),
        skips=scanned.skips.as_dict(),
        redaction=redactor.summary(),
        provenance=[
            _provenance(p, names) for p in sorted(plan.picks, key=lambda p: (p.seen.conversation, p.seen.position))
        ],
    )


def _select(plan: _Plan, names: Sequence[str], samples: int) -> None:
    start, end = plan.anchor - plan.window_s, plan.anchor
    half_life = plan.window_s / 4
    # Pass 2: how many turns each conversation gives.
    top = TopConversations(samples)
    for seen in candidates(plan.scanned):
        if not start <= seen.timestamp <= end:
            plan.scanned.skips.add("outside_window", place(names, seen.refs[-1]))
            continue
        plan.in_window += 1
        top.offer(seen.conversation, seen.position, recency_key(seen.log_exp, seen.timestamp, half_life))
    allocation = top.allocation()
    # Pass 3: every candidate turn of the winning conversations, one record per position.
    turns: dict[int, dict[int, Seen]] = {c: {} for c in allocation}
    for seen in candidates(plan.scanned):
        by_position = turns.get(seen.conversation)
        if by_position is None or not start <= seen.timestamp <= end:
            continue
        old = by_position.get(seen.position)
        if old is None or (seen.timestamp, seen.tiebreak) > (old.timestamp, old.tiebreak):
            by_position[seen.position] = seen  # the newest record of a turn logged twice
    for h, count in sorted(allocation.items()):
        pool = [Candidate(pos, recency_key(s.log_exp, s.timestamp, half_life), s) for pos, s in turns[h].items()]
        for candidate, part in spread(pool, count):
            plan.picks.append(_Pick(candidate.ref, part, len(pool)))  # type: ignore[arg-type]


def _counts(plan: _Plan, tasks: list[dict[str, Any]]) -> TurnCounts:
    scanned = plan.scanned
    return {
        "lines": sum(scanned.lines),
        "skipped_lines": scanned.skips.total - scanned.skips.counts["outside_window"],
        "usable_turns": scanned.usable,
        "turns_in_window": plan.in_window,
        "outside_window": scanned.skips.counts["outside_window"],
        "sampled_turns": len(tasks),
        "sampled_conversations": len({p.seen.conversation for p in plan.picks}),
        "by_part": {name: sum(1 for p in plan.picks if p.part == i) for i, name in enumerate(PARTS)},
        "by_reply": {
            "tool_call": sum(1 for t in tasks if "tool_call" in t["expected"]),
            "text": sum(1 for t in tasks if "text" in t["expected"]),
        },
    }


def _provenance(pick: _Pick, names: Sequence[str]) -> TaskProvenance:
    return {
        "task": task_id(pick.seen.conversation, pick.seen.position),
        "logged_at": [place(names, ref) for ref in pick.seen.refs],
        "timestamp": iso(pick.seen.timestamp),
        "position": pick.seen.position,
        "part": PARTS[pick.part],
        "conversation_candidate_turns": pick.turns_in_conversation,
    }


def _nothing_usable(scanned: ScanResult, names: Sequence[str]) -> str:
    total = sum(scanned.lines)
    if not scanned.skips.total:
        return f"the logs ({', '.join(names)}) hold no lines"
    top = scanned.skips.counts.most_common(3)
    reasons = "; ".join(f"{n} × {reason}" for reason, n in top)
    return (
        f"no usable turn in {total} line(s) ({reasons}); see `compare-tui sample --help` for the record shapes accepted"
    )
