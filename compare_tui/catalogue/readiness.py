"""Would a run of this entry be refused, and why — without hashing anything.

`models list`, `models show` and the TUI's Models screen show this. It applies the pin
refusals, the key policy and the cheap half of verification (the folder and every pinned
file exist, no unpinned weights file beside them); whether the bytes still match is left
to `verify_weights` (`models verify`), which every run does before its first request.
`catalogue_rows` and `verify_entry` are what `models list` and `models verify` print and
the Models screen shows, computed here once for both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from compare_tui.catalogue.errors import ModelRefused
from compare_tui.catalogue.keys import resolve_key
from compare_tui.catalogue.models import Catalogue, ModelEntry
from compare_tui.catalogue.provenance import ProvenanceLabel
from compare_tui.catalogue.refusals import check_entry
from compare_tui.catalogue.serving_check import LoadedCheck
from compare_tui.catalogue.verify import Progress, find_weight_files, verify_weights
from compare_tui.vocabulary import ModelKind, WeightsCheck


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
        reasons.append(exc.detail)
    if entry.kind == ModelKind.LOCAL and entry.weights_dir is not None:
        root = entry.weights_dir
        if not root.is_dir():
            reasons.append(f"weights_dir {root} is not a folder")
        else:
            missing = sorted(name for name in entry.files if not (root / name).is_file())
            extra = sorted(find_weight_files(root) - set(entry.files))
            if missing:
                reasons.append(f"missing: {', '.join(missing)}")
            if extra:
                reasons.append(f"extra: {', '.join(extra)} (unpinned weights or answer-shaping files in {root})")
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
    return f"token {symbol}{cost.usd_per_mtok_input:g}/{symbol}{cost.usd_per_mtok_output:g} per Mtok ({cost.captured})"


class CatalogueRowJson(TypedDict):
    """One entry as `models list --json` prints it."""

    name: str
    kind: ModelKind
    """A `StrEnum`: JSON writes its value."""
    endpoint: str
    files: int
    """How many weight files it pins."""
    cost: str
    ready: bool
    reasons: list[str]
    gateway: str | None


@dataclass(frozen=True)
class CatalogueRow:
    """One entry as `models list` prints it and the Models screen shows it."""

    entry: ModelEntry
    cost: str
    """`cost_summary(entry)`."""
    readiness: Readiness

    def as_json(self) -> CatalogueRowJson:
        """The object `models list --json` prints for this entry."""
        entry = self.entry
        return {
            "name": entry.name,
            "kind": entry.kind,
            "endpoint": entry.endpoint,
            "files": len(entry.files),
            "cost": self.cost,
            "ready": self.readiness.ready,
            "reasons": self.readiness.reasons,
            "gateway": entry.gateway,
        }


ServedRefusal = Callable[[ModelEntry], str | None]
"""entry → why a run would refuse what its server serves (other weights, a model it does not
list), or None; asks the server (`engine.serving.served_refusal`)."""


def catalogue_rows(
    catalogue: Catalogue, environ: Mapping[str, str] | None = None, *, served: ServedRefusal | None = None
) -> list[CatalogueRow]:
    """Every entry in file order with its cost basis and readiness (lists weights folders,
    hashes nothing). With `served`, each server is asked what it loads, so that an entry whose
    server a run would refuse is not `ready`."""
    rows = []
    for entry in catalogue.models:
        state = readiness(entry, environ)
        why = served(entry) if served is not None else None
        if why is not None:
            state = Readiness(ready=False, reasons=[*state.reasons, why])
        rows.append(CatalogueRow(entry, cost_summary(entry), state))
    return rows


@dataclass(frozen=True)
class VerifyOutcome:
    """What `models verify` found for one entry: its provenance label when every pin matched,
    else each changed, missing, unreadable or extra file (or the refusal) on its own line."""

    name: str
    label: ProvenanceLabel | None
    """None when the weights do not match their pins (or the entry is refused outright)."""
    files: int = 0
    bytes_hashed: int = 0
    problems: tuple[str, ...] = ()
    fix: str | None = None
    """The command that mends it, when the refusal names one."""

    @property
    def matched(self) -> bool:
        return self.label is not None

    def summary(self, loaded: LoadedCheck | None = None) -> str:
        """One line: "verified, 2 file(s), 135.2 MiB", the host-attestation label, or "DRIFT".
        With the server's loaded-weights check (`loaded`): pins that match while the server
        loads other weights say so first, and a server that could not be checked gives its
        "weights not checked: …" label instead of "verified"."""
        if self.label is None:
            return "DRIFT"
        hashed = f", {self.files} file(s), {self.bytes_hashed / 2**20:.1f} MiB" if self.files else ""
        if loaded is not None and loaded.status == WeightsCheck.MISMATCH:
            return f"SERVER LOADS OTHER WEIGHTS (the pinned files are intact{hashed})"
        label = self.label if loaded is None else loaded.label(self.label)
        return f"{label}{hashed}"


def verify_entry(entry: ModelEntry, *, progress: Progress | None = None) -> VerifyOutcome:
    """Re-hash `entry`'s weights against its pins (`verify_weights`): never raises for drift
    or a refusal, which come back as `problems`. An exception raised by `progress` (e.g. to
    cancel) propagates."""
    try:
        result = verify_weights(entry, progress=progress)
    except ModelRefused as exc:
        return VerifyOutcome(entry.name, None, problems=exc.problems, fix=exc.fix)
    return VerifyOutcome(entry.name, result.label, files=len(result.digests), bytes_hashed=result.bytes_hashed)
