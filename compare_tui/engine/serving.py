"""The server's account of its serving at each start of a run: read, checked, recorded.

Before the first request of a run (and of each resume), `read_serving` asks the endpoint what it
loaded and how it is configured (`catalogue.probe`: `/v1/models`, llama.cpp's `/props` and
`/apply-template`, vLLM's `/version`; no tokens are generated). `check_serving` then refuses a
server whose loaded weights are not the entry's pins, and, with `strict`, one whose settings
differ from the catalogue's `[model.serving]`. The reading is stored on the run
(`RunRecord.serving`), whatever it found: the report turns it into caveats.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compare_tui.catalogue import ModelEntry
from compare_tui.catalogue.errors import EndpointProbeError
from compare_tui.catalogue.probe import probe_endpoint
from compare_tui.catalogue.serving_check import catalogue_differences, check_loaded
from compare_tui.endpoint.fingerprint import differences_text
from compare_tui.store import utc_now

READ_TIMEOUT_S = 10.0

ServingReader = Callable[[ModelEntry, Mapping[str, str]], dict[str, Any]]
"""(entry, request headers) → a reading (`read_serving`'s contract)."""


def read_serving(entry: ModelEntry, headers: Mapping[str, str]) -> dict[str, Any]:
    """{captured_at, fingerprint, notes} from the endpoint, or with `unread` (why nothing could
    be read) in place of what it would have said. Never raises."""
    reading: dict[str, Any] = {"captured_at": utc_now(), "fingerprint": {}, "notes": []}
    try:
        probed = probe_endpoint(
            entry.endpoint,
            entry.model,
            name=entry.name,
            headers=dict(headers),
            gateway=entry.gateway,
            timeout_s=READ_TIMEOUT_S,
        )
    except EndpointProbeError as exc:
        reading["unread"] = str(exc)
        return reading
    reading["fingerprint"] = probed.fingerprint
    reading["notes"] = list(probed.facts.notes)
    return reading


def update_command(entry: ModelEntry) -> str:
    """The command that re-reads the server into the entry."""
    weights = f" --weights-dir {entry.weights_dir}" if entry.weights_dir else ""
    return (
        f"compare-tui models add {entry.name} --endpoint {entry.endpoint} --model {entry.model}{weights} "
        f"--revision {entry.revision or 'REV'} --usd-per-hour X --replace"
    )


def check_serving(entry: ModelEntry, reading: dict[str, Any], *, strict: bool) -> tuple[str | None, dict[str, Any]]:
    """(refusal or None, the reading with `loaded` added). A refusal names both sides and the fix."""
    fingerprint = reading.get("fingerprint") or {}
    loaded = check_loaded(entry, fingerprint)
    reading = reading | {"loaded": loaded.as_dict()}
    if loaded.status == "mismatch":
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
