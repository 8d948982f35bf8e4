"""Endpoint health for the Home screen: one quick GET of `<endpoint>/models`.

No key is sent (a health check never handles credentials), so a host that wants one answers
401/403, which still proves it is up. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import httpx

from compare_tui.engine.transport import probe_client

TIMEOUT_S = 2.0


def probe_endpoint(endpoint: str, timeout_s: float = TIMEOUT_S) -> str:
    """`healthy`, `up (HTTP 401: wants a key)`, `HTTP 503`, or `unreachable: <why>`."""
    try:
        with probe_client(timeout_s=timeout_s) as client:
            response = client.get(f"{endpoint.rstrip('/')}/models")
    except httpx.TimeoutException:
        return f"unreachable: no answer in {timeout_s:g} s"
    except httpx.HTTPError as exc:
        reason = str(exc).split("] ")[-1] or type(exc).__name__
        return f"unreachable: {reason}"
    if response.status_code == 200:
        return "healthy"
    if response.status_code in (401, 403):
        return f"up (HTTP {response.status_code}: wants a key)"
    return f"HTTP {response.status_code}"
