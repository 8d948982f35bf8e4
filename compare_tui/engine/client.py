"""One HTTP exchange with an OpenAI-compatible chat endpoint, streamed and timed.

`stream_chat` sends one request and returns an `Exchange`: the accumulated answer and
timings when it worked, or an error class and reason when it did not. It never raises for
anything the server or the network does; retries are the caller's (see `retry.py`), so
that every HTTP request can be one row of the audit ledger.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any


from compare_tui.engine.sse import SseError, SseFramer
from compare_tui.engine.stream import StreamAccumulator, accumulate_message
from compare_tui.engine.transport import ChatClient, StreamedResponse, classify_exception, open_post
from compare_tui.vocabulary import RETRYABLE_CLASSES, ErrorClass


@dataclass(slots=True)
class Exchange:
    """What one HTTP request produced. `error_class` is None when an answer arrived."""

    status: int | None = None
    error_class: str | None = None
    error: str | None = None
    retry_after_s: float | None = None
    bytes_out: int = 0
    bytes_in: int = 0
    sent_ns: int = 0
    ended_ns: int = 0
    acc: StreamAccumulator | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        return (self.ended_ns - self.sent_ns) / 1e6

    @property
    def retryable(self) -> bool:
        """Connection failures, 429 and 5xx are retried; nothing else is (issue 4)."""
        return self.error_class in RETRYABLE_CLASSES


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


async def stream_chat(
    client: ChatClient,
    endpoint: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout_s: float = 120.0,
) -> Exchange:
    """POST `body` (with `stream` true) and read the SSE stream to `[DONE]` or its end, through
    an httpx client or an aiohttp session (`transport.chat_session`)."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    ex = Exchange(bytes_out=len(payload))
    ex.sent_ns = time.perf_counter_ns()
    try:
        async with asyncio.timeout(timeout_s):
            await _exchange(client, chat_url(endpoint), payload, headers or {}, body.get("stream", True), ex)
    except TimeoutError:
        ex.error_class, ex.error = ErrorClass.TIMEOUT, f"no complete answer within {timeout_s:g} s"
    except Exception as exc:  # noqa: BLE001 - classified below; anything unknown is re-raised
        classified = classify_exception(exc)
        if classified is None:
            raise
        ex.error_class, ex.error = classified
    if not ex.ended_ns:
        ex.ended_ns = time.perf_counter_ns()
    return ex


async def _exchange(
    client: ChatClient, url: str, payload: bytes, headers: dict[str, str],
    streamed: bool, ex: Exchange,
) -> None:
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **headers}
    async with open_post(client, url, payload, request_headers) as response:
        ex.status = response.status
        if response.status != 200:
            raw = await response.read()
            ex.bytes_in = len(raw)
            ex.ended_ns = time.perf_counter_ns()
            _classify_status(response, raw, ex)
            return
        if not streamed:
            raw = await response.read()
            ex.bytes_in = len(raw)
            ex.ended_ns = time.perf_counter_ns()
            try:
                ex.acc = accumulate_message(json.loads(raw), ex.sent_ns, ex.ended_ns)
            except ValueError as exc:
                ex.error_class, ex.error = ErrorClass.MALFORMED_RESPONSE, f"response body is not JSON: {exc}"
            return
        await _read_stream(response, ex)


async def _read_stream(response: StreamedResponse, ex: Exchange) -> None:
    framer = SseFramer()
    acc = StreamAccumulator(sent_ns=ex.sent_ns)
    ex.acc = acc
    done = False
    try:
        async for chunk in response.chunks():
            arrived = time.perf_counter_ns()  # stamp before any parsing
            ex.bytes_in += len(chunk)
            for event in framer.feed(chunk, arrived):
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                acc.feed(_chunk(event.data), event.arrived_ns)
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
        # Nothing the model said counts: the gateway lost its upstream (issue 23).
        ex.error_class = ErrorClass.UPSTREAM
        ex.error = f"the gateway could not reach its upstream (error inside the stream): {acc.error[:500]}"
    elif acc.error is not None:
        ex.error_class, ex.error = ErrorClass.STREAM_ERROR, f"the server reported an error inside the stream: {acc.error[:500]}"
    elif not done and acc.finish_reason is None:
        ex.error_class, ex.error = ErrorClass.TRUNCATED, "the stream ended without a finish reason or [DONE]"
    elif not done:
        ex.notes.append("the stream ended without [DONE]")
    if acc.usage is None and ex.error_class is None:
        ex.notes.append("the server sent no usage; tokens not recorded")


_scan = json.JSONDecoder().raw_decode


def _chunk(data: str) -> Any:
    """One event's JSON, exactly as `json.loads` reads it, a fifth cheaper for the usual
    chunk (no surrounding whitespace): anything else goes to `json.loads` for its answer or
    its error."""
    try:
        value, end = _scan(data)
        if end == len(data):
            return value
    except ValueError:
        pass
    return json.loads(data)


def _classify_status(response: StreamedResponse, raw: bytes, ex: Exchange) -> None:
    status = response.status
    message = _error_message(raw)
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


def _error_message(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text[:500]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)[:500]
    if isinstance(error, str):
        return error[:500]
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])[:500]
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
