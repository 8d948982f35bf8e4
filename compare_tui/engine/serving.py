"""The server's account of its serving at each start of a run: read, checked, recorded.

Before the first request of a run (and of each resume), `read_serving` asks the endpoint what it
loaded and how it is configured (`catalogue.probe`: `/v1/models`, llama.cpp's `/props` and
`/apply-template`, vLLM's `/version`; no tokens are generated). `check_serving` then refuses a
server whose loaded weights are not the entry's pins, and, with `strict`, one whose settings
differ from the catalogue's `[model.serving]`. The reading is stored on the run
(`RunRecord.serving`), whatever it found: the report turns it into caveats.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compare_tui.catalogue import HardwareCost, ModelEntry, ModelRefused, TokenPriceCost, resolve_key
from compare_tui.catalogue.errors import EndpointProbeError, ModelNotServed
from compare_tui.catalogue.probe import probe_endpoint
from compare_tui.catalogue.serving_check import (
    LoadedCheck,
    catalogue_differences,
    catalogue_fingerprint,
    check_loaded,
)
from compare_tui.endpoint import key_headers
from compare_tui.endpoint.account import StoredReading
from compare_tui.endpoint.fingerprint import FIELDS, differences_text, shown
from compare_tui.engine.environment import ServerIdentity, identity_from
from compare_tui.store import utc_now
from compare_tui.vocabulary import ModelKind, Provenance, WeightsCheck

READ_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ServingRead:
    """What one reading of the server gave: the reading (stored on the run) and the run
    environment's server identity made from the same answers."""

    reading: StoredReading
    identity: ServerIdentity | None = None
    """`engine.environment.identity_from` the probe's `/v1/models` ids and `/props` answer, so
    the runner reads neither again; None when the server could not be read (the runner asks)."""


ServingReader = Callable[[ModelEntry, Mapping[str, str]], ServingRead]
"""(entry, request headers) → a reading and the server identity (`read_server`'s contract)."""


def read_serving(entry: ModelEntry, headers: Mapping[str, str]) -> StoredReading:
    """{captured_at, fingerprint, notes} from the endpoint, or with `unread` (why nothing could
    be read) in place of what it would have said. Never raises."""
    return read_server(entry, headers).reading


def read_server(entry: ModelEntry, headers: Mapping[str, str]) -> ServingRead:
    """`read_serving`, with the server identity its answers make. Never raises."""
    reading: StoredReading = {"captured_at": utc_now(), "fingerprint": {}, "notes": []}
    try:
        probed = probe_endpoint(
            entry.endpoint,
            entry.model,
            name=entry.name,
            headers=dict(headers),
            gateway=entry.gateway,
            timeout_s=READ_TIMEOUT_S,
        )
    except ModelNotServed as exc:
        reading["unread"] = str(exc)
        if exc.owners != {"llamacpp"}:  # llama-server answers any model id with the model it loaded
            reading["not_served"] = exc.ids
        return ServingRead(reading)
    except EndpointProbeError as exc:
        reading["unread"] = str(exc)
        return ServingRead(reading)
    reading["fingerprint"] = probed.fingerprint
    reading["notes"] = list(probed.facts.notes)
    stated = stated_not_checked(entry, probed.fingerprint)
    if stated:
        reading["stated"] = stated
    # The probe's answers make the run's server identity whatever the stack (vLLM: no /props
    # asked), so a run reads /v1/models once per start, not again in the runner.
    return ServingRead(reading, identity_from(entry.endpoint, probed.ids, probed.props))


NOT_EXPOSED: dict[str, tuple[str, str]] = {
    "tool_parser": ("tool-call parser", "--tool-call-parser"),
    "max_num_seqs": ("max concurrent sequences", "--max-num-seqs"),
}
"""vLLM settings that change answers or latency but that no endpoint of the server reports:
(catalogue key → what a person calls it, the flag). Only ever the catalogue's statement."""


def stated_not_checked(entry: ModelEntry, fingerprint: Mapping[str, Any]) -> dict[str, str]:
    """For a vLLM server: each setting it does not expose (`NOT_EXPOSED`) that the catalogue
    states, as `{label: "VALUE (stated, not checked: vLLM does not report FLAG)"}`."""
    if fingerprint.get("stack") != "vLLM":
        return {}
    serving = entry.serving
    values = {"tool_parser": serving.tool_parser, "max_num_seqs": serving.extra.get("max_num_seqs")}
    return {
        label: f"{values[key]} (stated, not checked: vLLM does not report {flag})"
        for key, (label, flag) in NOT_EXPOSED.items()
        if values.get(key)
    }


def loaded_label(hashed: Provenance, reading: Mapping[str, Any]) -> Provenance:
    """A run's provenance label: what hashing the pins gave (`hashed`), unless the reading's
    loaded-weights check could not be done (`LoadedCheck.label`: "weights not checked: …")."""
    loaded = LoadedCheck.of(reading.get("loaded"))
    return hashed if loaded is None else loaded.label(hashed)


def update_command(entry: ModelEntry) -> str:
    """The command that re-reads the server into the entry."""
    weights = f" --weights-dir {entry.weights_dir}" if entry.weights_dir else ""
    cost = entry.cost
    if isinstance(cost, HardwareCost):
        price = f"--usd-per-hour {cost.usd_per_hour:g}"
    elif isinstance(cost, TokenPriceCost):
        price = (
            f"--price-in {cost.usd_per_mtok_input:g} --price-out {cost.usd_per_mtok_output:g} "
            f"--price-date {cost.captured} --price-source {cost.source}"
        )
    else:
        price = "--usd-per-hour X"
    kind = " --kind hosted" if entry.kind == ModelKind.HOSTED else ""
    return (
        f"compare-tui models add {entry.name} --endpoint {entry.endpoint} --model {entry.model}{kind}{weights} "
        f"--revision {entry.revision or 'REV'} {price} --replace"
    )


def check_serving(entry: ModelEntry, reading: StoredReading, *, strict: bool) -> tuple[str | None, StoredReading]:
    """(refusal or None, the reading with `loaded` added). A refusal names both sides and the fix."""
    served = reading.get("not_served")
    if served is not None and entry.gateway is None:
        # Every request would come back 404 (vLLM) or be answered by another model: refused
        # here, not turned into one error per task. A declared gateway may route models it
        # does not list, so its listing is not held against the entry; llama-server serves
        # its one model under any id (`read_serving` records nothing against it).
        listing = ", ".join(served[:20]) if served else "no models"
        return (
            f"{entry.endpoint} does not serve model {entry.model!r} (GET /models lists {listing}); nothing "
            f"was sent or stored. Fix: set the entry's `model` to the id the server serves "
            f"(`compare-tui models add {entry.name} --endpoint {entry.endpoint} --model ID … --replace`), "
            "or start the server with that model"
        ), reading
    fingerprint = reading.get("fingerprint") or {}
    loaded = check_loaded(entry, fingerprint)
    reading = reading | {"loaded": loaded.as_dict()}
    if loaded.status == WeightsCheck.MISMATCH:
        return f"{loaded.text}; nothing was sent or stored", reading
    differences = catalogue_differences(entry, fingerprint)
    if strict and differences:
        return (
            f"the server's serving settings differ from the catalogue's [model.serving] "
            f"({differences_text(differences)}; catalogue → server) and strict serving is on; nothing "
            f"was sent or stored. Fix: restart the server with the catalogue's settings, or record the "
            f"server's in the entry: `{update_command(entry)}`"
        ), reading
    return None, reading


def live_reading(entry: ModelEntry, environ: Mapping[str, str] | None = None) -> StoredReading:
    """`read_serving` with the entry's key, checked against its pins (`loaded` added); a key the
    policy refuses leaves the server unasked (`unread` says why)."""
    try:
        key = resolve_key(entry, os.environ if environ is None else environ)
    except ModelRefused as exc:
        return {"fingerprint": {}, "notes": [], "unread": f"not asked: {exc}"}
    reading = read_serving(entry, key_headers(key))
    return reading | {"loaded": check_loaded(entry, reading.get("fingerprint") or {}).as_dict()}


def served_refusal(entry: ModelEntry, environ: Mapping[str, str] | None = None) -> str | None:
    """Why a run would refuse what the entry's server serves (other weights than the pins, a model
    it does not list), as `check_serving` refuses it, else None. A server that does not answer
    is not held against the entry here (a run says so when it starts)."""
    reading = live_reading(entry, environ)
    if reading.get("unread") and "not_served" not in reading:
        return None
    refusal, checked = check_serving(entry, reading, strict=False)
    if refusal is None:
        return None
    fingerprint = checked.get("fingerprint") or {}
    loaded = fingerprint.get("loaded_file") or fingerprint.get("loaded_folder")
    what = f"other weights than the pins ({loaded})" if "not_served" not in reading else f"no model {entry.model!r}"
    return f"its server serves {what}; `compare-tui models verify {entry.name}` says how to mend it"


def differences_note(entry: ModelEntry, reading: Mapping[str, Any]) -> str | None:
    """A line for the run's output when the server's settings differ from the catalogue's."""
    differences = catalogue_differences(entry, reading.get("fingerprint") or {})
    if not differences:
        return None
    return (
        f"note: {entry.name}: the server's serving settings differ from the catalogue's (catalogue → server: "
        f"{differences_text(differences)}); the report carries this caveat; `compare-tui models verify "
        f"{entry.name}` shows them, `run --strict-serving` refuses such runs"
    )


def serving_lines(entry: ModelEntry, reading: Mapping[str, Any]) -> list[str]:
    """The live fingerprint beside the catalogue's `[model.serving]`, one line per setting either
    states, then the loaded-weights check and the command that records the server's settings."""
    if reading.get("unread"):
        return [f"serving: the server's account could not be read ({reading['unread']})"]
    fingerprint = reading.get("fingerprint") or {}
    stated = catalogue_fingerprint(entry.serving)
    differing = {d.key for d in catalogue_differences(entry, fingerprint)}
    lines = [f"serving (catalogue → server at {entry.endpoint}):"]
    for key, label in FIELDS:
        # The stated stack is shown, never compared: people spell it their own way. The build
        # is compared as the server said it, but shown as the catalogue states it: for the
        # bundled server that names the llama.cpp tag read from its package.
        ours = entry.serving.stack if key == "stack" else entry.serving.build if key == "build" else stated.get(key)
        theirs = fingerprint.get(key)
        if ours is None and theirs is None:
            continue
        mark = "  ← differs" if key in differing else ""
        lines.append(f"  {label}: {shown(key, ours, 'not stated')} → {shown(key, theirs)}{mark}")
    for label, value in (reading.get("stated") or {}).items():
        lines.append(f"  {label}: {value}")
    if fingerprint.get("stack") == "vLLM":
        unstated = [flag for key, (_, flag) in NOT_EXPOSED.items() if key not in _stated_keys(entry)]
        if unstated:
            lines.append(
                f"  not reported by vLLM and not stated in the catalogue: {', '.join(unstated)} "
                "(state them with `models add … --note tool_parser=… --note max_num_seqs=…`)"
            )
    loaded = reading.get("loaded") or {}
    if loaded:
        lines.append(f"  loaded weights: {loaded.get('status')}: {loaded.get('text')}")
    lines += [f"  note: {note}" for note in reading.get("notes") or []]
    if differing:
        lines.append(f"  to record the server's settings in the entry: {update_command(entry)}")
    return lines


def _stated_keys(entry: ModelEntry) -> set[str]:
    return {
        k
        for k, v in (
            ("tool_parser", entry.serving.tool_parser),
            ("max_num_seqs", entry.serving.extra.get("max_num_seqs")),
        )
        if v
    }
