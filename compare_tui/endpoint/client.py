"""Every HTTP client to a model endpoint is built here: the chat client (`chat_client`) that
a run, the judge and the tool-call runner send their chat requests through, and the blocking
probe client (`probe_client`) of the catalogue's and the engine's probes and `/props`.

None of them reads `HTTP(S)_PROXY`/`ALL_PROXY` from the environment: a proxy there would
receive prompts, answers and virtual keys (`tests/test_no_ambient_proxy.py` proves it). None
follows a redirect (it could carry the key to another host). Each request's audit row is the
caller's (`engine.audit.audit_row`, from the `Exchange` that `engine.client` returns), so
every request, whoever sent it, is one row of the ledger.

httpx's own connection pool costs time proportional to its open connections on every request
(encode/httpx#3215); at 16–64 requests in flight it, not the server, became the bottleneck
(bench/RESULTS.md, "Engine overhead"), so chat requests do not go through it.
`COMPARE_TUI_HTTP_TRANSPORT` picks the chat client's library (`TRANSPORTS`).
"""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

import httpx

from compare_tui.endpoint.wire import WireConnectError, WireDisconnected, WireError, WirePool
from compare_tui.errors import CompareTuiError

if TYPE_CHECKING:
    import aiohttp

ChatClient: TypeAlias = "httpx.AsyncClient | aiohttp.ClientSession | WirePool"
"""What `engine.client` sends chat requests through: whatever `chat_client` yields."""

TRANSPORTS = ("wire", "aiohttp", "httpx")
"""What `COMPARE_TUI_HTTP_TRANSPORT` may name for a run's chat requests (the first is the default)."""


class TransportChoiceError(CompareTuiError):
    """`COMPARE_TUI_HTTP_TRANSPORT` names a transport that does not exist."""


def _wanted() -> str:
    return os.environ.get("COMPARE_TUI_HTTP_TRANSPORT", TRANSPORTS[0])


def check_transport_choice() -> None:
    """Raise `TransportChoiceError` when `COMPARE_TUI_HTTP_TRANSPORT` names no transport
    (`prepare_run` asks before it writes anything)."""
    wanted = _wanted()
    if wanted not in TRANSPORTS:
        raise TransportChoiceError(
            f"COMPARE_TUI_HTTP_TRANSPORT={wanted!r} names no transport: set it to "
            f"{', '.join(TRANSPORTS)}, or unset it for {TRANSPORTS[0]}"
        )


@asynccontextmanager
async def chat_client(*, timeout_s: float, concurrency: int = 1) -> AsyncIterator[ChatClient]:
    """The client that chat requests go through (a run, a judging, a tool-call run), closed
    when the block ends: `wire.WirePool` by default, an aiohttp session with
    `COMPARE_TUI_HTTP_TRANSPORT=aiohttp`, an httpx client with `=httpx` (or when aiohttp is
    missing). Every one: no ambient proxy, no redirects followed, no cookies kept, at most
    `concurrency` connections, at most 10 s to connect. No per-read timer: `engine.client`
    bounds the whole exchange by `timeout_s`, so each read is bounded too. Raises
    `TransportChoiceError` for a transport that does not exist."""
    check_transport_choice()
    wanted = _wanted()
    connect_s = min(10.0, timeout_s)
    if wanted == "wire":
        async with WirePool(limit=concurrency, connect_timeout_s=connect_s) as pool:
            yield pool
        return
    if wanted == "aiohttp":
        try:
            import aiohttp
        except ImportError:
            pass
        else:
            # force_close: a connection per request. llama-server closes a connection after every
            # streamed answer (though it says Keep-Alive), and aiohttp would send the next request
            # into it before the close arrives: a reset on every other request.
            async with aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=max(1, concurrency), force_close=True),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_s),
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            ) as session:
                yield session
            return
    connections = max(1, concurrency)
    async with httpx.AsyncClient(
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        timeout=httpx.Timeout(timeout_s, connect=connect_s),
        trust_env=False,
        verify=tls_context(),
    ) as client:
        yield client


def transport_name(client: ChatClient) -> str:
    """What a run records as its `http_transport`: `wire`, `aiohttp` or `httpx`."""
    if isinstance(client, WirePool):
        return "wire"
    return "httpx" if isinstance(client, httpx.AsyncClient) else "aiohttp"


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's roots), built once per process: loading the
    roots takes ~15 ms, which a client made per run (or per judge call) would pay each time."""
    return httpx.create_ssl_context()


class ChatResponse(Protocol):
    """What `client.stream_chat` reads of a response: `StreamedResponse` (httpx, aiohttp) or
    the wire client's own response."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    def read(self) -> Awaitable[bytes]: ...
    def chunks(self) -> AsyncIterator[bytes]: ...


@dataclass(slots=True)
class StreamedResponse:
    """The little of a response `client.stream_chat` reads, the same for either library."""

    status: int
    headers: Mapping[str, str]
    read: Callable[[], Awaitable[bytes]]
    """The whole body (for an error or a non-streamed answer)."""
    chunks: Callable[[], AsyncIterator[bytes]]
    """The body's bytes as they arrive, never held back to fill a chunk size."""


@asynccontextmanager
async def open_post(
    client: httpx.AsyncClient | aiohttp.ClientSession, url: str, payload: bytes, headers: Mapping[str, str]
) -> AsyncIterator[StreamedResponse]:
    """POST `payload` through an httpx client or an aiohttp session; the response stays open
    (streaming) until the block ends."""
    if isinstance(client, httpx.AsyncClient):
        async with client.stream("POST", url, content=payload, headers=dict(headers)) as response:
            # No chunk size: httpx would otherwise hold bytes back until that many arrived,
            # which delays every token to the end of a short answer and ruins TTFT.
            yield StreamedResponse(response.status_code, response.headers, response.aread, response.aiter_raw)
    else:
        async with client.post(url, data=payload, headers=headers, allow_redirects=False) as response:
            yield StreamedResponse(response.status, response.headers, response.read, response.content.iter_any)


def probe_client(
    *, timeout_s: float, headers: Mapping[str, str] | None = None, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """A blocking client for quick probes of an endpoint (health, `/models`, `/props`, a key
    check): never through an ambient proxy, no redirects followed, `headers` on every request,
    `transport` for tests. The caller closes it."""
    return httpx.Client(
        timeout=timeout_s,
        headers=dict(headers or {}),
        follow_redirects=False,
        trust_env=False,
        verify=tls_context(),
        transport=transport,
    )


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
    if isinstance(exc, WireConnectError):
        return "connect", text
    if isinstance(exc, WireDisconnected):
        return "reset", f"connection broken: {text}"
    if isinstance(exc, WireError):
        return "transport", text
    if names & {"ClientConnectorError", "ConnectError", "ConnectionRefusedError", "ClientConnectorDNSError"}:
        return "connect", f"could not connect: {text}"
    if names & {
        "ServerDisconnectedError",
        "ClientPayloadError",
        "ClientOSError",
        "ConnectionResetError",
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
        "BrokenPipeError",
        "TransferEncodingError",
    }:
        return "reset", f"connection broken: {text}"
    if names & {
        "ServerTimeoutError",
        "SocketTimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "ConnectTimeout",
        "PoolTimeout",
        "WriteTimeout",
        "TimeoutError",
    }:
        return "timeout", f"timed out: {text}"
    if isinstance(exc, httpx.HTTPError) or "aiohttp" in type(exc).__module__:
        return "transport", f"{type(exc).__name__}: {text}"
    return None
