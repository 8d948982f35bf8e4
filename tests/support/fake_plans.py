"""Response plans for the fake OpenAI-compatible server (`fake_openai.py`).

A *plan* says how the server answers one chat-completion request. There are three kinds:

- `Answer`: HTTP 200 with an answer (text and/or tool calls), streamed as SSE when the request
  asked for `stream: true`, else one JSON body. Its fields also inject stream faults (resets,
  truncation, malformed lines, error events, odd framing).
- `HttpError`: a non-200 JSON error (400 refusal, 429 with Retry-After, 500, 503, ...).
- `Reset`: the request is read, then the TCP connection is reset before any response byte.

A *script* picks the plan. It is either a callable `(body, count) -> plan`, or a mapping from a
task key to a rule, where a rule is a plan, a list of plans (the n-th request for the task gets
`rules[min(n, len - 1)]`, so the last one repeats) or a callable `(body, count) -> plan`. The task
key is the `X-Fake-Plan` request header when present, else the last user message's content;
`count` is how many earlier requests had the same key (0 for the first). A key that the
mapping lacks falls back to `PRESETS` (so a standalone server can be steered by header alone),
then to the server's default plan. The factories below build each fault; e.g.::

    script = {
        "refund-01": text("billing", chunk_chars=2, chunk_delay_s=0.01),
        "weather": tool_calls(ToolCall("get_weather", {"city": "Paris"}), args_chunk_chars=3),
        "flaky": fail_then(2, http_error(503), text("ok")),
    }
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call in an answer; `arguments` is serialised as a JSON string unless the answer
    sets `arguments_as_object`. A str `arguments` is sent verbatim (e.g. to send invalid JSON)."""

    name: str
    arguments: dict | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Answer:
    """HTTP 200 answer. Stream order: role-only chunk (content null), content deltas of
    `chunk_chars` characters, tool-call deltas, a finish_reason chunk, the usage chunk
    (`choices: []`), `data: [DONE]`. Stream-only fault fields are ignored for `stream: false`."""

    text: str = "ok"
    chunk_chars: int = 4
    headers_delay_s: float = 0.0  # before the status line: a slow first byte
    first_token_delay_s: float = 0.0  # after the role chunk, before the first delta (prefill)
    chunk_delay_s: float = 0.0  # between later deltas (decode)
    role_chunk: bool = True  # False: the first content delta carries the role itself
    usage: bool | str | None = None  # None: honour include_usage; True: always; False: never;
    # "every": usage on every chunk as well (vLLM continuous_usage_stats)
    timings: bool = False  # llama.cpp `timings` object on the last chunk / in the body
    tool_calls: tuple[ToolCall, ...] = ()
    args_chunk_chars: int = 5  # arguments string split into deltas of this many characters
    interleave: bool = False  # parallel calls' argument deltas alternate between indexes
    arguments_as_object: bool = False  # quirk: arguments as a JSON object, whole, not a string
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    prompt_tokens: int | None = None  # default: estimated from the request's messages
    completion_tokens: int | None = None  # default: number of deltas (chunks != tokens in life)
    pings: bool = False  # `: ping` comment before every delta
    data_no_space: bool = False  # `data:{...}` instead of `data: {...}`
    crlf: bool = False  # CRLF line endings inside the SSE body
    garbage: tuple[str, ...] = ()  # raw lines sent as one event right after the role chunk
    truncate_after: int | None = None  # end the body after N deltas: no finish, usage, [DONE]
    truncate_clean: bool = True  # True: proper chunked terminator; False: close mid-body
    reset_after: int | None = None  # TCP reset after N deltas
    error_after: int | None = None  # after N deltas send `data: {"error": ...}` then [DONE]
    error: dict | None = None  # the error object for error_after
    stamp: bool = False  # add `x_sent_ns` (perf_counter_ns at write time) to each JSON chunk


@dataclass(frozen=True)
class HttpError:
    """Non-200 JSON error. Default body: `{"error": {"code", "message", "type"}}` (llama.cpp's
    shape); `body` replaces it (a str is sent verbatim). `retry_after` sets that header."""

    status: int = 500
    message: str = "Internal server error"
    retry_after: str | None = None
    body: dict | str | None = None
    headers_delay_s: float = 0.0


@dataclass(frozen=True)
class Reset:
    """Read the request, then reset the TCP connection (RST) before any response byte."""

    headers_delay_s: float = 0.0


Plan = Answer | HttpError | Reset
PlanFn = Callable[[dict, int], "Plan | None"]
Rule = Plan | Sequence[Plan] | PlanFn
Script = PlanFn | Mapping[str, Rule]


def text(answer: str = "ok", **options: Any) -> Answer:
    """A normal text answer; `options` are any `Answer` fields (delays, chunk size, ...)."""
    return Answer(text=answer, **options)


def tool_calls(*calls: ToolCall, **options: Any) -> Answer:
    """Tool calls split over many deltas; two or more with `interleave=True` alternate."""
    options.setdefault("text", "")
    return Answer(tool_calls=tuple(calls), **options)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    503: "unavailable_error",
}


def http_error(
    status: int = 500,
    message: str | None = None,
    *,
    retry_after: str | float | None = None,
    body: dict | str | None = None,
) -> HttpError:
    """Any HTTP error status with a JSON error body."""
    return HttpError(
        status=status,
        message=message or f"Fake HTTP {status}",
        retry_after=None if retry_after is None else str(retry_after),
        body=body,
    )


def bad_request(message: str) -> HttpError:
    """400 with a given message, e.g. llama.cpp's "tools param requires --jinja flag"."""
    return http_error(400, message)


def rate_limited(retry_after: str | float = "1", message: str = "Rate limit exceeded") -> HttpError:
    """429 with a Retry-After header (seconds, or an HTTP date string)."""
    return http_error(429, message, retry_after=retry_after)


def reset(after_chunks: int | None = None, **options: Any) -> Plan:
    """Connection reset: before headers when `after_chunks` is None, else mid-stream."""
    options.setdefault("text", "an answer that the reset cuts off")
    return Reset() if after_chunks is None else Answer(reset_after=after_chunks, **options)


def truncated(after_chunks: int = 2, *, clean: bool = True, **options: Any) -> Answer:
    """Stream ends after N deltas without finish chunk, usage or [DONE]."""
    options.setdefault("text", "truncated answer text")
    return Answer(truncate_after=after_chunks, truncate_clean=clean, **options)


MALFORMED_LINES = ("this line has no field name", "event: mystery", "data: {not json")


def malformed(lines: Sequence[str] = MALFORMED_LINES, **options: Any) -> Answer:
    """Garbage lines and a non-JSON `data:` line injected into an otherwise valid stream."""
    return Answer(garbage=tuple(lines), **options)


def error_in_stream(
    message: str = "Fake error inside a 200 stream", *, after_chunks: int = 1, **options: Any
) -> Answer:
    """HTTP 200 stream that sends `data: {"error": {...}}` then `data: [DONE]`."""
    error = {"code": 500, "message": message, "type": "server_error"}
    return Answer(error_after=after_chunks, error=error, **options)


def fail_then(times: int, failure: Plan, success: Plan) -> PlanFn:
    """`failure` for the first `times` requests of a task, then `success` (for retry tests)."""
    return lambda body, count: failure if count < times else success


PRESETS: dict[str, Plan] = {
    "text": Answer(),
    "tool-call": tool_calls(ToolCall("get_weather", {"city": "Paris", "unit": "celsius"})),
    "reset": Reset(),
    "reset-mid-stream": reset(2, text="this answer will be cut off"),
    "http-400-jinja": bad_request("tools param requires --jinja flag"),
    "http-429": rate_limited("1"),
    "http-500": http_error(500),
    "http-503": http_error(503, "Loading model"),
    "malformed": malformed(),
    "truncated": truncated(),
    "error-in-stream": error_in_stream(),
    "slow-first-byte": Answer(headers_delay_s=0.5),
    "no-usage": Answer(usage=False),
    "pings-crlf-nospace": Answer(pings=True, crlf=True, data_no_space=True),
}


def resolve(script: Script | None, key: str, body: dict, count: int, default: Plan) -> Plan:
    """The plan for one request (see the module docstring for the lookup order)."""
    plan: Any = None
    if callable(script):
        plan = script(body, count)
    elif script is not None:
        rule = script.get(key, PRESETS.get(key))
        if isinstance(rule, (list, tuple)):
            plan = rule[min(count, len(rule) - 1)] if rule else None
        elif callable(rule) and not isinstance(rule, (Answer, HttpError, Reset)):
            plan = rule(body, count)
        else:
            plan = rule
    else:
        plan = PRESETS.get(key)
    return plan if plan is not None else default


def error_body(plan: HttpError) -> bytes:
    """The JSON (or verbatim) body of an HTTP error plan."""
    if isinstance(plan.body, str):
        return plan.body.encode()
    body = plan.body or {
        "error": {"code": plan.status, "message": plan.message, "type": _ERROR_TYPES.get(plan.status, "server_error")}
    }
    return dumps(body)


def dumps(obj: Any) -> bytes:
    """Compact JSON, as servers send it (and cheaper to produce)."""
    return json.dumps(obj, separators=(",", ":")).encode()


# ---- rendering: what bytes an Answer becomes (pure; the server only adds timing) ----

Step = tuple[float, str, Any]  # (delay before it, kind, payload); kinds below in answer_steps


def estimate_prompt_tokens(body: dict) -> int:
    """A deterministic stand-in for the server's tokenizer (about 4 characters per token,
    plus a chat-template overhead), so usage figures are stable across runs."""
    chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
    return chars // 4 + 8


def _arguments(call: ToolCall, as_object: bool) -> Any:
    if as_object:
        if isinstance(call.arguments, str):
            try:
                return json.loads(call.arguments)
            except ValueError:
                return call.arguments
        return call.arguments
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _deltas(a: Answer) -> list[dict]:
    """Content deltas, then tool-call deltas (id and name first, arguments over many)."""
    n = max(1, a.chunk_chars)
    out: list[dict] = [{"content": a.text[i : i + n]} for i in range(0, len(a.text), n)]
    heads, pieces = [], []
    for index, call in enumerate(a.tool_calls):
        fn: dict = {"name": call.name, "arguments": ""}
        if a.arguments_as_object:
            fn["arguments"] = _arguments(call, True)
        head = {"index": index, "id": call.id or f"call_{index}_{call.name}", "type": "function", "function": fn}
        heads.append({"tool_calls": [head]})
        args = "" if a.arguments_as_object else _arguments(call, False)
        k = max(1, a.args_chunk_chars)
        pieces.append(
            [
                {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + k]}}]}
                for i in range(0, len(args), k)
            ]
        )
    if a.interleave:
        out += heads
        for row in range(max((len(p) for p in pieces), default=0)):
            out += [p[row] for p in pieces if row < len(p)]
    else:
        for head, own in zip(heads, pieces):
            out += [head, *own]
    return out


def _usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _timings(a: Answer, prompt: int, completion: int, n_deltas: int) -> dict:
    """llama.cpp-shaped timings from the plan's nominal delays (deterministic for tests)."""
    prompt_ms = a.first_token_delay_s * 1000
    predicted_ms = a.chunk_delay_s * max(n_deltas - 1, 0) * 1000
    return {
        "cache_n": 0,
        "prompt_n": prompt,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / max(prompt, 1),
        "prompt_per_second": prompt / (prompt_ms / 1000) if prompt_ms else 0.0,
        "predicted_n": completion,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / max(completion, 1),
        "predicted_per_second": completion / (predicted_ms / 1000) if predicted_ms else 0.0,
    }


def answer_steps(a: Answer, *, base: dict, include_usage: bool, prompt_tokens: int) -> list[Step]:
    """The SSE stream as steps. Kinds: "event" (JSON dict or str after `data:`), "raw" (lines
    sent verbatim), and one terminal step: "done" (chunked terminator, keep-alive), "close"
    (terminator, then close), "abort" (close without terminator) or "reset" (TCP RST)."""
    deltas = _deltas(a)
    completion = a.completion_tokens if a.completion_tokens is not None else len(deltas)
    send_usage = a.usage is True or a.usage == "every" or (a.usage is None and include_usage)

    def chunk(delta: dict, sent: int, finish: str | None = None) -> dict:
        out = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if a.usage == "every":
            out["usage"] = _usage(prompt_tokens, sent)
        elif send_usage:
            out["usage"] = None  # OpenAI sends usage:null on every chunk but the last
        return out

    # A cut point past the last delta still cuts, just before the finish chunk.
    truncate_at, reset_at, error_at = (
        None if n is None else min(n, len(deltas)) for n in (a.truncate_after, a.reset_after, a.error_after)
    )
    steps: list[Step] = []
    if a.role_chunk:
        steps.append((0.0, "event", chunk({"role": "assistant", "content": None}, 0)))
    elif deltas:
        deltas[0] = {"role": "assistant", **deltas[0]}
    if a.garbage:
        steps.append((0.0, "raw", a.garbage))
    for sent in range(len(deltas) + 1):
        if sent == truncate_at:
            return steps + [(0.0, "close" if a.truncate_clean else "abort", None)]
        if sent == reset_at:
            return steps + [(0.0, "reset", None)]
        if sent == error_at:
            return steps + [(0.0, "event", {"error": a.error}), (0.0, "event", "[DONE]"), (0.0, "done", None)]
        if sent == len(deltas):
            break
        if a.pings:
            steps.append((0.0, "raw", (": ping",)))
        delay = a.first_token_delay_s if sent == 0 else a.chunk_delay_s
        steps.append((delay, "event", chunk(deltas[sent], sent + 1)))
    finish = a.finish_reason or ("tool_calls" if a.tool_calls else "stop")
    steps.append((0.0, "event", chunk({}, len(deltas), finish)))
    if send_usage:
        steps.append((0.0, "event", {**base, "choices": [], "usage": _usage(prompt_tokens, completion)}))
    if a.timings:  # llama.cpp attaches timings to the last chunk before [DONE]
        steps[-1][2]["timings"] = _timings(a, prompt_tokens, completion, len(deltas))
    return steps + [(0.0, "event", "[DONE]"), (0.0, "done", None)]


def encode_step(kind: str, payload: Any, a: Answer) -> bytes:
    """One "event" or "raw" step as SSE bytes, honouring the framing quirks of `a`."""
    nl = "\r\n" if a.crlf else "\n"
    if kind == "raw":
        return (nl.join(payload) + nl + nl).encode()
    data = payload.encode() if isinstance(payload, str) else dumps(payload)
    return (b"data:" if a.data_no_space else b"data: ") + data + (nl + nl).encode()


def answer_body(a: Answer, *, base: dict, prompt_tokens: int) -> dict:
    """The `stream: false` JSON body. An `error_after` plan yields a 200 with an error body."""
    if a.error_after is not None:
        return {"error": a.error}
    message: dict = {"role": "assistant", "content": a.text or None}
    if a.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id or f"call_{i}_{c.name}",
                "type": "function",
                "function": {"name": c.name, "arguments": _arguments(c, a.arguments_as_object)},
            }
            for i, c in enumerate(a.tool_calls)
        ]
    n_deltas = len(_deltas(a))
    completion = a.completion_tokens if a.completion_tokens is not None else n_deltas
    finish = a.finish_reason or ("tool_calls" if a.tool_calls else "stop")
    body = {**base, "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if a.usage is not False:
        body["usage"] = _usage(prompt_tokens, completion)
    if a.timings:
        body["timings"] = _timings(a, prompt_tokens, completion, n_deltas)
    return body
