"""What served each run, from the readings stored on it (`RunRecord.serving`), and the caveats
they give: a loaded file that could not be checked, serving settings that differ from the
catalogue's, a server that changed between a run's start and its resume, and runs of one report
served with different settings (a confound). Pure; every surface renders these values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.catalogue.provenance import VERIFIED, WEIGHTS_NOT_CHECKED
from compare_tui.catalogue.serving_check import catalogue_differences
from compare_tui.endpoint.fingerprint import (
    LABELS,
    Difference,
    differences_text,
    fingerprint_differences,
    fingerprint_rows,
)
from compare_tui.report.caveats import Caveat
from compare_tui.store import RunRecord

SHARED_SETTINGS = (
    "context_per_slot",
    "context_total",
    "slots",
    "template_mode",
    "tool_parser",
    "build",
    "engine_version",
    "threads",
)
"""Settings a comparison holds fixed across its models (the weights, their quantisation and
chat template belong to each model, so they may differ)."""


@dataclass(frozen=True, slots=True)
class ServerChange:
    """The server's settings changed between two starts of one run."""

    at: str
    """When the later reading was taken (the resume)."""
    differences: tuple[Difference, ...]


@dataclass(frozen=True, slots=True)
class ServingSummary:
    """What served one run, as its readings say."""

    run_id: str
    label: str
    fingerprint: Mapping[str, Any]
    """The latest reading's fingerprint (`{}` when none was read)."""
    rows: tuple[tuple[str, str], ...]
    """(label, readable value) of the fingerprint: what every surface shows."""
    loaded: Mapping[str, str] | None
    """The loaded-weights check (`status`, `text`), None when not recorded."""
    catalogue_differences: tuple[Difference, ...]
    changes: tuple[ServerChange, ...]
    unread: str | None
    """Why the server's account could not be read at the latest start, else None."""
    read: bool
    """Whether the run recorded any reading at all (runs before store v11 did not)."""


def serving_summary(run: RunRecord, label: str) -> ServingSummary:
    readings = [r for r in run.serving if isinstance(r, Mapping)]
    latest = readings[-1] if readings else {}
    fingerprint = latest.get("fingerprint") or {}
    changes = []
    for before, after in zip(readings, readings[1:], strict=False):
        diffs = fingerprint_differences(before.get("fingerprint"), after.get("fingerprint"))
        diffs = [d for d in diffs if d.key != "stack" or d.before is not None]
        if diffs and before.get("fingerprint") and after.get("fingerprint"):
            changes.append(ServerChange(str(after.get("captured_at", "?")), tuple(diffs)))
    loaded = latest.get("loaded")
    return ServingSummary(
        run_id=run.id,
        label=label,
        fingerprint=fingerprint,
        rows=tuple(fingerprint_rows(fingerprint)),
        loaded=loaded if isinstance(loaded, Mapping) else None,
        catalogue_differences=tuple(catalogue_differences(run.model_entry or {}, fingerprint)),
        changes=tuple(changes),
        unread=latest.get("unread"),
        read=bool(readings),
    )


def serving_caveats(summary: ServingSummary, provenance: str) -> list[Caveat]:
    """One model's serving caveats, in a fixed order."""
    name, out = summary.label, []
    if summary.read and (provenance == VERIFIED or provenance in WEIGHTS_NOT_CHECKED):
        loaded = summary.loaded or {}
        if summary.unread or loaded.get("status") == "unchecked":
            why = loaded.get("text") or f"its account could not be read ({summary.unread})"
            # Runs before the label existed were labelled verified with this caveat alone.
            label = "is labelled verified because" if provenance == VERIFIED else f"is labelled “{provenance}”:"
            out.append(
                Caveat(
                    "loaded_unchecked",
                    f"{name} {label} its weights files on this machine match the "
                    f"pins, but the file the server loaded could not be checked: {why}.",
                )
            )
    if summary.catalogue_differences:
        out.append(
            Caveat(
                "serving_differs",
                f"{name}'s server reported other serving settings than its catalogue entry's "
                f"[model.serving] (catalogue → server): {differences_text(list(summary.catalogue_differences))}. "
                "Its figures hold for the server's settings; `compare-tui models verify "
                f"{summary.label}` offers the command that records them, and `run --strict-serving` refuses such runs.",
            )
        )
    for change in summary.changes:
        out.append(
            Caveat(
                "server_changed",
                f"{name}'s server changed during the run: at the resume of {change.at} "
                f"{differences_text(list(change.differences))}; attempts before and after were served "
                "differently.",
            )
        )
    return out


def serving_confound(summaries: Sequence[ServingSummary]) -> Caveat | None:
    """A caveat when the report's runs were served with different shared settings."""
    read = [s for s in summaries if s.fingerprint]
    parts = []
    for key in SHARED_SETTINGS:
        values: dict[str, list[str]] = {}
        for s in read:
            value = s.fingerprint.get(key)
            if value is not None:
                values.setdefault(str(value), []).append(s.label)
        if len(values) > 1:
            shown = "; ".join(f"{v} ({', '.join(labels)})" for v, labels in values.items())
            parts.append(f"{LABELS[key]}: {shown}")
    if not parts:
        return None
    return Caveat(
        "serving_confound",
        "Confound: the runs compared here were served with different settings, so a difference "
        f"between them may come from the serving rather than the model — {' | '.join(parts)}.",
    )
