"""A small HTTP/1.1 client on asyncio's protocols, for the requests of a run.

Why not aiohttp here: at 64 requests in flight a run is CPU-bound on one core, and aiohttp's
request and response objects (URL and header models, its stream reader, tracing hooks, a
timer per request) cost more than everything the engine does with an answer. A chat
request needs one thing HTTP can do: POST a JSON body and read the response, streamed, on a
kept-alive connection (and a GET, for the server's identity). This module does exactly that and no more (bench/RESULTS.md, "Engine
overhead", measures the difference); every other client keeps httpx (`transport.py`).

What it does: HTTP/1.1 over TCP or TLS (`https:`), one connection per request in flight up to
a limit, connections kept alive and reused (LIFO), responses framed by `Transfer-Encoding:
chunked`, `Content-Length` or the connection's close, `Content-Encoding: gzip/deflate`
decoded, 1xx interim responses skipped. What it never does: read proxy settings from the
environment (it has none: it connects to the host in the URL), follow redirects, keep cookies,
or retry (the engine's retry policy decides, and each try is its own audit row). One exception,
as every keep-alive client makes it: a request written into a kept-alive connection that the
server closes before sending one byte of an answer was never read by the server (it had
finished with that connection), and is written once more on a new connection.

Keep-alive is learnt, not trusted: llama-server says `Keep-Alive` on every response but closes
the connection after each streamed (chunked) one, while it keeps it after one with a length.
So whether a server keeps a connection is learnt per origin and per framing of the response
that ended on it (`_put_back`).

Errors are its own `WireError` subclasses, named so that `transport.classify_exception` gives
the engine's classes: `WireConnectError` (connect), `WireDisconnected` (reset) and
`WireProtocolError` (transport: the peer does not speak HTTP/1.1 as this client reads it).
"""

from __future__ import annotations

import asyncio
import re
import ssl as ssl_module
import zlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from compare_tui.errors import CompareTuiError

MAX_HEAD_BYTES = 64 * 1024
"""A response head (status line and headers) longer than this is not HTTP we read."""
PAUSE_BYTES = 4 * 1024 * 1024
"""Body bytes buffered unread past which the socket stops being read until the reader catches up."""
SETTLE_S = 0.002
"""After a server's first response of each framing (chunked, length), how long its connection
waits before it is reused: a server that closes connections after such a response
(llama-server, after every streamed one, though it says `Keep-Alive`) has usually closed it by
then, and the pool learns not to reuse them, instead of sending the next request into a
connection about to close. A close that comes later still meets a request that is then
written again (`WirePool.request`), and the pool learns from that instead."""
IDLE_CLOSE_S = 1.0
"""A server that closes an idle connection this soon after its response closes connections
after responses (a keep-alive timeout is seconds)."""
DRAIN_S = 2.0
"""How long a connection whose response was left unfinished (the reader stopped at `[DONE]`)
may take to finish it before it is closed instead of reused."""

_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class WireError(CompareTuiError, OSError):
    """A failure of the HTTP exchange itself (not an HTTP error status). An `OSError` too, as
    the other clients' network failures are."""


class WireConnectError(WireError):
    """The connection could not be opened."""


class WireDisconnected(WireError):
    """The server closed or reset the connection before the response ended."""


class WireProtocolError(WireError):
    """The bytes that came back are not an HTTP/1.1 response this client can read."""


class WireTimeout(WireError, TimeoutError):
    """The response did not end within the request's `timeout_s` (a `TimeoutError`, as
    `asyncio.timeout` raises)."""


_HEAD, _BODY_CHUNK_SIZE, _BODY_CHUNK_DATA, _BODY_CHUNK_CRLF, _TRAILERS, _BODY_LENGTH, _BODY_CLOSE, _DONE = range(8)


def _find(buf: bytes, pos: int, marker: bytes, limit: int, what: str) -> int:
    """Where `marker` starts in `buf` from `pos`, or -1 while it may still arrive; raises once
    more than `limit` bytes wait without it (a peer that never ends a line)."""
    end = buf.find(marker, pos)
    if end < 0 and len(buf) - pos > limit:
        raise WireProtocolError(f"{what} longer than {limit} bytes")
    return end


class _Response:
    """One response as it arrives: its head, then its body's bytes (de-chunked, decoded)."""

    __slots__ = (
        "_conn",
        "_state",
        "_buf",
        "_left",
        "_pieces",
        "_buffered",
        "_waiter",
        "_error",
        "_inflate",
        "status",
        "headers",
        "keep_alive",
        "discard",
        "complete",
        "framing",
        "seen",
    )

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn
        self._state = _HEAD
        self._buf = b""
        self._left = 0
        self._pieces: list[bytes] = []
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._error: BaseException | None = None
        self._inflate: zlib._Decompress | None = None
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = False
        self.discard = False
        """Set once the reader has gone: the rest of the body is read only to reuse the connection."""
        self.complete = False
        self.framing = ""
        """How the body is delimited: "chunked", "length" or "close" (once the head has come)."""
        self.seen = False
        """Whether any byte of it has arrived."""

    # ------------------------------------------------------------------ the reader's side

    async def head(self) -> None:
        while self._state == _HEAD and self._error is None:
            await self._wait()
        if self._state == _HEAD:
            raise self._error  # type: ignore[misc]

    def chunks(self) -> _Body:
        """The body's bytes as they arrive (what is buffered comes as one piece)."""
        return _Body(self)

    def take(self) -> bytes | None:
        """What has arrived and not been taken yet, or None when nothing has."""
        if not self._pieces:
            return None
        pieces, self._pieces = self._pieces, []
        self._buffered = 0
        self._conn.resume()
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.chunks()])

    async def _wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ------------------------------------------------------------------ the protocol's side

    def feed(self, data: bytes) -> None:
        self.seen = True
        try:
            self._parse(data)
        except WireError as exc:
            self.fail(exc)
            self._conn.close()
        self._wake()

    def eof(self) -> None:
        if self._state == _BODY_CLOSE:
            self._end_body()
        self.fail(WireDisconnected("the server closed the connection before the response ended"))

    def fail(self, exc: BaseException) -> None:
        if not self.complete and self._error is None:
            self._error = exc
        self._wake()

    def _parse(self, data: bytes) -> None:
        buf = self._buf + data if self._buf else data
        pos = 0
        while True:
            state = self._state
            if state == _HEAD:
                end = _find(buf, pos, b"\r\n\r\n", MAX_HEAD_BYTES, "a response head")
                if end < 0:
                    break
                self._read_head(buf[pos:end])
                pos = end + 4
            elif state == _BODY_CHUNK_SIZE:
                pos = self._chunks(buf, pos)
                if self._state == _BODY_CHUNK_SIZE:
                    break  # a size line not complete yet
            elif state == _BODY_CHUNK_DATA:
                take = min(self._left, len(buf) - pos)
                if take == 0:
                    break
                self._emit(buf[pos : pos + take])
                pos += take
                self._left -= take
                if self._left:
                    break
                self._state = _BODY_CHUNK_CRLF
            elif state == _BODY_CHUNK_CRLF:
                if len(buf) - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise WireProtocolError("a chunk not followed by CRLF")
                pos += 2
                self._state = _BODY_CHUNK_SIZE
            elif state == _TRAILERS:
                end = _find(buf, pos, b"\r\n", MAX_HEAD_BYTES, "a trailer line")
                if end < 0:
                    break
                last = end == pos
                pos = end + 2
                if last:
                    self._end_body()
            elif state == _BODY_LENGTH:
                take = min(self._left, len(buf) - pos)
                if take:
                    self._emit(buf[pos : pos + take])
                    pos += take
                    self._left -= take
                if self._left:
                    break
                self._end_body()
            elif state == _BODY_CLOSE:
                if pos < len(buf):
                    self._emit(buf[pos:])
                pos = len(buf)
                break
            else:  # _DONE: bytes after the response are not ours to read
                if pos < len(buf):
                    self.keep_alive = False
                    self._conn.close()
                pos = len(buf)
                break
        self._buf = buf[pos:] if pos < len(buf) else b""

    def _chunks(self, buf: bytes, pos: int) -> int:
        """Read the chunks that lie whole in `buf` from `pos` (one piece emitted for all of
        them); stop in the state the first incomplete one leaves. Returns the new position."""
        pieces: list[bytes] = []
        end_of_buf = len(buf)
        while True:
            end = _find(buf, pos, b"\r\n", 4096, "a chunk size line")
            if end < 0:
                break
            size_text = buf[pos:end]
            if not _HEX.fullmatch(size_text):  # an extension (`;name=value`) or padding
                size_text = size_text.split(b";", 1)[0].strip(b" \t")
                if not _HEX.fullmatch(size_text):
                    raise WireProtocolError(f"a chunk size that is not hexadecimal: {size_text[:40]!r}")
            size = int(size_text, 16)
            start = end + 2
            if size == 0:
                pos, self._state = start, _TRAILERS
                break
            stop = start + size
            if stop + 2 > end_of_buf:  # the chunk goes on in a later read
                pos, self._left, self._state = start, size, _BODY_CHUNK_DATA
                break
            if buf[stop : stop + 2] != b"\r\n":
                raise WireProtocolError("a chunk not followed by CRLF")
            pieces.append(buf[start:stop])
            pos = stop + 2
        if pieces:
            self._emit(pieces[0] if len(pieces) == 1 else b"".join(pieces))
        return pos

    def _read_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not _DIGITS.fullmatch(parts[1]):
            raise WireProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip():
                raise WireProtocolError(f"a malformed header line: {line[:80]!r}")
            key = name.decode("latin-1").lower()
            text = value.strip(b" \t").decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if 100 <= status < 200:
            return  # an interim response (100 Continue, 103 Early Hints): the real one follows
        self.status, self.headers = status, headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = parts[0] == b"HTTP/1.1" and "close" not in connection
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(47)  # gzip or zlib, by the header
        elif encoding not in ("identity", ""):
            raise WireProtocolError(f"a body in an encoding this client does not read: {encoding}")
        if status in (204, 304):
            self.framing = "length"
            self._end_body()
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.framing = "chunked"
            self._state = _BODY_CHUNK_SIZE
        elif "content-length" in headers:
            self.framing = "length"
            length = headers["content-length"].strip()
            if not _DIGITS.fullmatch(length.encode()):
                raise WireProtocolError(f"a Content-Length that is not a number: {length[:40]!r}")
            self._left = int(length)
            self._state = _BODY_LENGTH
            if self._left == 0:
                self._end_body()
        else:
            self.framing = "close"
            self._state = _BODY_CLOSE
            self.keep_alive = False

    def _emit(self, data: bytes) -> None:
        if self._inflate is not None:
            try:
                data = self._inflate.decompress(data)
            except zlib.error as exc:
                raise WireProtocolError(f"the compressed body is corrupt: {exc}") from None
        if self.discard or not data:
            return
        self._pieces.append(data)
        self._buffered += len(data)
        if self._buffered > PAUSE_BYTES:
            self._conn.pause()

    def _end_body(self) -> None:
        if self._inflate is not None:
            rest = self._inflate.flush()
            if rest and not self.discard:
                self._pieces.append(rest)
        self._state = _DONE
        self.complete = True
        self._conn.finished(self)


class _Body:
    """`_Response.chunks()`: an iterator object, not an async generator, because a reader that
    stops at `[DONE]` would leave a generator for asyncio's finalizer hook to close, which wakes
    the event loop through its self-pipe on every request (a tenth of a run's CPU at 64 in flight)."""

    __slots__ = ("_response",)

    def __init__(self, response: _Response) -> None:
        self._response = response

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        response = self._response
        while True:
            data = response.take()
            if data is not None:
                return data
            if response.complete:
                raise StopAsyncIteration
            if response._error is not None:
                raise response._error
            await response._wait()


class _Connection(asyncio.Protocol):
    __slots__ = (
        "_pool",
        "transport",
        "closed",
        "response",
        "_paused",
        "_drain_timer",
        "reused",
        "idle_since",
        "framing",
    )

    def __init__(self, pool: WirePool) -> None:
        self._pool = pool
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response: _Response | None = None
        self._paused = False
        self._drain_timer: asyncio.TimerHandle | None = None
        self.reused = False
        """Taken from the pool for a second or later request."""
        self.idle_since: float | None = None
        """Loop time it last went idle in the pool."""
        self.framing = ""
        """The framing of the last response that ended on it (what the server's keeping or
        closing it is learnt for)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None:  # bytes nobody asked for: this connection cannot be trusted
            self.close()
            return
        response.feed(data)

    def eof_received(self) -> bool:
        self.closed = True
        if self.response is not None:
            if self.response.complete or (self.reused and not self.response.status):
                # It closed right after a response, or what we took to be kept alive.
                self._pool._closes_connections(self)
            self.response.eof()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.response is not None:
            reason = f": {exc}" if exc else ""
            self.response.fail(WireDisconnected(f"the connection was lost before the response ended{reason}"))
        if self._drain_timer is not None:
            self._drain_timer.cancel()
        self._pool._lost(self)

    # ------------------------------------------------------------------ flow control and reuse

    def pause(self) -> None:
        if not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def finished(self, response: _Response) -> None:
        """The response ended; if its reader already let go, the connection goes back now."""
        if response.discard:
            self.release(response)

    def release(self, response: _Response) -> None:
        """The reader is done with `response`: reuse the connection once the response has
        ended, close it otherwise (after `DRAIN_S` at most when only its end is missing)."""
        response.discard = True
        response._pieces = []
        self.resume()
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        if response.complete and response.keep_alive and not self.closed and response._error is None:
            self.response = None
            self.framing = response.framing
            self._pool._put_back(self)
        elif response.complete or response._error is not None or self.closed:
            self.close()
        else:
            self._drain_timer = asyncio.get_running_loop().call_later(DRAIN_S, self.close)


class WirePool:
    """Keep-alive connections to any number of origins, at most `limit` open at once.

    Used from one event loop. `exchange` is an async context manager: inside it the response's
    head has arrived, and its body can be read as it streams; on leaving, the connection is
    reused when the response ended cleanly, else closed."""

    def __init__(
        self, *, limit: int = 1, connect_timeout_s: float = 10.0, ssl_context: ssl_module.SSLContext | None = None
    ) -> None:
        self.limit = max(1, limit)
        self.connect_timeout_s = connect_timeout_s
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._origin: dict[_Connection, tuple[str, str, int]] = {}
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._targets: dict[tuple[str, str], tuple[tuple[str, str, int], bytes]] = {}
        self._header_lines: dict[tuple[tuple[str, str], ...], bytes] = {}
        self._deadlines: dict[_Response, tuple[float, float]] = {}
        """Each watched response's deadline (loop time) and its timeout in seconds."""
        self._reaper: asyncio.TimerHandle | None = None
        self._tick = 1.0
        self._keeps_alive: dict[tuple[tuple[str, str, int], str], bool] = {}
        """Per origin and response framing, whether its server keeps a connection open after
        such a response (learnt from the first one: `_put_back`)."""
        self.resent = 0
        """Requests written again on a new connection because the kept-alive one they were
        written into was closed before any answer (tests read it)."""
        self._closed = False
        self.connections_made = 0
        """Connections opened so far (tests read it to see reuse)."""

    async def __aenter__(self) -> WirePool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        self._deadlines.clear()
        for conn in list(self._origin):
            conn.close()
        self._idle.clear()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(WireConnectError("the client was closed"))
        self._waiters.clear()
        await asyncio.sleep(0)  # let the transports' close callbacks run

    async def request(
        self,
        url: str,
        payload: bytes,
        headers: Mapping[str, str],
        *,
        method: str = "POST",
        timeout_s: float | None = None,
    ) -> _Response:
        """Send a POST of `payload` (or a GET, which sends none) and return its response once
        the head has arrived; hand it back with `release` when done with it (also after an
        error). With `timeout_s`, the whole exchange until `release` (waiting for a
        connection, its head, its body) ends in `WireTimeout` once that much time has passed,
        give or take a tenth of it: the pool checks every deadline at once on one timer,
        instead of arming and cancelling a timer per request (`asyncio.timeout`)."""
        if method not in ("POST", "GET"):
            raise ValueError(f"the wire client sends POST and GET, not {method}")
        origin, request_line = self._target(method, url)
        fields = self._fields(headers)
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        if method == "POST":
            data = b"%s%sContent-Length: %d\r\n\r\n%s" % (request_line, fields, len(payload), payload)
        else:
            data = b"%s%s\r\n" % (request_line, fields)
        conn = await self._acquire(origin, deadline)
        while True:
            response = _Response(conn)
            conn.response = response
            if deadline is not None and timeout_s is not None:
                self._watch(loop, response, deadline, timeout_s)
            assert conn.transport is not None
            conn.transport.write(data)
            try:
                await response.head()
            except WireDisconnected:
                self.release(response, failed=True)
                if not conn.reused or response.seen:
                    raise
                # Written into a kept-alive connection the server closed without a byte of
                # answer: it never read the request. Once more, on a new connection.
                self.resent += 1
                conn = await self._acquire(origin, deadline, fresh=True)
                continue
            except BaseException:
                self.release(response, failed=True)
                raise
            return response

    def release(self, response: _Response, *, failed: bool = False) -> None:
        """Done with `response`: its connection is reused once the response has ended
        cleanly; with `failed` (the reader raised or was cancelled) it is closed."""
        self._deadlines.pop(response, None)
        conn = response._conn
        if failed:
            response.discard = True
            conn.close()
        else:
            conn.release(response)

    @asynccontextmanager
    async def exchange(
        self,
        url: str,
        payload: bytes,
        headers: Mapping[str, str],
        *,
        method: str = "POST",
        timeout_s: float | None = None,
    ) -> AsyncIterator[_Response]:
        """`request` and `release` as one `async with` block (the run's chat requests make the
        two calls themselves: no context-manager layers on their hot path)."""
        response = await self.request(url, payload, headers, method=method, timeout_s=timeout_s)
        try:
            yield response
        except BaseException:
            self.release(response, failed=True)
            raise
        self.release(response)

    # ------------------------------------------------------------------ connections

    def _fields(self, headers: Mapping[str, str]) -> bytes:
        """The header lines of `headers`, checked once per distinct set (a run sends the same
        few headers with every request)."""
        key = tuple(headers.items())
        known = self._header_lines.get(key)
        if known is not None:
            return known
        lines = []
        for name, value in key:
            if not _TOKEN.fullmatch(name) or "\r" in value or "\n" in value:
                raise ValueError(f"a request header that HTTP cannot carry: {name!r}")
            lines.append(f"{name}: {value}\r\n".encode("latin-1"))
        if len(self._header_lines) < 64:
            self._header_lines[key] = b"".join(lines)
        return b"".join(lines)

    def _target(self, method: str, url: str) -> tuple[tuple[str, str, int], bytes]:
        known = self._targets.get((method, url))
        if known is not None:
            return known
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        origin = (parts.scheme, parts.hostname, port)
        default = (parts.scheme == "http" and port == 80) or (parts.scheme == "https" and port == 443)
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        authority = host if default else f"{host}:{port}"
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        line = f"{method} {path} HTTP/1.1\r\nHost: {authority}\r\n".encode("latin-1")
        self._targets[(method, url)] = (origin, line)
        return origin, line

    def _watch(self, loop: asyncio.AbstractEventLoop, response: _Response, deadline: float, timeout_s: float) -> None:
        self._deadlines[response] = (deadline, timeout_s)
        tick = min(1.0, max(0.01, timeout_s / 10))
        if self._reaper is None or tick < self._tick:
            if self._reaper is not None:
                self._reaper.cancel()
            self._tick = tick
            self._reaper = loop.call_later(tick, self._reap)

    def _reap(self) -> None:
        """Fail every response past its deadline; look again in a tick while any is watched."""
        self._reaper = None
        now = asyncio.get_running_loop().time()
        for response, (deadline, timeout_s) in list(self._deadlines.items()):
            if deadline <= now:
                del self._deadlines[response]
                response.fail(WireTimeout(f"no complete answer within {timeout_s:g} s"))
                response._conn.close()
        if self._deadlines:
            self._reaper = asyncio.get_running_loop().call_later(self._tick, self._reap)
        else:
            self._tick = 1.0

    async def _acquire(
        self, origin: tuple[str, str, int], deadline: float | None = None, *, fresh: bool = False
    ) -> _Connection:
        """A connection to `origin`: an idle one (unless `fresh`), a new one while fewer than
        `limit` are open, else the first to become free."""
        while True:
            if self._closed:
                raise WireConnectError("the client was closed")
            idle = None if fresh else self._idle.get(origin)
            while idle:
                conn = idle.pop()
                if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                    conn.reused, conn.idle_since = True, None
                    return conn
                conn.close()
            if self._open < self.limit:
                self._open += 1
                try:
                    conn = await self._connect(origin)
                except BaseException:
                    self._open -= 1
                    self._wake_one()
                    raise
                self._origin[conn] = origin
                return conn
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):  # rare: more requests than connections
                    await waiter
            except (asyncio.CancelledError, TimeoutError):
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # the slot it was woken for goes to the next in line
                raise

    async def _connect(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        ssl: ssl_module.SSLContext | None = None
        if scheme == "https":
            ssl = self._ssl or ssl_module.create_default_context()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                _, conn = await loop.create_connection(
                    lambda: _Connection(self), host, port, ssl=ssl, server_hostname=host if ssl else None
                )
        except TimeoutError:
            raise WireConnectError(f"could not connect to {host}:{port} within {self.connect_timeout_s:g} s") from None
        except OSError as exc:
            raise WireConnectError(f"could not connect to {host}:{port}: {exc.strerror or exc}") from exc
        self.connections_made += 1
        return conn

    def _put_back(self, conn: _Connection) -> None:
        """A connection whose response ended cleanly: idle in the pool, unless its server
        closes connections after a response framed as this one was (then closed), or that is
        not known yet (then idle only once `SETTLE_S` has passed without the server closing it)."""
        origin = self._origin.get(conn)
        verdict = self._keeps_alive.get((origin, conn.framing)) if origin is not None else False
        if origin is None or self._closed or verdict is False:
            conn.close()
            return
        if verdict is None:
            loop = asyncio.get_running_loop()
            conn.idle_since = loop.time()  # idle, though not in the pool yet: `_lost` learns from its close
            loop.call_later(SETTLE_S, self._settled, conn, origin)
            return
        self._idle_in_pool(conn, origin)

    def _settled(self, conn: _Connection, origin: tuple[str, str, int]) -> None:
        key = (origin, conn.framing)
        if conn.closed:
            self._keeps_alive.setdefault(key, False)
        else:
            self._keeps_alive.setdefault(key, True)
            if self._keeps_alive[key] and not self._closed:
                self._idle_in_pool(conn, origin)
            else:
                conn.close()

    def _idle_in_pool(self, conn: _Connection, origin: tuple[str, str, int]) -> None:
        if conn.idle_since is None:
            conn.idle_since = asyncio.get_running_loop().time()
        self._idle.setdefault(origin, []).append(conn)
        self._wake_one()

    def _closes_connections(self, conn: _Connection) -> None:
        """`conn`'s server closes a connection after a response framed as its last one was
        (llama-server does after every streamed one): from now on a connection that carried
        such a response is closed, not reused."""
        origin = self._origin.get(conn)
        if origin is not None:
            self._keeps_alive[(origin, conn.framing)] = False
            for idle in list(self._idle.get(origin, ())):
                if idle.framing == conn.framing:
                    idle.close()

    def _lost(self, conn: _Connection) -> None:
        if conn.idle_since is not None and asyncio.get_running_loop().time() - conn.idle_since < IDLE_CLOSE_S:
            self._closes_connections(conn)  # closed by the server soon after it went idle
        origin = self._origin.pop(conn, None)
        if origin is not None:
            self._open -= 1
            idle = self._idle.get(origin)
            if idle and conn in idle:
                idle.remove(conn)
            self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
