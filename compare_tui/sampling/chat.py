"""Logged chat requests and replies, checked and reduced to what a task can replay.

Callers can rely on:
- `chat_request` returns messages every OpenAI-compatible server accepts: roles `system`,
  `user`, `assistant`, `tool` only (`developer` becomes `system`, because local chat
  templates do not know it), text content only, tool-call arguments as JSON strings. Fields a
  task cannot hold (`refusal`, `audio`, `annotations`, reasoning) are dropped.
- `chat_reply` returns the logged assistant reply: one tool call, or non-empty text.
- Anything unusable raises `Skipped(reason)`; `reason` is a key of `skips.REASONS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Required, TypedDict


class Skipped(Exception):
    """This record cannot become a task; `reason` says why (a `skips.REASONS` key)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TextPart(TypedDict):
    """One text part of a message's content (every other part is refused)."""

    type: Literal["text"]
    text: str


class CallFunction(TypedDict):
    """A tool call's function: its name and its arguments as JSON text."""

    name: str
    arguments: str


class ChatToolCall(TypedDict):
    """An assistant message's tool call, as a request replays it."""

    id: str
    type: Literal["function"]
    function: CallFunction


class ChatMessage(TypedDict, total=False):
    """A replayable chat message (`chat_request`): `role` is `system`, `user`, `assistant` or
    `tool`; `content` is text, text parts or (an assistant turn with calls) None."""

    role: Required[str]
    content: str | list[TextPart] | None
    tool_calls: list[ChatToolCall]
    tool_call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The logged assistant reply: `text`, or one tool call (`tool_name`, `tool_arguments`)."""

    text: str | None = None
    tool_name: str | None = None
    tool_arguments: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: list[ChatMessage]
    tools: list[dict[str, Any]] | None
    tool_choice: str | dict[str, Any] | None
    response_format: dict[str, Any] | None
    model: str | None
    position: int
    """The turn's place in its conversation: how many assistant turns came before it."""


_ROLES = {"system", "user", "assistant", "tool", "developer"}
_PLAIN_ROLES = {"system", "user", "assistant"}
_MEDIA_PARTS = {"image_url", "image", "input_image", "input_audio", "audio", "file", "input_file", "video_url"}


def _text_parts(content: Any) -> str | list[TextPart] | None:
    """Message content as a string or a list of text parts; media raise `Skipped`."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise Skipped("bad_messages")
    parts: list[TextPart] = []
    for part in content:
        if isinstance(part, str):
            parts.append({"type": "text", "text": part})
        elif (
            isinstance(part, dict) and part.get("type") in ("text", "input_text") and isinstance(part.get("text"), str)
        ):
            parts.append({"type": "text", "text": part["text"]})
        elif isinstance(part, dict) and part.get("type") in _MEDIA_PARTS:
            raise Skipped("unsupported_content")
        else:
            raise Skipped("bad_messages")
    return parts


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    raise Skipped("bad_messages")


def _tool_calls(calls: Any) -> list[ChatToolCall]:
    if not isinstance(calls, list):
        raise Skipped("bad_messages")
    out: list[ChatToolCall] = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise Skipped("bad_messages")
        # Servers require an id that the following tool message refers to; keep the logged one.
        call_id = call.get("id") if isinstance(call.get("id"), str) else f"call_{index}"
        out.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": function["name"], "arguments": _arguments_text(function.get("arguments", "{}"))},
            }
        )
    return out


def _message(raw: Any) -> ChatMessage:
    # Fast path for the bulk of every history (plain text turns): the scan pass runs this
    # for every message of every logged request.
    if (
        type(raw) is dict
        and len(raw) == 2
        and type(raw.get("content")) is str
        and type(raw.get("role")) is str
        and raw["role"] in _PLAIN_ROLES
    ):
        return {"role": raw["role"], "content": raw["content"]}
    if not isinstance(raw, dict):
        raise Skipped("bad_messages")
    role = raw.get("role")
    if role == "function" or raw.get("function_call"):
        raise Skipped("legacy_functions")
    if not isinstance(role, str) or role not in _ROLES:  # a list or object role is unhashable
        raise Skipped("bad_messages")
    message: ChatMessage = {"role": "system" if role == "developer" else role}
    content = _text_parts(raw.get("content"))
    if role == "assistant":
        calls = _tool_calls(raw["tool_calls"]) if raw.get("tool_calls") else None
        if calls:
            message["content"] = content
            message["tool_calls"] = calls
        else:
            # An assistant turn with neither text nor calls is sent as empty text: servers reject null.
            message["content"] = content if content is not None else ""
    else:
        if content is None and role != "tool":
            raise Skipped("bad_messages")
        message["content"] = content if content is not None else ""
    if role == "tool" and isinstance(raw.get("tool_call_id"), str):
        message["tool_call_id"] = raw["tool_call_id"]
    if isinstance(raw.get("name"), str):
        message["name"] = raw["name"]
    return message


def chat_request(body: Any) -> ChatRequest:
    """The replayable part of a logged chat-completions request body."""
    if not isinstance(body, dict):
        raise Skipped("no_messages")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise Skipped("no_messages")
    if body.get("functions") or body.get("function_call"):
        raise Skipped("legacy_functions")
    messages = [_message(m) for m in raw]
    if not any(m["role"] == "user" for m in messages):
        raise Skipped("no_user_message")
    tools = body.get("tools") or None
    if tools is not None:
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise Skipped("bad_tools")
        if any(t.get("type", "function") != "function" for t in tools):
            raise Skipped("bad_tools")
    tool_choice = body.get("tool_choice")
    response_format = body.get("response_format")
    model = body.get("model")
    return ChatRequest(
        messages=messages,
        tools=tools,
        tool_choice=tool_choice if isinstance(tool_choice, (str, dict)) else None,
        response_format=response_format if isinstance(response_format, dict) else None,
        model=model if isinstance(model, str) else None,
        position=sum(1 for m in messages if m["role"] == "assistant"),
    )


def _reply_message(response: Any) -> tuple[Any, Any]:
    """(message, finish_reason) from a chat completion, a bare message, or a string."""
    if isinstance(response, str):
        return {"role": "assistant", "content": response}, None
    if not isinstance(response, dict):
        raise Skipped("no_reply")
    if "choices" in response:
        choices = response["choices"]
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise Skipped("no_reply")
        return choices[0].get("message"), choices[0].get("finish_reason")
    if any(key in response for key in ("content", "tool_calls", "role")):
        return response, response.get("finish_reason")
    raise Skipped("no_reply")


def chat_reply(response: Any) -> Reply:
    """The logged assistant reply; `Skipped` when it cannot be an expected outcome."""
    message, finish = _reply_message(response)
    if not isinstance(message, dict):
        raise Skipped("no_reply")
    if finish == "length":
        raise Skipped("truncated_reply")
    if finish == "content_filter":
        raise Skipped("failed_request")
    if message.get("function_call"):
        raise Skipped("legacy_functions")
    calls = message.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise Skipped("bad_tool_call")
        if len(calls) > 1:
            raise Skipped("several_tool_calls")
        function = calls[0].get("function") if isinstance(calls[0], dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise Skipped("bad_tool_call")
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                raise Skipped("bad_tool_call") from None
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise Skipped("bad_tool_call")
        return Reply(tool_name=function["name"], tool_arguments=arguments)
    content = _text_parts(message.get("content"))
    text = "".join(p["text"] for p in content) if isinstance(content, list) else content
    if not text or not text.strip():
        raise Skipped("empty_reply")
    return Reply(text=text)
