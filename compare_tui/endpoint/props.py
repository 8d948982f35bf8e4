"""llama.cpp's `/props`, fetched in one place for every reader: a run's server identity
(`engine.environment`), the tool-call run's server notes (`toolcall.run.server_probe`), `models
add` (`catalogue.probe`) and `local up` (`local.server`).

Blocking, through `client.probe_client`: the async callers run it in a thread (one request
per run or per tool-call run), so that it goes through the same client, without an ambient
proxy, as every other probe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from compare_tui.endpoint import Endpoint
from compare_tui.endpoint.client import probe_client
from compare_tui.errors import CompareTuiError

MAX_PROPS_BYTES = 4_000_000
"""A self-description larger than this is not one (a chat template is a few KiB)."""


class PropsUnavailable(CompareTuiError, LookupError):
    """The server gave no `/props` body. `status` is its HTTP status (404: a stack other than
    llama.cpp), None when it did not answer. The message never carries the request headers."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def fetch_props(
    endpoint: Endpoint | str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 5.0,
    client: httpx.Client | None = None,
) -> dict[str, Any]:
    """The server's `/props` as a JSON object. Through `client` when given (a probe that
    already holds one), else a `probe_client` of its own. Raises `PropsUnavailable`."""
    url = (endpoint if isinstance(endpoint, Endpoint) else Endpoint(endpoint)).props_url
    try:
        if client is None:
            with probe_client(timeout_s=timeout_s) as own:
                response = own.get(url, headers=dict(headers or {}))
        else:
            response = client.get(url, headers=dict(headers or {}), timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise PropsUnavailable(f"GET {url} failed: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise PropsUnavailable(f"GET {url} returned HTTP {response.status_code}", response.status_code)
    if len(response.content) > MAX_PROPS_BYTES:
        raise PropsUnavailable(f"GET {url} returned more than {MAX_PROPS_BYTES} bytes", response.status_code)
    try:
        body = json.loads(response.content)
    except ValueError:
        raise PropsUnavailable(f"GET {url} did not return JSON", response.status_code) from None
    if not isinstance(body, dict):
        raise PropsUnavailable(f"GET {url} did not return a JSON object", response.status_code)
    return body
