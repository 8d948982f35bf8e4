"""A sampled set in memory: the manifest, the tasks, and `sample.json`, the sample's pins.

The golden-set manifest forbids unknown fields, so what pins the sample lives beside it in
`sample.json` (the manifest's caveats point there):
- `sources`: each log's name, sha256 of its stored bytes, size, line count, compression;
- `window`: length, start and end (UTC), where the end came from, the recency half-life;
- `seed`, `requested_samples`, `filters`, `text_scorer`, and `rule` (the sampling rule);
- `counts`: lines, usable turns, turns in the window, sampled turns and conversations,
  turns per third and per reply kind;
- `redaction`: how many values of each kind were replaced (never the values, nor the
  `--redact` patterns, which may spell out what they hide);
- `skipped`: per reason, the count, what it means and the first few `file:line` places;
- `tasks`: per task, where its turn was logged (`file:line`), when, and its third.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from compare_tui.goldset.models import Manifest

from .selection import MAX_PER_CONVERSATION
from .skips import SkipEntry
from .tasks import HUMAN_INSTRUCTIONS
from .window import iso, window_label

if TYPE_CHECKING:
    from .options import SampleOptions
    from .sources import Source

FORMAT = "compare-tui/sample@1"
RULE = {
    "unit": "one logged assistant turn",
    "weight": "2 ** (-age / half_life), age back from the window's end, half_life = window / 4",
    "key": "u ** (1 / weight), u from sha256(seed, conversation, position); best keys first (Efraimidis-Spirakis)",
    "cap": f"at most {MAX_PER_CONVERSATION} turns per conversation",
    "spread": "a conversation's turns in the window, by position, split into thirds; picks go round early, middle, late",
    "duplicates": "a turn logged twice (same conversation and position) counts once: the newest record",
}


class TaskProvenance(TypedDict):
    """Where one sampled task came from, as `sample.json`'s `tasks` lists it."""

    task: str
    logged_at: list[str]
    """The places (`source:line`) its record was logged at."""
    timestamp: str
    position: int
    part: str
    """The third of its conversation it was picked from (`early`, `middle`, `late`)."""
    conversation_candidate_turns: int


class ByReply(TypedDict):
    """Sampled tasks by the logged reply they expect."""

    tool_call: int
    text: int


class TurnCounts(TypedDict):
    """`sample.json`'s `counts` for sampled turns: lines read and skipped, turns usable and in
    the window, and what was sampled (by third of its conversation and by reply)."""

    lines: int
    skipped_lines: int
    usable_turns: int
    turns_in_window: int
    outside_window: int
    sampled_turns: int
    sampled_conversations: int
    by_part: dict[str, int]
    by_reply: ByReply


class RunCounts(TypedDict):
    """`sample.json`'s `counts` for sampled whole runs (`--whole-runs`)."""

    lines: int
    skipped_lines: int
    usable_turns: int
    candidate_runs: int
    complete_runs: int
    skipped_runs: int
    sampled_runs: int
    sampled_turns: int
    sampled_conversations: int
    by_reply: ByReply


class StepProvenance(TypedDict):
    """Where one step of a sampled whole run came from (`--whole-runs`)."""

    task: str
    run: str
    step: int
    of: int
    logged_at: list[str]
    timestamp: str


@dataclass(frozen=True)
class SampledSet:
    manifest: dict[str, Any]
    tasks: list[dict[str, Any]]
    info: dict[str, Any]

    def manifest_toml(self) -> str:
        return manifest_toml(self.manifest)


def _pin(info: dict[str, Any]) -> str:
    pinned = {k: info[k] for k in ("sources", "window", "seed", "requested_samples", "filters", "text_scorer", "rule")}
    return hashlib.sha256(json.dumps(pinned, sort_keys=True).encode()).hexdigest()[:12]


def _max_tokens(tasks: list[dict[str, Any]]) -> int:
    # Room for the longest logged reply (about 3 characters a token), with headroom.
    longest = max(len(json.dumps(t["expected"], ensure_ascii=False)) for t in tasks)
    tokens = int(longest / 3 * 1.5) + 16
    return min(4096, max(64, -(-tokens // 64) * 64))


REPLAY_CAVEAT = "Each task replays its conversation up to the sampled turn: earlier assistant turns in the input are the logged model's, not the candidate's."


def describe(
    *,
    tasks: list[dict[str, Any]],
    options: SampleOptions,
    sources: list[tuple[str, Source, str, int]],
    window_s: int,
    anchor: float,
    anchor_from: str,
    counts: TurnCounts | RunCounts,
    skips: dict[str, SkipEntry],
    redaction: dict[str, int],
    provenance: list[TaskProvenance] | list[StepProvenance],
    rule: dict[str, str] = RULE,
    sampled_what: str | None = None,
    replay_caveat: str = REPLAY_CAVEAT,
    extra: dict[str, Any] | None = None,
) -> SampledSet:
    """Assemble the manifest and `sample.json` for `tasks`. `sampled_what` says what was sampled
    (default: the turns and conversations counted); `extra` adds fields to `sample.json`."""
    info: dict[str, Any] = {
        "format": FORMAT,
        "sources": [
            {
                "name": name,
                "sha256": digest,
                "bytes": source.size,
                "lines": lines,
                "compression": "gzip" if source.gzip else "none",
            }
            for name, source, digest, lines in sources
        ],
        "window": {
            "length": window_label(window_s),
            "seconds": window_s,
            "start": iso(anchor - window_s),
            "end": iso(anchor),
            "end_from": anchor_from,
            "half_life_seconds": window_s / 4,
        },
        "seed": options.seed,
        "requested_samples": options.samples,
        "filters": {"model": list(options.models), "tag": list(options.tags)},
        "text_scorer": options.text_scorer,
        "rule": rule,
        **(extra or {}),
        "counts": counts,
        "redaction": {
            "replaced": redaction,
            "total": sum(redaction.values()),
            "custom_rules": len(options.redact),
            "note": "counts only: neither the values nor the --redact patterns are stored",
        },
        "skipped": skips,
        "tasks": provenance,
    }
    end_day = datetime.fromtimestamp(anchor, tz=UTC).strftime("%Y-%m-%d")
    what = sampled_what or f"{counts['sampled_turns']} turns from {counts['sampled_conversations']} conversations"
    human = sum(1 for t in tasks if t["scorer"]["kind"] == "human")
    caveats = [
        "Expected outcomes are the replies logged in production: a pass means agreement with the logged baseline, not ground truth.",
        f"Sampled from logged traffic: {what}, "
        f"recency-weighted over the {window_label(window_s)} ending {iso(anchor)} (seed {options.seed!r}). "
        "sample.json in this folder pins the source files (sha256), the window, the seed, the counts and the sampling rule.",
        replay_caveat,
        f"Personal data and secrets were redacted before writing ({sum(redaction.values())} values; counts per kind in sample.json); "
        "a reply that repeats a redacted value cannot match its [REDACTED:…] placeholder.",
    ]
    if human:
        caveats.append(
            f"{human} free-text turns are scored by a person (human scorer): they stay `review` until someone decides."
        )
    manifest = {
        "workload_id": options.workload_id,
        "name": f"Sampled traffic, {window_label(window_s)} to {end_day}",
        "version": f"{end_day}+{_pin(info)}",
        "caveats": caveats,
        "default_scorer": {"kind": "human", "instructions": HUMAN_INSTRUCTIONS},
        "run": {"attempts": 1, "temperature": 0.0, "max_tokens": _max_tokens(tasks)},
    }
    Manifest.model_validate(manifest)
    return SampledSet(manifest, tasks, info)


def _toml_value(value: Any) -> str:
    # JSON string escapes are valid TOML basic-string escapes; ensure_ascii=False keeps
    # non-ASCII text as itself (TOML rejects the surrogate pairs ASCII escaping would write).
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[\n" + "".join(f"  {_toml_value(v)},\n" for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def manifest_toml(manifest: dict[str, Any]) -> str:
    """`golden.toml` text: scalars and lists first, then one table per dict."""
    lines = ["# Sampled by `compare-tui sample` from logged traffic; sample.json pins what was sampled and how."]
    tables = []
    for key, value in manifest.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines.append("")
        lines.append(f"[{key}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"
