"""Would a run of this entry be refused, and why — without hashing anything.

`models list`, `models show` and the TUI's Models screen show this. It applies the pin
refusals, the key policy and the cheap half of verification (the folder and every pinned
file exist, no unpinned weights file beside them); whether the bytes still match is left
to `verify_weights` (`models verify`), which every run does before its first request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from compare_tui.catalogue.errors import ModelRefused
from compare_tui.catalogue.keys import resolve_key
from compare_tui.catalogue.models import ModelEntry
from compare_tui.catalogue.refusals import check_entry
from compare_tui.catalogue.verify import find_weight_files


@dataclass(frozen=True)
class Readiness:
    """`ready` when no reason below applies; `reasons` are one line each, with the fix."""

    ready: bool
    reasons: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.ready:
            return "ready"
        return "refused: " + self.reasons[0] + (f" (+{len(self.reasons) - 1} more)" if len(self.reasons) > 1 else "")


def readiness(entry: ModelEntry, environ: Mapping[str, str] | None = None) -> Readiness:
    """Every reason a run of `entry` would be refused that can be seen without hashing."""
    reasons = [r.message for r in check_entry(entry)]
    if entry.cost is None:
        reasons.append("no cost basis; a report refuses its rows (re-add with --usd-per-hour or --price-*)")
    try:
        resolve_key(entry, os.environ if environ is None else environ)
    except ModelRefused as exc:
        reasons.append(str(exc).removeprefix(f"model {entry.name!r}: "))
    if entry.kind == "local" and entry.weights_dir is not None:
        root = entry.weights_dir
        if not root.is_dir():
            reasons.append(f"weights_dir {root} is not a folder")
        else:
            missing = sorted(name for name in entry.files if not (root / name).is_file())
            extra = sorted(find_weight_files(root) - set(entry.files))
            if missing:
                reasons.append(f"missing: {', '.join(missing)}")
            if extra:
                reasons.append(f"extra: {', '.join(extra)} (unpinned weights in {root})")
    return Readiness(ready=not reasons, reasons=reasons)


def cost_summary(entry: ModelEntry) -> str:
    """The cost basis in a few words, e.g. "hardware $0.5/h" or "token $0.15/$0.6 per Mtok
    (2026-11-30)": the one spelling of a catalogue entry's cost (`models list|show`, Home)."""
    cost = entry.cost
    if cost is None:
        return "none (runs will be refused in reports)"
    if cost.basis == "hardware":
        return f"hardware ${cost.usd_per_hour:g}/h"
    symbol = "$" if cost.currency == "USD" else f"{cost.currency} "
    return (f"token {symbol}{cost.usd_per_mtok_input:g}/{symbol}{cost.usd_per_mtok_output:g} per Mtok "
            f"({cost.captured})")
