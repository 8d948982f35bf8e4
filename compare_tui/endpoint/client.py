"""Every HTTP client to a model endpoint is built here: the chat client (`chat_client`, on
aiohttp) that a run, the judge and the tool-call runner send their chat requests through, and
the blocking probe client (`probe_client`, on httpx) of the catalogue's and the engine's probes
and `/props`.

None of them reads `HTTP(S)_PROXY`/`ALL_PROXY` from the environment: a proxy there would
receive prompts, answers and virtual keys (`tests/test_no_ambient_proxy.py` proves it). None
follows a redirect (it could carry the key to another host). Each request's audit row is the
caller's (`engine.audit.audit_row`, from the `Exchange` that `engine.exchange` returns), so
every request, whoever sent it, is one row of the ledger.

Chat requests go through aiohttp alone: httpx's own pool costs time proportional to its open
connections on every request (encode/httpx#3215), and the engine's former hand-written
HTTP/1.1 client made no difference a user could see on a real server (bench/RESULTS.md,
"Chat transport"). Connections are kept where the server keeps them: a new connection per
request cost a zero-delay loopback server three quarters of its requests/s at 64 in flight.
"""

from __future__ import annotations

import errno
import functools
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlsplit

import httpx

from compare_tui.vocabulary import ErrorClass

if TYPE_CHECKING:
    import aiohttp

ChatClient: TypeAlias = "aiohttp.ClientSession"
"""What `engine.exchange` sends chat requests through: what `chat_client` yields."""

TRANSPORT = "aiohttp"
"""What a run records as its `http_transport`."""


@asynccontextmanager
async def chat_client(*, timeout_s: float, concurrency: int = 1) -> AsyncIterator[ChatClient]:
    """The client that chat requests go through (a run, a judging, a tool-call run), closed
    when the block ends: no ambient proxy, no redirects followed (`open_post`), no cookies
    kept, at most `concurrency` connections, at most 10 s to connect. No per-read timer:
    `engine.exchange` bounds the whole exchange by `timeout_s`, so each read is bounded too.
    Connections are kept between requests, except to a server learnt to drop them
    (`open_post`)."""
    import aiohttp

    async def reused(session: object, context: Any, params: object) -> None:
        context.trace_request_ctx.reused = True

    trace = aiohttp.TraceConfig()
    trace.on_connection_reuseconn.append(reused)
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=max(1, concurrency), ssl=tls_context()),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=min(10.0, timeout_s)),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
        trace_configs=[trace],
    ) as session:
        yield session


_DROPS_KEPT: set[tuple[str, str]] = set()
"""(scheme, host:port) of servers that closed a kept connection under a request: llama-server
says `Keep-Alive` but closes after every streamed answer. Learnt once per process."""


@dataclass(slots=True)
class _Reuse:
    reused: bool = False
    """Set by the session's trace when the request went on a kept connection."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's roots), built once per process and shared by
    both clients: loading the roots is slow enough that a client made per run (or per judge
    call) should not pay it each time."""
    return httpx.create_ssl_context()


@dataclass(slots=True)
class StreamedResponse:
    """The little of a response `engine.exchange` reads."""

    status: int
    headers: Mapping[str, str]
    read: Callable[[], Awaitable[bytes]]
    """The whole body (for an error or a non-streamed answer)."""
    chunks: Callable[[], AsyncIterator[bytes]]
    """The body's bytes as they arrive, never held back to fill a chunk size."""


@asynccontextmanager
async def open_post(
    client: ChatClient, url: str, payload: bytes, headers: Mapping[str, str]
) -> AsyncIterator[StreamedResponse]:
    """POST `payload`; the response stays open (streaming) until the block ends.

    A request that went on a kept connection which the server closed cleanly before a byte of
    answer (it never read it, or read it and dropped it) is written again, on another connection;
    the server's origin is then learnt (`_DROPS_KEPT`) and its connections are closed after
    each answer instead of kept. A request on a new connection is never written twice."""
    import aiohttp

    parts = urlsplit(url)
    origin = (parts.scheme, parts.netloc)
    tries = (client.connector.limit if client.connector else 1) + 1  # each stale kept one, then a new one
    for tried in range(1, tries + 1):
        trace = _Reuse()
        try:
            response = await client.post(
                url, data=payload, headers=headers, allow_redirects=False, trace_request_ctx=trace
            )
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            # Unanswered: closed cleanly (the message of a `ServerDisconnectedError` is the part
            # of an answer that arrived, if any, else text), or the request could not be
            # written (errno None: aiohttp's "Can not write request body") or met a closed
            # socket (a reset).
            unanswered = (
                isinstance(exc.message, str)
                if isinstance(exc, aiohttp.ServerDisconnectedError)
                else exc.errno in (None, errno.ECONNRESET, errno.EPIPE)
            )
            if not (trace.reused and unanswered) or tried == tries:
                raise
            _DROPS_KEPT.add(origin)
            continue
        break
    try:
        yield StreamedResponse(response.status, response.headers, response.read, response.content.iter_any)
    finally:
        if origin in _DROPS_KEPT:
            response.close()  # the server would close it under the next request
        else:
            response.release()
        await response.wait_for_close()  # as aiohttp's own `async with` does


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


def causes(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it wraps (its cause, else its context), at most eight."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def connect_failure(chain: list[BaseException], url: str | None = None) -> str:
    """Why a connection could not be made, in the product's words (aiohttp's read `Cannot
    connect to host … ssl:default [Connect call failed …]`): `nothing listens on HOST:PORT`
    for a refused connection, `cannot resolve the host name HOST`, else the system's reason.
    `chain` is the exception with its causes; `url` is where it was sent, for exceptions that
    do not name the address (httpx's)."""
    host: str | None = None
    port: int | None = None
    for error in chain:
        named_host, named_port = getattr(error, "host", None), getattr(error, "port", None)
        if named_host is not None and named_port is not None:  # aiohttp's connector errors
            host, port = str(named_host), int(named_port)
            break
    if host is None and url is not None:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    where = "the endpoint" if host is None else f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if any(isinstance(error, ConnectionRefusedError) for error in chain):
        return f"nothing listens on {where}"
    if any(isinstance(error, socket.gaierror) for error in chain):
        return f"cannot resolve the host name {host}" if host else "cannot resolve the endpoint's host name"
    reason = next((e.strerror for e in chain if isinstance(e, OSError) and e.strerror), None)
    return f"could not connect to {where}: {reason or str(chain[0]) or type(chain[0]).__name__}"


def classify_exception(exc: BaseException) -> tuple[ErrorClass, str] | None:
    """(error class, reason) for a failure of the chat client, looking through wrapped
    causes; None for anything that is not one (a bug, which the caller re-raises)."""
    chain = causes(exc)
    names = {type(e).__name__ for e in chain}
    text = str(exc) or type(exc).__name__
    if names & {"ClientConnectorError", "ClientConnectorDNSError", "ConnectionRefusedError"}:
        return ErrorClass.CONNECT, connect_failure(chain)
    if names & {
        "ServerDisconnectedError",
        "ClientPayloadError",
        "ClientOSError",
        "ConnectionResetError",
        "BrokenPipeError",
        "TransferEncodingError",
    }:
        return ErrorClass.RESET, f"connection broken: {text}"
    if names & {"ServerTimeoutError", "SocketTimeoutError", "ConnectionTimeoutError", "TimeoutError"}:
        return ErrorClass.TIMEOUT, f"timed out: {text}"
    if "aiohttp" in type(exc).__module__:
        return ErrorClass.TRANSPORT, f"{type(exc).__name__}: {text}"
    return None
