"""One log line → one logged turn: the record shapes `compare-tui sample` accepts.

Accepted shapes (one JSON object per line):

1. **Plain**: `{"request": {chat-completions body}, "response": …, "timestamp": …,
   "conversation_id": …}`. `response` is a chat completion (`choices[0].message`), a bare
   assistant message, a string, or `{"status_code", "body": chat completion}`.
2. **OpenAI batch output**: `{"custom_id", "response": {"status_code", "body": chat
   completion}, "error"}`. The request comes from an embedded `request` field (a request
   body, or the whole batch input line) when present, else from the matching batch *input*
   line (`{"custom_id", "method", "url", "body"}`) given among the LOGS, joined by
   `custom_id`. The time is the completion's `created`.
3. **LiteLLM-style**: `{"messages", "response", "startTime", "model", "metadata", …}`, with
   tools from `tools`, `model_parameters.tools` or `optional_params.tools`.

Where the fields come from, in every shape:
- time: `timestamp`, `created_at`, `createdAt`, `time`, `startTime`, `start_time`, else the
  completion's `created`; ISO 8601 or epoch seconds (see `window.parse_timestamp`).
- conversation: `conversation_id`, `conversationId`, `session_id`, `sessionId`,
  `thread_id`, `litellm_session_id`, at the top level, in `metadata` or in the request's
  `metadata`. Without one, the conversation is identified by its opening (the messages up to
  and including the first user message), so the turns of one chat still group together.
- tags: `tags`, `request_tags`, `metadata.tags` (a list, or one comma-separated string).
- model: the request's `model`, the record's `model` and the completion's `model`; `--model`
  matches any of them exactly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .chat import ChatRequest, Reply, Skipped, chat_reply, chat_request
from .window import parse_timestamp

_TIME_KEYS = ("timestamp", "created_at", "createdAt", "time", "startTime", "start_time")
_CONVERSATION_KEYS = ("conversation_id", "conversationId", "session_id", "sessionId", "thread_id", "litellm_session_id")
_TOOL_SOURCES = ("model_parameters", "optional_params")


@dataclass(frozen=True, slots=True)
class LoggedTurn:
    """One assistant turn as logged: the request that led to it and the reply given."""

    conversation: str
    timestamp: float
    tags: tuple[str, ...]
    models: tuple[str, ...]
    request: ChatRequest
    reply: Reply

    @property
    def position(self) -> int:
        return self.request.position


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """A batch input line, waiting for its output line (same `custom_id`)."""

    custom_id: str
    conversation: str
    tags: tuple[str, ...]
    request: ChatRequest


@dataclass(frozen=True, slots=True)
class BatchOutput:
    """A batch output line without an embedded request, waiting for its input line."""

    custom_id: str
    timestamp: float
    models: tuple[str, ...]
    reply: Reply


def joined(request: BatchRequest, output: BatchOutput) -> LoggedTurn:
    models = tuple(dict.fromkeys(m for m in (request.request.model, *output.models) if m))
    return LoggedTurn(request.conversation, output.timestamp, request.tags, models, request.request, output.reply)


def read_record(line: bytes) -> LoggedTurn | BatchRequest | BatchOutput:
    """The turn (or batch half) a log line holds; raises `Skipped` saying why not."""
    if not line.strip():
        raise Skipped("blank")
    try:
        # Decoded here, not by json.loads: it would guess UTF-16/32 from stray bytes.
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise Skipped("not_utf8") from None
    try:
        record = json.loads(text.lstrip("\ufeff"))  # a BOM opens some files
    except (ValueError, RecursionError):
        raise Skipped("bad_json") from None
    if not isinstance(record, dict):
        raise Skipped("not_object")
    if "custom_id" in record:
        return _batch(record)
    if isinstance(record.get("request"), dict):
        return _turn(record, record["request"], _http_body(record.get("response"), record))
    if isinstance(record.get("messages"), list):
        if record.get("status") == "failure":
            raise Skipped("failed_request")
        return _turn(record, _litellm_body(record), record.get("response"))
    raise Skipped("unknown_shape")


def _http_body(response: Any, record: dict[str, Any]) -> Any:
    """The completion inside `{"status_code", "body"}`; failed requests raise `Skipped`."""
    if record.get("error") and not response:
        raise Skipped("failed_request")
    if response is None:
        raise Skipped("no_reply")
    if isinstance(response, dict) and "body" in response and ("status_code" in response or "request_id" in response):
        if response.get("status_code", 200) != 200:
            raise Skipped("failed_request")
        return response["body"]
    return response


def _litellm_body(record: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": record["messages"], "model": record.get("model")}
    for key in ("tools", "tool_choice", "response_format"):
        for holder in (record, *(record.get(s) for s in _TOOL_SOURCES)):
            if isinstance(holder, dict) and holder.get(key) is not None:
                body[key] = holder[key]
                break
    return body


def _batch(record: dict[str, Any]) -> LoggedTurn | BatchRequest | BatchOutput:
    custom_id = str(record["custom_id"])
    if "response" not in record and isinstance(record.get("body"), dict):
        url = record.get("url")
        if isinstance(url, str) and not url.rstrip("/").endswith("chat/completions"):
            raise Skipped("unknown_shape")
        request = chat_request(record["body"])
        return BatchRequest(
            custom_id, _conversation(record, record["body"], request), _tags(record, record["body"]), request
        )
    body = _http_body(record.get("response"), record)
    embedded = record.get("request")
    if isinstance(embedded, dict):
        request_body = embedded["body"] if isinstance(embedded.get("body"), dict) else embedded
        return _turn(record, request_body, body)
    reply = chat_reply(body)
    timestamp = _timestamp(record, body)
    return BatchOutput(custom_id, timestamp, _models(record, None, body), reply)


def _turn(record: dict[str, Any], body: Any, response: Any) -> LoggedTurn:
    request = chat_request(body)
    reply = chat_reply(response)
    return LoggedTurn(
        conversation=_conversation(record, body, request),
        timestamp=_timestamp(record, response),
        tags=_tags(record, body),
        models=_models(record, request, response),
        request=request,
        reply=reply,
    )


def _timestamp(record: dict[str, Any], response: Any) -> float:
    for key in _TIME_KEYS:
        if record.get(key) is not None:
            moment = parse_timestamp(record[key])
            if moment is None:
                raise Skipped("bad_timestamp")
            return moment
    created = response.get("created") if isinstance(response, dict) else None
    moment = parse_timestamp(created)
    if moment is None:
        raise Skipped("bad_timestamp")
    return moment


def _metadata_holders(record: dict[str, Any], body: Any) -> list[dict[str, Any]]:
    holders = [record]
    for candidate in (record.get("metadata"), body.get("metadata") if isinstance(body, dict) else None):
        if isinstance(candidate, dict):
            holders.append(candidate)
    return holders


def _conversation(record: dict[str, Any], body: Any, request: ChatRequest) -> str:
    for holder in _metadata_holders(record, body):
        for key in _CONVERSATION_KEYS:
            value = holder.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                return f"id:{value}"
    # No id: the conversation's opening identifies it (every later turn repeats it).
    first_user = next(i for i, m in enumerate(request.messages) if m["role"] == "user")
    opening = json.dumps(request.messages[: first_user + 1], sort_keys=True, ensure_ascii=False)
    return "opening:" + hashlib.sha256(opening.encode("utf-8", "surrogatepass")).hexdigest()


def _tags(record: dict[str, Any], body: Any) -> tuple[str, ...]:
    found: list[str] = []
    for holder in _metadata_holders(record, body):
        for key in ("tags", "request_tags"):
            value = holder.get(key)
            if isinstance(value, str):
                found.extend(t.strip() for t in value.split(","))
            elif isinstance(value, list):
                found.extend(t.strip() for t in value if isinstance(t, str))
    return tuple(sorted({t for t in found if t}))


def _models(record: dict[str, Any], request: ChatRequest | None, response: Any) -> tuple[str, ...]:
    names = [request.model if request else None, record.get("model")]
    if isinstance(response, dict):
        names.append(response.get("model"))
    return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n))
