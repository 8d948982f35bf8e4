"""Which HTTP transport the engine uses, and why.

httpx's own connection pool costs time proportional to its open connections on every request
(encode/httpx#3215); at 16–64 requests in flight it, not the server, became the bottleneck
(bench/RESULTS.md, "Engine overhead"). The engine therefore keeps httpx's API but sends through
aiohttp (`httpx-aiohttp`'s transport) when it is installed. `COMPARE_TUI_HTTP_TRANSPORT=httpx`
forces httpx's own pool, e.g. to compare the two.

Every HTTP client that talks to a model endpoint (the engine, the judge, the tool-call runner,
every probe) is built by `endpoint_client` or `probe_client` here, so that none of them reads
`HTTP(S)_PROXY`/`ALL_PROXY` from the environment: a proxy there would receive prompts,
answers and virtual keys. `tests/test_no_ambient_proxy.py` proves it.
"""

from __future__ import annotations

import os

import httpx


def make_transport(concurrency: int) -> httpx.AsyncBaseTransport | None:
    """An aiohttp-backed transport sized for `concurrency`, or None for httpx's default."""
    if os.environ.get("COMPARE_TUI_HTTP_TRANSPORT", "aiohttp") == "httpx":
        return None
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        return None
    # trust_env=False: requests go where the catalogue says, never through an ambient proxy.
    return AiohttpTransport(limits=httpx.Limits(max_connections=concurrency), trust_env=False)


def endpoint_client(
    *, timeout_s: float, concurrency: int = 1, transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """An async client for a model endpoint: never through an ambient proxy (`trust_env=False`,
    also for httpx's own pool when `transport` is None), at most `concurrency` connections,
    `timeout_s` per read and at most 10 s to connect. The caller closes it."""
    connections = max(1, concurrency)
    return httpx.AsyncClient(
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
        transport=transport,
        trust_env=False,
    )


def probe_client(*, timeout_s: float) -> httpx.Client:
    """A blocking client for one quick probe of an endpoint (health, `/props`): never through
    an ambient proxy, no redirects followed. The caller closes it."""
    return httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False)


def transport_name(transport: httpx.AsyncBaseTransport | None) -> str:
    return "httpx" if transport is None else type(transport).__module__.split(".")[0]


def classify_exception(exc: BaseException) -> tuple[str, str] | None:
    """(error class, reason) for a transport failure, looking through wrapped causes.

    The aiohttp transport re-raises aiohttp errors as httpx ones, sometimes loosely (a server
    that closed the connection surfaces as `ConnectTimeout`), so the original cause decides.
    """
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = {type(e).__name__ for e in chain}
    text = str(exc) or type(exc).__name__
    if names & {"ClientConnectorError", "ConnectError", "ConnectionRefusedError", "ClientConnectorDNSError"}:
        return "connect", f"could not connect: {text}"
    if names & {"ServerDisconnectedError", "ClientPayloadError", "ClientOSError", "ConnectionResetError",
                "RemoteProtocolError", "ReadError", "WriteError", "BrokenPipeError", "TransferEncodingError"}:
        return "reset", f"connection broken: {text}"
    if names & {"ServerTimeoutError", "SocketTimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout",
                "PoolTimeout", "WriteTimeout", "TimeoutError"}:
        return "timeout", f"timed out: {text}"
    if isinstance(exc, httpx.HTTPError) or "aiohttp" in type(exc).__module__:
        return "transport", f"{type(exc).__name__}: {text}"
    return None
