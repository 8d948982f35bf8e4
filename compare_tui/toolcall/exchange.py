"""One chat request for a scenario, kept raw: the whole body, or every streamed chunk.

The engine's `stream_chat` folds a stream into an answer as it reads, which is right for
golden-set runs but hides exactly what conformance checks look at (an `id` that changes,
a delta after the finish chunk, arguments sent as an object). So this module keeps each
parsed chunk in arrival order and leaves judging to `stream_rules.py` and `checks.py`. It
reuses the engine's SSE framer, and never raises for what the server or network does.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from compare_tui.engine.client import chat_url, upstream_failure
from compare_tui.engine.sse import SseError, SseFramer

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""A conformance answer is small; past this the server is misbehaving and reading stops."""


@dataclass(slots=True)
class RawExchange:
    """What one request produced. `error_class` set means no answer to check arrived."""

    status: int | None = None
    error_class: str | None = None
    """"timeout", "connect", "upstream", "reset", "transport", "malformed", "too_large", "http" or
    "stream_error" (an `error` payload inside a 200 stream)."""
    error: str | None = None
    """A one-line description for people."""
    server_message: str | None = None
    """The server's own error message (non-200 body or in-stream error), for classification."""
    body: Any = None
    """The parsed JSON body of a non-streamed 200."""
    chunks: list[Any] = field(default_factory=list)
    """Every parsed `data:` payload of a stream except `[DONE]`, in arrival order."""
    done: bool = False
    duration_ms: float = 0.0
    ttft_ms: float | None = None
    bytes_out: int = 0
    """The request body's size."""
    bytes_in: int = 0
    """Response bytes read (the body, or the raw stream)."""

    def tokens(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens as the server reported them (`usage` of the body or of
        the last stream chunk carrying one); None where it reported none."""
        sources = [self.body] + list(reversed(self.chunks))
        for source in sources:
            usage = source.get("usage") if isinstance(source, dict) else None
            if isinstance(usage, dict):
                prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
                return (prompt if isinstance(prompt, int) else None, completion if isinstance(completion, int) else None)
        return None, None


async def post_chat(
    client: httpx.AsyncClient, endpoint: str, body: dict[str, Any], *,
    headers: dict[str, str] | None = None, timeout_s: float = 120.0,
) -> RawExchange:
    """POST one chat request and read the whole answer (bounded in time and size)."""
    ex = RawExchange()
    started = time.perf_counter()
    payload = json.dumps(body, ensure_ascii=False).encode()
    ex.bytes_out = len(payload)
    try:
        async with asyncio.timeout(timeout_s):
            await _exchange(client, chat_url(endpoint), payload, headers or {}, bool(body.get("stream")), ex, started)
    except TimeoutError:
        ex.error_class, ex.error = "timeout", f"no complete answer within {timeout_s:g} s"
    except httpx.ConnectError as exc:
        ex.error_class, ex.error = "connect", f"could not connect to {endpoint}: {exc}"
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
        ex.error_class, ex.error = "reset", f"connection broken: {exc or type(exc).__name__}"
    except httpx.HTTPError as exc:
        ex.error_class, ex.error = "transport", f"{type(exc).__name__}: {exc}"
    ex.duration_ms = (time.perf_counter() - started) * 1000
    return ex


async def _exchange(client: httpx.AsyncClient, url: str, payload: bytes, headers: dict[str, str],
                    streamed: bool, ex: RawExchange, started: float) -> None:
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **headers}
    async with client.stream("POST", url, content=payload, headers=request_headers) as response:
        ex.status = response.status_code
        if response.status_code != 200 or not streamed:
            raw = await _read_capped(response, ex)
            if raw is None:
                return
            if response.status_code != 200:
                ex.server_message = error_message(raw)
                # A gateway that lost its upstream: nothing the model did, never a fail of the model's.
                ex.error_class = "upstream" if upstream_failure(ex.server_message or "") else "http"
                ex.error = f"HTTP {response.status_code}: {ex.server_message}" if ex.server_message else f"HTTP {response.status_code}"
                return
            try:
                ex.body = json.loads(raw)
            except ValueError as exc:
                ex.error_class, ex.error = "malformed", f"the response body is not JSON: {exc}"
                return
            if isinstance(ex.body, dict) and ex.body.get("error") is not None:
                ex.server_message = _error_text(ex.body["error"])
                ex.error_class = "upstream" if upstream_failure(ex.server_message or "") else "stream_error"
                ex.error = f"HTTP 200 carrying an error: {ex.server_message}"
            return
        await _read_stream(response, ex, started)


async def _read_capped(response: httpx.Response, ex: RawExchange) -> bytes | None:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        ex.bytes_in = size
        if size > MAX_RESPONSE_BYTES:
            ex.error_class, ex.error = "too_large", f"the response passed {MAX_RESPONSE_BYTES} bytes; reading stopped"
            return None
        parts.append(chunk)
    return b"".join(parts)


async def _read_stream(response: httpx.Response, ex: RawExchange, started: float) -> None:
    framer = SseFramer()
    size = 0
    try:
        async for raw in response.aiter_raw():
            size += len(raw)
            ex.bytes_in = size
            if size > MAX_RESPONSE_BYTES:
                ex.error_class, ex.error = "too_large", f"the stream passed {MAX_RESPONSE_BYTES} bytes; reading stopped"
                return
            if _take(framer.feed(raw, 0), ex, started):
                return
        _take(framer.close(0), ex, started)
    except (SseError, ValueError) as exc:
        ex.error_class, ex.error = "malformed", f"the stream is not valid SSE/JSON: {str(exc)[:200]}"


def _take(events: list[Any], ex: RawExchange, started: float) -> bool:
    """Keep each event's JSON; True when the stream is over ([DONE] or an error payload)."""
    for event in events:
        if event.data.strip() == "[DONE]":
            ex.done = True
            return True
        chunk = json.loads(event.data)
        ex.chunks.append(chunk)
        if ex.ttft_ms is None and _has_token(chunk):
            ex.ttft_ms = (time.perf_counter() - started) * 1000
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            ex.server_message = _error_text(chunk["error"])
            ex.error_class = "upstream" if upstream_failure(ex.server_message or "") else "stream_error"
            ex.error = f"the server reported an error inside the stream: {ex.server_message}"
            return True
    return False


def _has_token(chunk: Any) -> bool:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict) and (delta.get("content") or delta.get("tool_calls")):
            return True
    return False


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:500]
    return str(error)[:500]


def error_message(raw: bytes) -> str:
    """The message inside any of the error body shapes servers use (reference notes (b))."""
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
