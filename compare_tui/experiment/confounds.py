"""Confounds: a variable an arm holds fixed that its runs did not all record alike.

Pure. Each fixed variable is read from what every run of the arm recorded (its catalogue
pins, the server's own account of itself and its serving fingerprint, its settings and cost basis) and, where the
experiment's definition states it, from the definition too. Two or more distinct values
make a confound, reported with every value and the runs that recorded it. A run that did
not record a variable (a server with no /props) is not evidence either way: it is listed as
unrecorded, never counted as a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compare_tui.endpoint.account import StoredIdentity, latest_fingerprint
from compare_tui.endpoint.fingerprint import FIELDS
from compare_tui.experiment.cells import canonical, normalised_settings
from compare_tui.store import RunRecord

_DIGEST = re.compile(r"(sha256:)?[0-9a-f]{32,}")
DEFINITION = "definition"
"""Stands for the experiment's own definition among the sources of a value."""


@dataclass(frozen=True, slots=True)
class SeenValue:
    """One value of a fixed variable and who recorded it."""

    value: str
    sources: tuple[str, ...]
    """Run ids, and `definition` when the experiment's definition states this value."""


@dataclass(frozen=True, slots=True)
class Confound:
    """A fixed variable that drifted within one arm."""

    arm: str
    variable: str
    values: tuple[SeenValue, ...]
    """At least two; most-recorded first."""

    def sentence(self) -> str:
        """One line a person can act on."""
        shown = "; ".join(f"{_short(v.value)} ({_sources(v.sources)})" for v in self.values)
        return f"{self.arm}: {self.variable} differs across its runs: {shown}"


def _short(value: str) -> str:
    # A 64-hex digest is unreadable in a banner; its first 16 digits tell values apart.
    match = _DIGEST.fullmatch(value)
    return value[: len(match.group(1) or "") + 16] + "…" if match else value


def _sources(sources: Sequence[str]) -> str:
    runs = [s[:8] for s in sources if s != DEFINITION]
    parts = [("run " if len(runs) == 1 else "runs ") + ", ".join(runs)] if runs else []
    if DEFINITION in sources:
        parts.append("the experiment's definition")
    return "; ".join(parts)


def _server_props(run: RunRecord) -> Mapping[str, Any]:
    return StoredIdentity.of(run.environment).props or {}


def _served_models(run: RunRecord) -> Any:
    ids = StoredIdentity.of(run.environment).model_ids
    return sorted(ids) if ids is not None else None


def _fingerprint(run: RunRecord) -> Mapping[str, Any]:
    """The server's serving fingerprint at the run's latest start (`engine.serving`), else {}."""
    return latest_fingerprint(run.serving)


def _serving_reader(key: str) -> Callable[[RunRecord], Any]:
    return lambda run: _fingerprint(run).get(key)


def _text(value: Any) -> str | None:
    if value is None or value == {} or value == []:
        return None
    return value if isinstance(value, str) else canonical(value)


Reader = Callable[[RunRecord], Any]
Stated = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
"""(recorded entry, settings) of the definition → the value it states."""

FIXED_VARIABLES: tuple[tuple[str, Reader, Stated | None], ...] = (
    ("weights digest", lambda r: r.model_entry.get("weights_digest"), lambda m, s: m.get("weights_digest")),
    ("revision", lambda r: r.model_entry.get("revision"), lambda m, s: m.get("revision")),
    ("weights files", lambda r: r.model_entry.get("files"), lambda m, s: m.get("files")),
    ("server build", lambda r: _server_props(r).get("build_info"), None),
    ("chat template", lambda r: _server_props(r).get("chat_template_sha256"), None),
    ("served model ids", _served_models, None),
    *(
        (f"serving {label}", _serving_reader(key), None)
        for key, label in FIELDS
        if key not in ("stack", "build", "chat_template_sha256")  # the two read from /props above
    ),
    ("settings", lambda r: normalised_settings(r.settings), lambda m, s: normalised_settings(s)),
    ("cost basis", lambda r: r.cost_basis, lambda m, s: m.get("cost")),
)
"""(what a person calls it, how a run records it, how the definition states it or None)."""


@dataclass(frozen=True, slots=True)
class ConfoundCheck:
    """The outcome of checking one arm: its confounds, and what some runs did not record."""

    confounds: tuple[Confound, ...]
    unrecorded: tuple[tuple[str, tuple[str, ...]], ...]
    """(variable, run ids) for variables some runs have no value for."""


def check_arm(
    arm: str,
    runs: Sequence[RunRecord],
    model: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> ConfoundCheck:
    """Every fixed variable of one arm checked over its runs (and its definition, if given)."""
    confounds, unrecorded = [], []
    for variable, read, stated in FIXED_VARIABLES:
        seen: dict[str, list[str]] = {}
        missing = []
        for run in runs:
            value = _text(read(run))
            if value is None:
                missing.append(run.id)
            else:
                seen.setdefault(value, []).append(run.id)
        if stated is not None and model is not None and runs:
            value = _text(stated(model, settings or {}))
            if value is not None:
                seen.setdefault(value, []).append(DEFINITION)
        if len(seen) > 1:
            ordered = sorted(seen.items(), key=lambda item: (-len(item[1]), item[0]))
            confounds.append(Confound(arm, variable, tuple(SeenValue(v, tuple(s)) for v, s in ordered)))
        if missing and seen:
            unrecorded.append((variable, tuple(missing)))
    return ConfoundCheck(tuple(confounds), tuple(unrecorded))
