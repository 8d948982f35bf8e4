"""Turn the JSON chunks of one streamed chat completion into an answer and its timings.

Pure and synchronous: the client hands it each parsed chunk with its arrival time. The
rules follow docs/measurement.md §2: TTFT starts at the first non-empty content, reasoning or
tool-call delta (never the role-only opener); the end is the last *token* chunk (the usage
chunk does not move it); usage is the last non-null one the server sent and is never
invented; streamed tool calls assemble by index, first id and name win, arguments are
concatenated and parsed once at the end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compare_tui.scoring.result import Answer, ToolCall


@dataclass(slots=True)
class _PartialCall:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)
    arguments_were_object: bool = False


@dataclass(slots=True)
class StreamAccumulator:
    """Feed it `(chunk, arrived_ns)`; read the answer, timings, usage and any stream error."""

    sent_ns: int
    first_token_ns: int | None = None
    first_content_ns: int | None = None
    last_token_ns: int | None = None
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    finish_reason: str | None = None
    error: str | None = None
    chunks: int = 0
    notes: list[str] = field(default_factory=list)

    def feed(self, chunk: Any, arrived_ns: int) -> None:
        if not isinstance(chunk, dict):
            raise ValueError(f"a stream chunk is {type(chunk).__name__}, not a JSON object")
        self.chunks += 1
        get = chunk.get
        error = get("error")
        if error is not None:
            # An error payload inside a 200 stream (vLLM does this): the attempt failed.
            self.error = _error_text(error)
            return
        usage = get("usage")
        if usage is not None and isinstance(usage, dict):
            self.usage = usage
        timings = get("timings")
        if timings is not None and isinstance(timings, dict):
            self.timings = timings
        choices = get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict):
                    self._feed_choice(choice, arrived_ns)

    def _feed_choice(self, choice: dict[str, Any], arrived_ns: int) -> None:
        get = choice.get
        finish_reason = get("finish_reason")
        if finish_reason:
            self.finish_reason = finish_reason
        delta = get("delta") or get("message") or {}
        if not isinstance(delta, dict):
            return
        token = False
        get = delta.get
        content = get("content")
        if content and isinstance(content, str):
            self.text.append(content)
            token = True
            if self.first_content_ns is None:
                self.first_content_ns = arrived_ns
        for key in ("reasoning_content", "reasoning"):
            value = get(key)
            if value and isinstance(value, str):
                self.reasoning.append(value)
                token = True
        raw_calls = get("tool_calls")
        if isinstance(raw_calls, list):
            for raw in raw_calls:
                if isinstance(raw, dict):
                    self._feed_call(raw)
                    token = True
        if token:
            if self.first_token_ns is None:
                self.first_token_ns = arrived_ns
            self.last_token_ns = arrived_ns

    def _feed_call(self, raw: dict[str, Any]) -> None:
        index = raw.get("index")
        if not isinstance(index, int):
            index = len(self.calls)
        call = self.calls.setdefault(index, _PartialCall())
        if call.id is None and raw.get("id"):
            call.id = str(raw["id"])
        function = raw.get("function")
        if not isinstance(function, dict):
            function = {}
        if call.name is None and function.get("name"):
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif arguments is not None:
            # Some servers send an object; keep it as the JSON text the spec asks for.
            call.arguments.append(json.dumps(arguments, ensure_ascii=False))
            call.arguments_were_object = True

    # ------------------------------------------------------------------ results

    def answer(self) -> Answer:
        calls = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            if partial.arguments_were_object:
                self.notes.append(f"tool call {index}: arguments arrived as an object, not a JSON string")
            calls.append(ToolCall(name=partial.name or "", arguments="".join(partial.arguments), id=partial.id))
        return Answer(
            text="".join(self.text),
            tool_calls=tuple(calls),
            reasoning="".join(self.reasoning) or None,
        )

    def ttft_ms(self) -> float | None:
        return None if self.first_token_ns is None else (self.first_token_ns - self.sent_ns) / 1e6

    def e2e_ms(self) -> float | None:
        return None if self.last_token_ns is None else (self.last_token_ns - self.sent_ns) / 1e6

    def tokens(self) -> tuple[int | None, int | None]:
        if not self.usage:
            return None, None
        return _int_or_none(self.usage.get("prompt_tokens")), _int_or_none(self.usage.get("completion_tokens"))

    def cached_tokens(self) -> int | None:
        """Prompt tokens the server took from its cache instead of processing them: llama.cpp's
        `timings.cache_n`, else the OpenAI shape `usage.prompt_tokens_details.cached_tokens`
        (vLLM, when started with `--enable-prompt-tokens-details`). None when neither says."""
        if self.timings is not None and "cache_n" in self.timings:
            return _int_or_none(self.timings.get("cache_n"))
        details = self.usage.get("prompt_tokens_details") if self.usage else None
        return _int_or_none(details.get("cached_tokens")) if isinstance(details, dict) else None


def accumulate_message(body: Any, sent_ns: int, arrived_ns: int) -> StreamAccumulator:
    """The same accumulator filled from a non-streamed response body."""
    acc = StreamAccumulator(sent_ns=sent_ns)
    acc.feed(body, arrived_ns)
    return acc


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
