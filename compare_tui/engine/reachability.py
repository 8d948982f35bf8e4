"""Is a model endpoint up? One quick GET of `<endpoint>/models`, made before a run's first
request (and by the TUI's Models tab), so that a run never starts against a server that is
not there.

No key is sent (a reachability check never handles credentials), so a host that wants one
answers 401/403, which still proves it is up; it refuses an entry without `key_env`, whose
every task would be refused. An entry with a key is asked again with it before the first task
(`catalogue.check_key`), which also decides when the keyless probe got a 5xx (a LiteLLM proxy
without a key database answers every keyless request 500). Ambient proxies are ignored, as for every
request to a model endpoint. Blocking: call it from a worker thread in the TUI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import httpx

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.client import causes, connect_failure, probe_client
from compare_tui.engine.prepare import RunRefusedError
from compare_tui.vocabulary import ModelKind

TIMEOUT_S = 2.0

Prober = Callable[[str], str]
"""endpoint → the probe's verdict text (`probe_endpoint`'s contract)."""


def probe_endpoint(endpoint: str, timeout_s: float = TIMEOUT_S) -> str:
    """`healthy`, `up (HTTP 401: wants a key)`, `HTTP 503`, or `unreachable: <why>`."""
    try:
        with probe_client(timeout_s=timeout_s) as client:
            response = client.get(Endpoint(endpoint).models_url)
    except httpx.TimeoutException:
        return f"unreachable: no answer in {timeout_s:g} s"
    except httpx.ConnectError as exc:
        return f"unreachable: {connect_failure(causes(exc), endpoint)}"
    except httpx.HTTPError as exc:
        reason = str(exc).split("] ")[-1] or type(exc).__name__
        return f"unreachable: {reason}"
    if response.status_code == 200:
        return "healthy"
    if response.status_code in (401, 403):
        return f"up (HTTP {response.status_code}: wants a key)"
    return f"HTTP {response.status_code}"


def is_reachable(verdict: str) -> bool:
    """A server answered, and not with a server error (5xx: down, overloaded or still loading)."""
    return not verdict.startswith("unreachable") and not verdict.startswith("HTTP 5")


def health_for(verdict: str, has_key: bool) -> str:
    """What a keyless probe's `verdict` means for an entry with or without a key, in the words
    Home shows: an endpoint that wants a key (401/403), or a gateway that answers a keyless
    request 5xx (LiteLLM without a key database), is `up` for an entry with a key, since a run
    asks again with it before the first task; for an entry without one, a key is wanted."""
    if has_key and (verdict.startswith("HTTP 5") or "wants a key" in verdict):
        code = verdict.removeprefix("up (").split(":")[0]
        return f"up ({code} without a key; a run asks again with its key)"
    if not has_key and "wants a key" in verdict:
        return f"wants a key ({verdict.removeprefix('up (').split(':')[0]}; the entry has no key_env)"
    return verdict


def refuse_unreachable(entries: Iterable[ModelEntry], prober: Prober = probe_endpoint) -> None:
    """Raise `RunRefusedError` for the first entry whose endpoint does not answer (each distinct
    endpoint is probed once). Nothing else is sent."""
    seen: dict[str, str] = {}
    for entry in entries:
        verdict = seen.get(entry.endpoint) or seen.setdefault(entry.endpoint, prober(entry.endpoint))
        if entry.key_env is not None and verdict.startswith("HTTP 5"):
            # A server answered. LiteLLM without a key database answers a keyless request 500
            # (it fails looking for its database client), so a 5xx without the key says nothing
            # about the run: the check with the key (`catalogue.check_key`) decides, and it
            # refuses any 5xx the endpoint answers then.
            continue
        if not is_reachable(verdict):
            # A local entry may be the user's own server as much as a bundled one: say both.
            hint = (
                "start the model's server (for the bundled models: `compare-tui local up`)"
                if entry.kind == ModelKind.LOCAL
                else "check the endpoint and the network"
            )
            raise RunRefusedError(
                entry.name, f"the endpoint {entry.endpoint} is {verdict}; nothing was sent ({hint}, then try again)"
            )
        if entry.key_env is None and "wants a key" in verdict:
            # Without a key every task would be refused the same way (`catalogue.check_key`
            # asks again with the key where the entry has one).
            raise RunRefusedError(
                entry.name,
                f"the endpoint {entry.endpoint} is {verdict} but the entry has "
                "no key_env; nothing was sent (set key_env to the variable "
                "holding your virtual key)",
            )
