"""Before the first task, the endpoint is asked, with the run's own key, whether it takes it.

`check_key` makes one or two GETs, never a chat request:
- a key `resolve_key` accepted only because the entry declares a gateway (a bare `sk-…` key,
  the only shape LiteLLM issues) must be confirmed by that gateway: LiteLLM's `/key/info`
  with the key itself as bearer (answers 200 only where the gateway has a key database and
  knows the key), else `GET /v1/models` answering 200 with that key (a gateway without a
  database accepts only its master key there). Anything else refuses the run;
- any other key: `GET /models` with it; a 4xx or 5xx answer (the gateway rejected the key, or
  cannot check it) refuses the run, quoting the gateway's message with the key masked.
  404/405 (no such route) says nothing about the key and is accepted.

Requests go where the catalogue says, never through an ambient proxy, and follow no redirect
(a redirect could carry the key to another host). The key is never part of a message.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from compare_tui.catalogue.errors import ModelRefused
from compare_tui.catalogue.keys import mask_provider_keys, needs_gateway_confirmation, redact
from compare_tui.catalogue.models import ModelEntry
from compare_tui.endpoint import Endpoint, key_headers

if TYPE_CHECKING:
    import httpx  # imported when a key is checked: importing httpx pulls in Rich (its CLI)

TIMEOUT_S = 5.0

BY_KEY_INFO = "the gateway's /key/info"
BY_MODELS = "GET /models with the key (the gateway has no key database)"
BY_LISTING = "GET /models with the key"


def _message(response: httpx.Response, key: str) -> str:
    """The server's own error message (OpenAI `error.message`, FastAPI `detail`, or the
    text), at most 300 characters, with the key and anything shaped like a key masked."""
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            text = str(error.get("message") or error)
        elif isinstance(error, str):
            text = error
        elif "detail" in body:
            text = str(body["detail"])
    text = mask_provider_keys(redact(text, [key]))
    return text[:300]


def _answer(response: httpx.Response, key: str) -> str:
    message = _message(response, key)
    return f"HTTP {response.status_code}" + (f": {message}" if message else "")


def check_key(
    entry: ModelEntry, key: str | None, *, timeout_s: float = TIMEOUT_S, transport: httpx.BaseTransport | None = None
) -> str | None:
    """How the endpoint confirmed `key` (`BY_KEY_INFO`, `BY_MODELS`, `BY_LISTING`), or None
    when there is no key (a keyless endpoint is probed by `engine.reachability`). Raises
    `ModelRefused`, saying nothing was sent, when the endpoint refuses or cannot be asked."""
    if key is None:
        return None
    import httpx

    from compare_tui.endpoint.client import probe_client

    headers = key_headers(key)
    at = Endpoint(entry.endpoint)
    models_url = at.models_url
    gateway_key = needs_gateway_confirmation(entry, key)
    try:
        with probe_client(timeout_s=timeout_s, transport=transport) as client:
            if gateway_key:
                info = client.get(at.beside("key/info"), headers=headers)
                if info.status_code == 200 and isinstance(_json(info), dict):
                    return BY_KEY_INFO
                listing = client.get(models_url, headers=headers)
                if listing.status_code == 200:
                    return BY_MODELS
                raise ModelRefused.about(
                    entry.name,
                    f"the {entry.gateway} gateway at {entry.endpoint} did not "
                    f"confirm the sk-… key in ${entry.key_env} (/key/info answered "
                    f"{_answer(info, key)}; /models answered {_answer(listing, key)}); nothing "
                    "was sent. Use a virtual key this gateway issued",
                )
            listing = client.get(models_url, headers=headers)
    except httpx.HTTPError as exc:
        reason = mask_provider_keys(redact(str(exc), [key])) or type(exc).__name__
        raise ModelRefused.about(
            entry.name,
            f"could not ask {entry.endpoint} whether it accepts "
            f"the key in ${entry.key_env} ({reason}); nothing was sent",
        ) from None
    if listing.status_code < 400 or listing.status_code in (404, 405):
        return BY_LISTING
    raise ModelRefused.about(
        entry.name,
        f"{entry.endpoint} refused the key in ${entry.key_env} "
        f"(GET /models answered {_answer(listing, key)}); nothing was sent. Check the key "
        "(and that the gateway can check it), then try again",
    )


def _json(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None
