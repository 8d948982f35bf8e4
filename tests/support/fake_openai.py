"""A fault-injecting OpenAI-compatible server over real HTTP/1.1 + SSE on loopback.

Written directly on asyncio streams (no web framework) so that it stays cheap enough for
client-overhead benchmarks. Endpoints: POST /v1/chat/completions (stream true/false,
`stream_options.include_usage`), GET /v1/models, GET /health, GET /props (llama.cpp-like;
pass `props=None` to get a 404 as from vLLM). Connections are kept alive; streamed answers use
`Transfer-Encoding: chunked`, everything else `Content-Length`.

In tests (a background thread with its own event loop)::

    with FakeServer({"refund-01": text("billing"), "flaky": fail_then(2, Reset(), text("ok"))}) as srv:
        httpx.post(f"{srv.url}/chat/completions", json=...)
        assert srv.count("flaky") == 3

As a process: `python -m tests.support.fake_openai --port 0 --mode zero-delay` prints the base
URL on its first line. In `scripted` mode (the default) a request's `X-Fake-Plan` header may
name any of `PRESETS`. Plans, scripts and their factories are documented in `fake_plans.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from .fake_plans import (  # noqa: F401  (re-exported: one import for tests)
    PRESETS,
    Answer,
    HttpError,
    Plan,
    Reset,
    Script,
    ToolCall,
    answer_body,
    answer_steps,
    bad_request,
    dumps,
    encode_step,
    error_body,
    error_in_stream,
    estimate_prompt_tokens,
    fail_then,
    http_error,
    malformed,
    rate_limited,
    reset,
    resolve,
    text,
    tool_calls,
    truncated,
)

ZERO_DELAY_ANSWER = Answer(text="The quick brown fox.", chunk_chars=5)
"""What `mode="zero-delay"` sends to every chat request: 4 content chunks, no delays."""

DEFAULT_PROPS = {
    "build_info": "b9999-fake0000",
    "model_path": "/models/fake-model.gguf",
    "total_slots": 4,
    "chat_template": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}",
    "default_generation_settings": {"n_ctx": 4096, "temperature": 0.8},
}


@dataclass(frozen=True)
class GatewayKeys:
    """LiteLLM-like key checks on every route but /health: the `master` key is accepted
    everywhere; with a `database`, so are the `issued` virtual keys, `/key/info` answers 200
    for any of them, and any other key gets 401; without one, every other key (and `/key/info`
    itself) gets LiteLLM's `400 No connected db.`"""

    master: str
    issued: tuple[str, ...] = ()
    database: bool = False

    def refusal(self, path: str, authorization: str | None) -> tuple[int, str] | None:
        key = (authorization or "").removeprefix("Bearer ").strip()
        known = key == self.master or (self.database and key in self.issued)
        if path == "/key/info" and not self.database:
            return 400, "No connected db."
        if known:
            return None
        if not key:
            return 401, "Authentication Error, No api key passed in."
        if not self.database:
            return 400, "No connected db."
        return 401, f"Authentication Error, Invalid proxy server token passed. Received API Key = {key}"


@dataclass(frozen=True)
class ProviderKey:
    """OpenAI-like key checks on every route but /health: only `key` is accepted; any other
    gets OpenAI's `401 invalid_api_key`, whose message shows the key's first and last characters."""

    key: str

    def refusal(self, path: str, authorization: str | None) -> tuple[int, str] | None:
        given = (authorization or "").removeprefix("Bearer ").strip()
        if given == self.key:
            return None
        if not given:
            return 401, "You didn't provide an API key."
        return 401, (
            f"Incorrect API key provided: {given[:3]}{'*' * max(0, len(given) - 7)}{given[-4:]}. "
            "You can find your API key at https://platform.openai.com/account/api-keys."
        )


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server read it (headers lower-cased; body parsed when JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    task: str | None  # the script key, for chat requests
    count: int | None  # earlier requests with the same key
    received_ns: int  # time.perf_counter_ns() when the head was read


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict, bytes] | None:
    """One HTTP/1.1 request, or None at a clean end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await reader.readexactly(size + 2))
        await reader.readuntil(b"\r\n")  # the empty trailer section
        raw = b"".join(p[:-2] for p in parts)
    else:
        raw = await reader.readexactly(int(headers.get("content-length") or 0))
    return method, target.split("?", 1)[0], headers, raw


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _json_response(status: int, body: bytes, keep: bool, extra: dict | None = None) -> bytes:
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        "Connection": "keep-alive" if keep else "close",
        **(extra or {}),
    }
    return _head(status, headers) + body


_STREAM_HEAD = _head(
    200,
    {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "Transfer-Encoding": "chunked",
        "Connection": "keep-alive",
    },
)
# A stream the plan cuts short says so up front, so a client never reuses a connection this
# server is about to close (which would race: the next request meets a reset, not the fault).
_STREAM_HEAD_CLOSING = _STREAM_HEAD.replace(b"Connection: keep-alive", b"Connection: close")


def _last_user_content(body: dict) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with SO_LINGER 0, which makes the kernel send a TCP RST instead of a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class FakeServer:
    """The fake server. `script` picks a plan per chat request (see `fake_plans`); `default`
    answers anything the script leaves unplanned. `mode="zero-delay"` ignores the script and
    answers every chat request at once with `ZERO_DELAY_ANSWER` from pre-built bytes.
    `record=False` keeps no request log (long benchmarks). All accessors are thread-safe."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        default: Plan | None = None,
        mode: str = "scripted",
        port: int = 0,
        models: tuple[str, ...] = ("fake-model",),
        props: dict | None = DEFAULT_PROPS,
        health_status: int = 200,
        record: bool = True,
        gateway: GatewayKeys | ProviderKey | None = None,
    ) -> None:
        if mode not in ("scripted", "zero-delay"):
            raise ValueError(f"mode must be 'scripted' or 'zero-delay', not {mode!r}")
        self.script, self.mode, self.record = script, mode, record
        self.gateway = gateway
        self.default = default or Answer()
        self.models, self.props = models, props
        self.health_status = health_status  # mutable: flip to 503 to mimic a loading server
        self.port = port
        self._lock = threading.Lock()
        self._requests: list[ReceivedRequest] = []
        self._counts: dict[str, int] = {}
        self._connections = 0
        self._cache: dict[tuple, bytes] = {}
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._handlers: set[asyncio.Task] = set()
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # ---- what tests read ----
    @property
    def url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(self, task: str) -> int:
        """How many chat requests had this task key."""
        with self._lock:
            return self._counts.get(task, 0)

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (keep-alive reuse keeps this low)."""
        with self._lock:
            return self._connections

    # ---- lifecycle ----
    def __enter__(self) -> FakeServer:
        self._thread = threading.Thread(target=self._run_thread, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._error:
            raise RuntimeError(f"fake server did not start: {self._error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop and self._stop and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread:
            self._thread.join(10)

    def _run_thread(self) -> None:
        try:
            asyncio.run(self.serve())
        except BaseException as exc:  # surfaced by __enter__ instead of dying silently
            self._error = exc
            self._ready.set()

    async def serve(self, on_ready=None) -> None:
        """Serve until `stop` is set (thread mode) or the task is cancelled (process mode)."""
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, limit=1 << 20)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready:
            on_ready(self)
        try:
            await self._stop.wait()
        finally:
            server.close()
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            await server.wait_closed()

    # ---- HTTP ----
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._handlers.add(asyncio.current_task())
        with self._lock:
            self._connections += 1
        try:
            while (request := await _read_request(reader)) is not None:
                if not await self._respond(*request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError, ValueError):
            pass  # client went away or sent garbage: the connection just ends
        finally:
            self._handlers.discard(asyncio.current_task())
            writer.close()

    async def _respond(self, method: str, path: str, headers: dict, raw: bytes, writer: asyncio.StreamWriter) -> bool:
        """Write one response; return whether the connection may be reused."""
        keep = headers.get("connection", "").lower() != "close"
        refusal = (
            self.gateway.refusal(path, headers.get("authorization"))
            if self.gateway is not None and path != "/health"
            else None
        )
        if refusal is not None:
            self._log(method, path, headers, raw, None, None)
            status, message = refusal
            body = {"error": {"message": message, "type": "auth_error", "param": "None", "code": str(status)}}
            writer.write(_json_response(status, dumps(body), keep))
            await writer.drain()
            return keep
        if method == "POST" and path in ("/v1/chat/completions", "/chat/completions"):
            return await self._chat(headers, raw, writer, keep)
        self._log(method, path, headers, raw, None, None)
        if method == "GET" and path == "/health":
            body = (
                {"status": "ok"}
                if self.health_status == 200
                else {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
            )
            writer.write(_json_response(self.health_status, dumps(body), keep))
        elif method == "GET" and path in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "llamacpp"} for m in self.models]
            writer.write(_json_response(200, dumps({"object": "list", "data": data}), keep))
        elif method == "GET" and path == "/key/info" and self.gateway is not None:
            info = {"key": "hashed-token", "info": {"key_alias": None, "models": [], "spend": 0.0}}
            writer.write(_json_response(200, dumps(info), keep))
        elif method == "GET" and path == "/props" and self.props is not None:
            writer.write(_json_response(200, dumps(self.props), keep))
        else:
            error = {"error": {"code": 404, "message": f"no route {method} {path}", "type": "not_found_error"}}
            writer.write(_json_response(404, dumps(error), keep))
        await writer.drain()
        return keep

    def _log(self, method, path, headers, raw, task, count, body=None) -> None:
        if not self.record:
            return
        if body is None and raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        entry = ReceivedRequest(method, path, headers, body, task, count, time.perf_counter_ns())
        with self._lock:
            self._requests.append(entry)

    async def _chat(self, headers: dict, raw: bytes, writer: asyncio.StreamWriter, keep: bool) -> bool:
        try:
            body = json.loads(raw)
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            self._log("POST", "/v1/chat/completions", headers, raw, None, None)
            bad = error_body(bad_request("request body is not a JSON object"))
            writer.write(_json_response(400, bad, keep))
            return keep
        task = headers.get("x-fake-plan") or _last_user_content(body)
        with self._lock:
            count = self._counts.get(task, 0)
            self._counts[task] = count + 1
        self._log("POST", "/v1/chat/completions", headers, raw, task, count, body)
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        model = str(body.get("model") or self.models[0])
        if self.mode == "zero-delay":
            writer.write(self._zero_delay(stream, include_usage, model))
            await writer.drain()
            return keep
        plan = resolve(self.script, task, body, count, self.default)
        if plan.headers_delay_s > 0:
            await asyncio.sleep(plan.headers_delay_s)
        if isinstance(plan, Reset):
            _reset(writer)
            return False
        if isinstance(plan, HttpError):
            extra = {"Retry-After": plan.retry_after} if plan.retry_after else None
            writer.write(_json_response(plan.status, error_body(plan), keep, extra))
            await writer.drain()
            return keep
        base = {"id": f"chatcmpl-fake-{count}", "created": int(time.time()), "model": model}
        prompt = plan.prompt_tokens or estimate_prompt_tokens(body)
        if not stream:
            return await self._whole(plan, base, prompt, writer, keep)
        steps = answer_steps(
            plan, base={**base, "object": "chat.completion.chunk"}, include_usage=include_usage, prompt_tokens=prompt
        )
        ends = plan.reset_after is not None or plan.truncate_after is not None
        writer.write(_STREAM_HEAD_CLOSING if ends else _STREAM_HEAD)
        return await self._stream(plan, steps, writer) and keep and not ends

    async def _stream(self, plan: Answer, steps: list, writer: asyncio.StreamWriter) -> bool:
        for delay, kind, payload in steps:
            if delay > 0:
                await writer.drain()
                await asyncio.sleep(delay)
            if kind in ("event", "raw"):
                if plan.stamp and isinstance(payload, dict):
                    payload["x_sent_ns"] = time.perf_counter_ns()
                data = encode_step(kind, payload, plan)
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                continue
            if kind in ("done", "close"):
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            if kind == "reset":
                await asyncio.sleep(0.05)  # let the client read what was sent before the RST
                _reset(writer)
            return kind == "done"
        return True

    async def _whole(self, plan: Answer, base: dict, prompt: int, writer: asyncio.StreamWriter, keep: bool) -> bool:
        body = dumps(answer_body(plan, base=base, prompt_tokens=prompt))
        if plan.reset_after is None and plan.truncate_after is None:
            writer.write(_json_response(200, body, keep))
            await writer.drain()
            return keep
        # A fault: promise the whole body, send half of it, then reset or close.
        writer.write(_json_response(200, body, keep)[: -len(body) // 2])
        await writer.drain()
        if plan.reset_after is not None:
            await asyncio.sleep(0.05)
            _reset(writer)
        return False

    def _zero_delay(self, stream: bool, include_usage: bool, model: str) -> bytes:
        key = (stream, include_usage, model)
        if key not in self._cache:  # built once: benchmarks measure the client, not this server
            base = {"id": "chatcmpl-fake-0", "created": 0, "model": model}
            if stream:
                steps = answer_steps(
                    ZERO_DELAY_ANSWER,
                    include_usage=include_usage,
                    base={**base, "object": "chat.completion.chunk"},
                    prompt_tokens=16,
                )
                frames = [encode_step(k, p, ZERO_DELAY_ANSWER) for _, k, p in steps[:-1]]
                self._cache[key] = _STREAM_HEAD + b"".join(b"%x\r\n%s\r\n" % (len(f), f) for f in frames) + b"0\r\n\r\n"
            else:
                body = dumps(answer_body(ZERO_DELAY_ANSWER, base=base, prompt_tokens=16))
                self._cache[key] = _json_response(200, body, True)
        return self._cache[key]


def main(argv: list[str] | None = None) -> None:
    """Standalone process: print the base URL on the first line, serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.fake_openai")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--mode", choices=("scripted", "zero-delay"), default="scripted")
    parser.add_argument(
        "--plan",
        choices=sorted(PRESETS),
        default="text",
        help="default plan in scripted mode (X-Fake-Plan overrides per request)",
    )
    args = parser.parse_args(argv)
    server = FakeServer(mode=args.mode, port=args.port, default=PRESETS[args.plan])
    try:
        asyncio.run(server.serve(on_ready=lambda s: print(s.url, flush=True)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
