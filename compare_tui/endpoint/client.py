"""Every HTTP client to a model endpoint is built here: the chat client (`chat_client`, on
aiohttp) that a run, the judge and the tool-call runner send their chat requests through, and
the blocking probe client (`probe_client`, on httpx) of the catalogue's and the engine's probes
and `/props`.

None of them reads `HTTP(S)_PROXY`/`ALL_PROXY` from the environment: a proxy there would
receive prompts, answers and virtual keys (`tests/test_no_ambient_proxy.py` proves it). None
follows a redirect (it could carry the key to another host). Each request's audit row is the
caller's (`engine.audit.audit_row`, from the `Exchange` that `engine.client` returns), so
every request, whoever sent it, is one row of the ledger.

Chat requests go through aiohttp alone: httpx's own pool costs time proportional to its open
connections on every request (encode/httpx#3215), and the engine's former hand-written
HTTP/1.1 client made no difference a user could see on a real server (bench/RESULTS.md,
"Chat transport").
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import httpx

if TYPE_CHECKING:
    import aiohttp

ChatClient: TypeAlias = "aiohttp.ClientSession"
"""What `engine.client` sends chat requests through: what `chat_client` yields."""

TRANSPORT = "aiohttp"
"""What a run records as its `http_transport`."""


@asynccontextmanager
async def chat_client(*, timeout_s: float, concurrency: int = 1) -> AsyncIterator[ChatClient]:
    """The client that chat requests go through (a run, a judging, a tool-call run), closed
    when the block ends: no ambient proxy, no redirects followed (`open_post`), no cookies
    kept, at most `concurrency` connections, at most 10 s to connect. No per-read timer:
    `engine.client` bounds the whole exchange by `timeout_s`, so each read is bounded too."""
    import aiohttp

    # force_close: a connection per request. llama-server closes a connection after every
    # streamed answer (though it says Keep-Alive), and a kept connection would take the next
    # request before the close arrives: a reset on every other request. What a new connection
    # costs: bench/RESULTS.md, "Chat transport".
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=max(1, concurrency), force_close=True, ssl=tls_context()),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=min(10.0, timeout_s)),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
    ) as session:
        yield session


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (certifi's roots), built once per process and shared by
    both clients: loading the roots takes ~15 ms, which a client made per run (or per judge
    call) would pay each time."""
    return httpx.create_ssl_context()


@dataclass(slots=True)
class StreamedResponse:
    """The little of a response `engine.client` reads."""

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
    """POST `payload`; the response stays open (streaming) until the block ends."""
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
    """(error class, reason) for a failure of the chat client, looking through wrapped
    causes; None for anything that is not one (a bug, which the caller re-raises)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = {type(e).__name__ for e in chain}
    text = str(exc) or type(exc).__name__
    if names & {"ClientConnectorError", "ClientConnectorDNSError", "ConnectionRefusedError"}:
        return "connect", f"could not connect: {text}"
    if names & {
        "ServerDisconnectedError",
        "ClientPayloadError",
        "ClientOSError",
        "ConnectionResetError",
        "BrokenPipeError",
        "TransferEncodingError",
    }:
        return "reset", f"connection broken: {text}"
    if names & {"ServerTimeoutError", "SocketTimeoutError", "ConnectionTimeoutError", "TimeoutError"}:
        return "timeout", f"timed out: {text}"
    if "aiohttp" in type(exc).__module__:
        return "transport", f"{type(exc).__name__}: {text}"
    return None
