"""Which HTTP transport the engine uses, and why.

httpx's own connection pool costs time proportional to its open connections on every request
(encode/httpx#3215); at 16–64 requests in flight it, not the server, became the bottleneck
(bench/RESULTS.md, "Engine overhead"). Clients that send few requests (the judge, probes,
the server identity) keep httpx's API and send through aiohttp (`httpx-aiohttp`'s transport)
when it is installed. The engine's chat requests, the hot path of a run, go to aiohttp
directly (`chat_session`): httpx's request and response models around the aiohttp transport
cost about 300 µs a request (URL parsing, header merging, cookie extraction), more than the
transport itself (bench/RESULTS.md, "Engine overhead"). `COMPARE_TUI_HTTP_TRANSPORT=httpx`
forces httpx's own pool everywhere, e.g. to compare the two.

Every HTTP client that talks to a model endpoint (the engine, the judge, the tool-call runner,
every probe) is built by `endpoint_client` or `probe_client` here, so that none of them reads
`HTTP(S)_PROXY`/`ALL_PROXY` from the environment: a proxy there would receive prompts,
answers and virtual keys. `tests/integration/test_no_ambient_proxy.py` proves it.
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

from compare_tui.engine.wire import WireConnectError, WireDisconnected, WireError, WirePool
from compare_tui.errors import CompareTuiError
from compare_tui.vocabulary import ErrorClass

if TYPE_CHECKING:
    import aiohttp

ChatClient: TypeAlias = "httpx.AsyncClient | aiohttp.ClientSession | WirePool"
"""What `client.stream_chat` sends through: an httpx client, an aiohttp session, or
`chat_session`'s own HTTP/1.1 client (`wire.WirePool`)."""

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


def _aiohttp_wanted() -> bool:
    return _wanted() != "httpx"


def make_transport(concurrency: int) -> httpx.AsyncBaseTransport | None:
    """An aiohttp-backed transport sized for `concurrency`, or None for httpx's default."""
    if not _aiohttp_wanted():
        return None
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        return None
    # trust_env=False: requests go where the catalogue says, never through an ambient proxy.
    return AiohttpTransport(limits=httpx.Limits(max_connections=concurrency), trust_env=False)


def endpoint_client(
    *,
    timeout_s: float,
    concurrency: int = 1,
    transport: httpx.AsyncBaseTransport | None = None,
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
        verify=tls_context(),
    )


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's roots), built once per process: loading the
    roots takes ~15 ms, which a client made per run (or per judge call) would pay each time."""
    return httpx.create_ssl_context()


def chat_session(*, timeout_s: float, concurrency: int = 1) -> WirePool | aiohttp.ClientSession | None:
    """The client for a run's chat requests (`client.stream_chat` takes it or an httpx
    client): `wire.WirePool` by default, a plain aiohttp session with
    `COMPARE_TUI_HTTP_TRANSPORT=aiohttp`, None (httpx) with `=httpx` or when aiohttp is
    missing. Same promises as `endpoint_client`: no ambient proxy, at most `concurrency`
    connections, at most 10 s to connect; and no redirects followed, no cookies kept (as
    httpx). No per-read timer: `stream_chat` bounds the whole exchange by `timeout_s`, so each
    read is bounded too, without re-arming a timer on every read. The caller closes it."""
    check_transport_choice()
    wanted = _wanted()
    if wanted == "wire":
        return WirePool(limit=concurrency, connect_timeout_s=min(10.0, timeout_s))
    if wanted == "httpx":
        return None
    try:
        import aiohttp
    except ImportError:
        return None
    # force_close: a connection per request. llama-server closes a connection after every
    # streamed answer (though it says Keep-Alive), and aiohttp would send the next request into
    # it before the close arrives: a reset on every other request (the wire client learns this).
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=max(1, concurrency), force_close=True),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=min(10.0, timeout_s)),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
    )


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


def probe_client(*, timeout_s: float) -> httpx.Client:
    """A blocking client for one quick probe of an endpoint (health, `/props`): never through
    an ambient proxy, no redirects followed. The caller closes it."""
    return httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False, verify=tls_context())


def transport_name(transport: httpx.AsyncBaseTransport | None, *, native: object = None) -> str:
    """What a run records as its `http_transport`: `wire` or `aiohttp` for `chat_session`'s
    client (`native`), else the transport under httpx."""
    if isinstance(native, WirePool):
        return "wire"
    if native is not None:
        return "aiohttp"
    return "httpx" if transport is None else type(transport).__module__.split(".")[0]


def classify_exception(exc: BaseException) -> tuple[ErrorClass, str] | None:
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
        return ErrorClass.CONNECT, text
    if isinstance(exc, WireDisconnected):
        return ErrorClass.RESET, f"connection broken: {text}"
    if isinstance(exc, WireError):
        return ErrorClass.TRANSPORT, text
    if names & {"ClientConnectorError", "ConnectError", "ConnectionRefusedError", "ClientConnectorDNSError"}:
        return ErrorClass.CONNECT, f"could not connect: {text}"
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
        return ErrorClass.RESET, f"connection broken: {text}"
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
        return ErrorClass.TIMEOUT, f"timed out: {text}"
    if isinstance(exc, httpx.HTTPError) or "aiohttp" in type(exc).__module__:
        return ErrorClass.TRANSPORT, f"{type(exc).__name__}: {text}"
    return None
