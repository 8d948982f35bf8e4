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
from dataclasses import dataclass

import httpx

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.client import causes, connect_failure, probe_client
from compare_tui.engine.prepare import RunRefusedError
from compare_tui.vocabulary import ModelKind, Reach

TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class Reachability:
    """What the probe found, as values; `str()` is the sentence people read (`healthy`,
    `up (HTTP 401: wants a key)`, `HTTP 503`, `unreachable: <why>`)."""

    reach: Reach
    status: int | None = None
    """The HTTP status the server answered (None when it did not)."""
    reason: str = ""
    """Why it is unreachable, in words (empty otherwise)."""

    @property
    def server_error(self) -> bool:
        """The server answered 5xx: down, overloaded or still loading (or a keyless gateway)."""
        return self.status is not None and self.status >= 500

    @property
    def reachable(self) -> bool:
        """A server answered, and not with a server error."""
        return self.reach != Reach.UNREACHABLE and not self.server_error

    def __str__(self) -> str:
        if self.reach == Reach.HEALTHY:
            return "healthy"
        if self.reach == Reach.WANTS_KEY:
            return f"up (HTTP {self.status}: wants a key)"
        if self.reach == Reach.HTTP:
            return f"HTTP {self.status}"
        return f"unreachable: {self.reason}"


@dataclass(frozen=True, slots=True)
class Health:
    """An endpoint's health as Home shows it: `ok` (None while checking), a short `word` for the
    table (`healthy`, `up`, `unreachable`, `wants a key`, `HTTP 404`) and the whole sentence."""

    ok: bool | None
    word: str
    text: str

    def __str__(self) -> str:
        return self.text


CHECKING = Health(None, "checking…", "checking…")
"""Home's health of an endpoint before its probe has answered."""

Prober = Callable[[str], Reachability]
"""endpoint → what the probe found (`probe_endpoint`'s contract)."""


def probe_endpoint(endpoint: str, timeout_s: float = TIMEOUT_S) -> Reachability:
    """One keyless GET of `<endpoint>/models`: what answered, or why nothing did."""
    try:
        with probe_client(timeout_s=timeout_s) as client:
            response = client.get(Endpoint(endpoint).models_url)
    except httpx.TimeoutException:
        return Reachability(Reach.UNREACHABLE, reason=f"no answer in {timeout_s:g} s")
    except httpx.ConnectError as exc:
        return Reachability(Reach.UNREACHABLE, reason=connect_failure(causes(exc), endpoint))
    except httpx.HTTPError as exc:
        # httpx's own text ("[Errno …] why"): only its last part is said, never read back.
        reason = str(exc).split("] ")[-1] or type(exc).__name__
        return Reachability(Reach.UNREACHABLE, reason=reason)
    if response.status_code == 200:
        return Reachability(Reach.HEALTHY, 200)
    if response.status_code in (401, 403):
        return Reachability(Reach.WANTS_KEY, response.status_code)
    return Reachability(Reach.HTTP, response.status_code)


def is_reachable(verdict: Reachability) -> bool:
    """A server answered, and not with a server error (5xx: down, overloaded or still loading)."""
    return verdict.reachable


def health_for(verdict: Reachability, has_key: bool) -> Health:
    """What a keyless probe's `verdict` means for an entry with or without a key, in the words
    Home shows: an endpoint that wants a key (401/403), or a gateway that answers a keyless
    request 5xx (LiteLLM without a key database), is `up` for an entry with a key, since a run
    asks again with it before the first task; for an entry without one, a key is wanted."""
    if has_key and (verdict.server_error or verdict.reach == Reach.WANTS_KEY):
        return Health(True, "up", f"up (HTTP {verdict.status} without a key; a run asks again with its key)")
    if verdict.reach == Reach.WANTS_KEY:
        return Health(False, "wants a key", f"wants a key (HTTP {verdict.status}; the entry has no key_env)")
    if verdict.reach == Reach.HEALTHY:
        return Health(True, "healthy", str(verdict))
    if verdict.reach == Reach.HTTP:
        return Health(False, f"HTTP {verdict.status}", str(verdict))
    return Health(False, "unreachable", str(verdict))


def refuse_unreachable(entries: Iterable[ModelEntry], prober: Prober = probe_endpoint) -> None:
    """Raise `RunRefusedError` for the first entry whose endpoint does not answer (each distinct
    endpoint is probed once). Nothing else is sent."""
    seen: dict[str, Reachability] = {}
    for entry in entries:
        verdict = seen.get(entry.endpoint) or seen.setdefault(entry.endpoint, prober(entry.endpoint))
        if entry.key_env is not None and verdict.server_error:
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
        if entry.key_env is None and verdict.reach == Reach.WANTS_KEY:
            # Without a key every task would be refused the same way (`catalogue.check_key`
            # asks again with the key where the entry has one).
            raise RunRefusedError(
                entry.name,
                f"the endpoint {entry.endpoint} is {verdict} but the entry has "
                "no key_env; nothing was sent (set key_env to the variable "
                "holding your virtual key)",
            )
