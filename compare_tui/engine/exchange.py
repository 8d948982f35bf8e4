"""One HTTP exchange with an OpenAI-compatible chat endpoint, streamed and timed.

The one place that sends a chat request and classifies what went wrong (`ErrorClass`), in two
modes. Folded: `stream_chat` returns an `Exchange` holding the accumulated answer and timings
(golden-set runs, the judge). Raw: `chat_chunks` returns a `RawExchange` keeping the whole
body or every parsed chunk in arrival order, bounded in size, for the tool-call suite, whose
checks look at exactly what folding hides (an `id` that changes, a delta after the finish
chunk, arguments sent as an object). Neither raises for anything the server or the network
does; retries are the caller's (see `retry.py`), so that every HTTP request can be one row of
the audit ledger (`audit.audit_row`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import msgspec

from compare_tui.endpoint.client import ChatClient, StreamedResponse, classify_exception, open_post
from compare_tui.engine.sse import SseError, SseFramer
from compare_tui.engine.stream import StreamAccumulator, accumulate_message
from compare_tui.vocabulary import RETRYABLE_CLASSES, ErrorClass


@dataclass(slots=True)
class Exchange:
    """What one HTTP request produced. `error_class` is None when an answer arrived."""

    status: int | None = None
    error_class: ErrorClass | None = None
    error: str | None = None
    retry_after_s: float | None = None
    bytes_out: int = 0
    bytes_in: int = 0
    sent_ns: int = 0
    ended_ns: int = 0
    acc: StreamAccumulator | None = None
    notes: list[str] = field(default_factory=list)
    server_message: str | None = None
    """The server's own error message (a non-200 body, or an error inside a 200 answer)."""

    @property
    def duration_ms(self) -> float:
        return (self.ended_ns - self.sent_ns) / 1e6

    @property
    def retryable(self) -> bool:
        """Connection failures, 429 and 5xx are retried; nothing else is: a 4xx would fail the same way again."""
        return self.error_class in RETRYABLE_CLASSES

    def tokens(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens as the server reported them; None where it reported none."""
        return self.acc.tokens() if self.acc else (None, None)


MAX_RAW_BYTES = 8 * 1024 * 1024
"""`chat_chunks` stops reading past this: a conformance answer is small, so the server is misbehaving."""


@dataclass(slots=True)
class RawExchange(Exchange):
    """What one request produced, unfolded (`chat_chunks`). `error_class` set means no answer
    to check arrived; `acc` stays None."""

    body: Any = None
    """The parsed JSON body of a non-streamed 200."""
    chunks: list[Any] = field(default_factory=list)
    """Every parsed `data:` payload of a stream except `[DONE]`, in arrival order."""
    done: bool = False
    first_token_ns: int | None = None
    """When the first chunk carrying content or a tool call arrived."""

    @property
    def ttft_ms(self) -> float | None:
        return None if self.first_token_ns is None else (self.first_token_ns - self.sent_ns) / 1e6

    def tokens(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens as the server reported them (`usage` of the body or of
        the last stream chunk carrying one); None where it reported none."""
        for source in [self.body, *reversed(self.chunks)]:
            usage = source.get("usage") if isinstance(source, dict) else None
            if isinstance(usage, dict):
                prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
                return (
                    prompt if isinstance(prompt, int) else None,
                    completion if isinstance(completion, int) else None,
                )
        return None, None


UPSTREAM_FAILURE = re.compile(
    r"APIConnectionError|\bconnection error\b|upstream connect error|connection refused"
    r"|all connection attempts failed|cannot connect to host",
    re.IGNORECASE,
)
"""How gateways word "I could not reach the server behind me" (LiteLLM's
`litellm.APIConnectionError … Connection error` inside a stream, `litellm.InternalServerError …
Connection error` in a 5xx body; Envoy's `upstream connect error`; httpx/aiohttp wording)."""


def upstream_failure(message: str) -> bool:
    """True when a server's error message reports that it could not connect to its upstream."""
    return UPSTREAM_FAILURE.search(message) is not None


def chat_url(endpoint: str) -> str:
    return endpoint.rstrip("/") + "/chat/completions"


Reader: TypeAlias = Callable[[StreamedResponse, Any], Awaitable[None]]


async def stream_chat(
    client: ChatClient,
    endpoint: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout_s: float = 120.0,
) -> Exchange:
    """POST `body` (with `stream` true) through the endpoint's chat client
    (`endpoint.client.chat_client`) and read the SSE stream to `[DONE]` or its end, folded
    into an answer."""
    ex = Exchange()
    await _send(
        client, endpoint, body, headers, timeout_s, ex, _read_stream if body.get("stream", True) else _folded_body
    )
    return ex


async def chat_chunks(
    client: ChatClient,
    endpoint: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout_s: float = 120.0,
) -> RawExchange:
    """POST `body` (streamed or not, as it says) and keep the answer raw: the parsed body, or
    every parsed chunk. Bounded by `timeout_s` and `MAX_RAW_BYTES`."""
    ex = RawExchange()
    await _send(client, endpoint, body, headers, timeout_s, ex, _raw_chunks if body.get("stream") else _raw_body)
    return ex


async def _send(
    client: ChatClient,
    endpoint: str,
    body: dict[str, Any],
    headers: dict[str, str] | None,
    timeout_s: float,
    ex: Exchange,
    read: Reader,
) -> None:
    """Send one request and let `read` take the 200 answer; every failure lands in `ex`."""
    payload = _encode(body)
    ex.bytes_out = len(payload)
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **(headers or {})}
    ex.sent_ns = time.perf_counter_ns()
    url = chat_url(endpoint)
    try:
        async with asyncio.timeout(timeout_s):
            async with open_post(client, url, payload, request_headers) as streamed:
                await _answer(streamed, ex, read)
    except TimeoutError:
        ex.error_class, ex.error = ErrorClass.TIMEOUT, f"no complete answer within {timeout_s:g} s"
    except Exception as exc:  # noqa: BLE001 - classified below; anything unknown is re-raised
        classified = classify_exception(exc)
        if classified is None:
            raise
        ex.error_class, ex.error = classified
    if not ex.ended_ns:
        ex.ended_ns = time.perf_counter_ns()


async def _answer(response: StreamedResponse, ex: Exchange, read: Reader) -> None:
    """Read a 200 answer with `read`; read and classify any other status."""
    ex.status = response.status
    if response.status != 200:
        raw = await _read_capped(response, ex)
        if raw is not None:
            _classify_status(response, raw, ex)
        return
    await read(response, ex)


async def _folded_body(response: StreamedResponse, ex: Exchange) -> None:
    raw = await response.read()
    ex.bytes_in = len(raw)
    ex.ended_ns = time.perf_counter_ns()
    try:
        ex.acc = accumulate_message(json.loads(raw), ex.sent_ns, ex.ended_ns)
    except ValueError as exc:
        ex.error_class, ex.error = ErrorClass.MALFORMED_RESPONSE, f"the response body is not JSON: {exc}"


async def _read_capped(response: StreamedResponse, ex: Exchange) -> bytes | None:
    """The whole body, or None (and `TOO_LARGE`) once it passes `MAX_RAW_BYTES`."""
    parts: list[bytes] = []
    async for chunk in response.chunks():
        ex.bytes_in += len(chunk)
        if ex.bytes_in > MAX_RAW_BYTES:
            ex.error_class, ex.error = (
                ErrorClass.TOO_LARGE,
                f"the response passed {MAX_RAW_BYTES} bytes; reading stopped",
            )
            break
        parts.append(chunk)
    ex.ended_ns = time.perf_counter_ns()
    return None if ex.error_class else b"".join(parts)


async def _raw_body(response: StreamedResponse, ex: RawExchange) -> None:
    raw = await _read_capped(response, ex)
    if raw is None:
        return
    try:
        ex.body = json.loads(raw)
    except ValueError as exc:
        ex.error_class, ex.error = ErrorClass.MALFORMED_RESPONSE, f"the response body is not JSON: {exc}"
        return
    if isinstance(ex.body, dict) and ex.body.get("error") is not None:
        _in_band_error(ex, _error_text(ex.body["error"]), "HTTP 200 carrying an error")


async def _raw_chunks(response: StreamedResponse, ex: RawExchange) -> None:
    framer = SseFramer()
    try:
        async for raw in response.chunks():
            ex.bytes_in += len(raw)
            if ex.bytes_in > MAX_RAW_BYTES:
                ex.error_class, ex.error = (
                    ErrorClass.TOO_LARGE,
                    f"the stream passed {MAX_RAW_BYTES} bytes; reading stopped",
                )
                break
            if _keep(framer.feed(raw, 0), ex):
                break
        else:
            _keep(framer.close(0), ex)
    except (SseError, ValueError) as exc:
        ex.error_class, ex.error = ErrorClass.MALFORMED_STREAM, f"the stream is not valid SSE/JSON: {str(exc)[:200]}"
    ex.ended_ns = time.perf_counter_ns()


def _keep(events: list[Any], ex: RawExchange) -> bool:
    """Keep each event's JSON; True when the stream is over ([DONE] or an error payload)."""
    for event in events:
        if event.data.strip() == "[DONE]":
            ex.done = True
            return True
        chunk = json.loads(event.data)
        ex.chunks.append(chunk)
        if ex.first_token_ns is None and _has_token(chunk):
            ex.first_token_ns = time.perf_counter_ns()
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            _in_band_error(ex, _error_text(chunk["error"]), "the server reported an error inside the stream")
            return True
    return False


def _in_band_error(ex: Exchange, message: str, where: str) -> None:
    """An error payload inside a 200 answer: a gateway's lost upstream (nothing the model did),
    else the server's own error."""
    ex.server_message = message
    ex.error_class = ErrorClass.UPSTREAM if upstream_failure(message) else ErrorClass.STREAM_ERROR
    ex.error = f"{where}: {message}"


def _has_token(chunk: Any) -> bool:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict) and (delta.get("content") or delta.get("tool_calls")):
            return True
    return False


async def _read_stream(response: StreamedResponse, ex: Exchange) -> None:
    framer = SseFramer()
    acc = StreamAccumulator(sent_ns=ex.sent_ns)
    ex.acc = acc
    done = False
    try:
        async for chunk in response.chunks():
            arrived = time.perf_counter_ns()  # stamp before any parsing
            ex.bytes_in += len(chunk)
            for data in framer.feed_data(chunk):
                if data.strip() in _DONE:
                    done = True
                    break
                acc.feed(_chunk(data), arrived)
                if acc.error is not None:
                    break
            if done or acc.error is not None:
                break
        if not done and acc.error is None:
            for event in framer.close(time.perf_counter_ns()):
                if event.data.strip() == "[DONE]":
                    done = True
                else:
                    acc.feed(_chunk(event.data), event.arrived_ns)
    except (ValueError, SseError) as exc:
        ex.error_class, ex.error = ErrorClass.MALFORMED_STREAM, f"the stream is not valid SSE/JSON: {str(exc)[:200]}"
        return
    ex.ended_ns = time.perf_counter_ns()
    if acc.error is not None and upstream_failure(acc.error):
        # Nothing the model said counts: the gateway lost its upstream.
        ex.error_class = ErrorClass.UPSTREAM
        ex.error = f"the gateway could not reach its upstream (error inside the stream): {acc.error[:500]}"
    elif acc.error is not None:
        ex.error_class, ex.error = (
            ErrorClass.STREAM_ERROR,
            f"the server reported an error inside the stream: {acc.error[:500]}",
        )
    elif not done and acc.finish_reason is None:
        ex.error_class, ex.error = ErrorClass.TRUNCATED, "the stream ended without a finish reason or [DONE]"
    elif not done:
        ex.notes.append("the stream ended without [DONE]")
    if acc.usage is None and ex.error_class is None:
        ex.notes.append("the server sent no usage; tokens not recorded")


_DONE = (b"[DONE]", "[DONE]")
"""The event that ends an OpenAI stream, as `SseFramer.feed_data` gives it (bytes or text)."""

_to_json = msgspec.json.Encoder().encode
_from_json = msgspec.json.Decoder().decode


def _encode(body: dict[str, Any]) -> bytes:
    """The request body as JSON: msgspec's (a tenth of the stdlib's cost), or the stdlib's for
    what msgspec refuses (a value JSON has no spelling for)."""
    try:
        return _to_json(body)
    except (TypeError, ValueError):
        return json.dumps(body, ensure_ascii=False).encode()


def _chunk(data: str | bytes) -> Any:
    """One event's JSON, exactly as `json.loads` reads it: msgspec's reading (a third of the
    cost), and the stdlib's answer or error for what msgspec refuses (`NaN`, a lone surrogate)."""
    try:
        return _from_json(data)
    except ValueError:
        pass
    if isinstance(data, bytes):  # as the framer's text would be: bad UTF-8 replaced, not refused
        data = data.decode("utf-8", errors="replace")
    return json.loads(data)


def _classify_status(response: StreamedResponse, raw: bytes, ex: Exchange) -> None:
    status = response.status
    message = error_message(raw)
    ex.server_message = message or None
    if status == 429:
        ex.error_class = ErrorClass.HTTP_429
        ex.retry_after_s = _retry_after(response.headers.get("retry-after"))
    elif status >= 500:
        ex.error_class = ErrorClass.UPSTREAM if upstream_failure(message) else ErrorClass.HTTP_5XX
        ex.retry_after_s = _retry_after(response.headers.get("retry-after"))
    elif status in (401, 403):
        ex.error_class = ErrorClass.AUTH
    else:
        ex.error_class = ErrorClass.HTTP_4XX
    ex.error = f"HTTP {status}: {message}" if message else f"HTTP {status}"


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:500]
    return str(error)[:500]


def error_message(raw: bytes) -> str:
    """The message inside any of the error body shapes servers use (`{"error": {"message"}}`,
    `{"error": "…"}`, `{"message": …}`, `{"detail": …}`), else the body's text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            if body.get(key) is not None:
                return _error_text(body[key])
    return text[:500]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
