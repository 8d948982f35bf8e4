"""Assemble streamed chat chunks into one message, checking the assembly rules as it goes.

Reference notes (c), keyed by choice index + tool-call index:
 1. `index` must be an integer;            2. the first non-empty `id` wins, a different one
 later fails (`id_changed`), none at all fails;   3. the first non-empty `name` wins, never
 concatenated, an identical repeat is a note, a different one fails;   4. `arguments`
 fragments are concatenated in arrival order and parsed once, at the end (by the checks);
 5. a tool delta after the chunk carrying `finish_reason` fails;   6. a usage chunk with
 `choices: []` is fine;   7. a missing `[DONE]` is a note.   Also: parallel calls use the
 indices 0..n-1 (OpenAI's stream), so a gap fails.
Rule 8 (an `error` payload) is the exchange's business (`exchange.py`, `unsupported.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compare_tui.toolcall.schema.json_values import pointer

_NO_VALUE = object()


@dataclass(frozen=True, slots=True)
class StreamViolation:
    pointer: str
    rule: str
    message: str


@dataclass(slots=True)
class _Call:
    first_seen: str
    id: str | None = None
    type: Any = None
    name: str | None = None
    fragments: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class Assembled:
    """The message as the deltas build it, plus what broke the rules on the way."""

    message: dict[str, Any]
    finish_reason: str | None
    violations: list[StreamViolation]
    notes: list[str]


def assemble(chunks: list[Any], done: bool) -> Assembled:
    """Fold `chunks` (parsed `data:` payloads, `[DONE]` excluded) into a message dict shaped
    like a non-streamed `choices[0].message`: content, reasoning_content, tool_calls."""
    calls: dict[int, _Call] = {}
    content: list[str] = []
    reasoning: list[str] = []
    violations: list[StreamViolation] = []
    notes: list[str] = []
    finish: str | None = None
    for n, chunk in enumerate(chunks):
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not isinstance(choices, list):
            continue  # rule 6 (usage-only chunk) and anything else without choices
        for c, choice in enumerate(choices):
            if not isinstance(choice, dict):
                continue
            if choice.get("index", 0) != 0:
                notes.append("a chunk carried a second choice although n = 1; only choice 0 is assembled")
                continue
            delta = choice.get("delta")
            where = ("stream", "chunks", n, "choices", c, "delta")
            if isinstance(delta, dict):
                for key, sink in (("content", content), ("reasoning_content", reasoning)):
                    if isinstance(delta.get(key), str):
                        sink.append(delta[key])
                raw_calls = delta.get("tool_calls")
                for t, raw in enumerate(raw_calls if isinstance(raw_calls, list) else ()):
                    at = pointer(*where, "tool_calls", t)
                    if finish is not None:
                        violations.append(
                            StreamViolation(
                                at, "delta_after_finish", f"a tool-call delta arrived after finish_reason {finish!r}"
                            )
                        )
                    _feed(raw, at, calls, violations, notes)
            if choice.get("finish_reason"):
                finish = finish or str(choice["finish_reason"])
    if not done:
        notes.append("the stream ended without data: [DONE]")
    return Assembled(_message(calls, content, reasoning, violations), finish, violations, notes)


def _feed(raw: Any, at: str, calls: dict[int, _Call], violations: list[StreamViolation], notes: list[str]) -> None:
    if not isinstance(raw, dict):
        violations.append(StreamViolation(at, "delta_shape", "a tool-call delta is not a JSON object"))
        return
    index = raw.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        violations.append(StreamViolation(at + "/index", "index_missing", "a tool-call delta has no integer index"))
        return
    call = calls.setdefault(index, _Call(at))
    new_id = raw.get("id")
    if isinstance(new_id, str) and new_id:
        if call.id is None:
            call.id = new_id
        elif new_id != call.id:
            violations.append(StreamViolation(at + "/id", "id_changed", f"call {index} changed its id mid-stream"))
    if raw.get("type") is not None and call.type is None:
        call.type = raw["type"]
    function = raw.get("function")
    if not isinstance(function, dict):
        return
    name = function.get("name")
    if isinstance(name, str) and name:
        if call.name is None:
            call.name = name
        elif name == call.name:
            notes.append(f"call {index} repeated its name in a later delta (not concatenated)")
        else:
            violations.append(
                StreamViolation(at + "/function/name", "name_changed", f"call {index} sent a second, different name")
            )
    if "arguments" in function and function["arguments"] is not None:
        call.fragments.append(function["arguments"])


def _message(
    calls: dict[int, _Call], content: list[str], reasoning: list[str], violations: list[StreamViolation]
) -> dict[str, Any]:
    tool_calls = []
    for position, index in enumerate(sorted(calls)):
        call = calls[index]
        if index != position:
            violations.append(
                StreamViolation(
                    call.first_seen + "/index",
                    "index_sequence",
                    f"tool-call indices are not 0..n-1 (found {index} at position {position})",
                )
            )
        if call.id is None:
            violations.append(StreamViolation(call.first_seen + "/id", "id_missing", f"call {index} never sent an id"))
        objects = [f for f in call.fragments if not isinstance(f, str)]
        # An object fragment is kept as is, so that the arguments-are-a-string check fails on it.
        arguments: Any = objects[0] if objects else "".join(call.fragments)
        entry: dict[str, Any] = {"id": call.id, "function": {"name": call.name, "arguments": arguments}}
        if call.type is not None:
            entry["type"] = call.type
        tool_calls.append(entry)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message
