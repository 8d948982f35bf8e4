"""The chat-completion request body for one task under one run's settings, and how a run holds
its prompt-cache condition on the server's stack (`PromptCacheHold`)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from compare_tui.engine.settings import RunSettings
from compare_tui.goldset.models import Task
from compare_tui.vocabulary import PromptCache


class PromptCacheEntry(TypedDict):
    """`PromptCacheHold` as the run environment stores it (`prompt_cache`)."""

    asked: str
    held: bool
    how: str


@dataclass(frozen=True, slots=True)
class PromptCacheHold:
    """How a run's requests carry its prompt-cache condition, on the stack its server is."""

    asked: PromptCache
    field: str | None
    """The request field that holds it: llama.cpp `cache_prompt` (false: the prompt is processed
    whole, nothing reused), vLLM `cache_salt` (a fresh salt per request: no prefix of another
    request matches), or None (the server's own behaviour, or no switch on this stack)."""
    text: str
    """How it was held, in words, as the run records it (`environment.prompt_cache.held`)."""

    @property
    def held(self) -> bool:
        """Whether the condition asked for is the one the requests carry."""
        return self.asked is PromptCache.SERVER or self.field is not None

    def as_dict(self) -> PromptCacheEntry:
        return {"asked": str(self.asked), "held": self.held, "how": self.text}

    def apply(self, body: dict[str, Any]) -> None:
        if self.field == "cache_prompt":
            body["cache_prompt"] = False
        elif self.field == "cache_salt":
            body["cache_salt"] = secrets.token_hex(16)


def hold_prompt_cache(asked: PromptCache, stack: str | None) -> PromptCacheHold:
    """The request field that gives `asked` on `stack` (see `PromptCacheHold.field`)."""
    if asked is PromptCache.SERVER:
        return PromptCacheHold(asked, None, "the server's own (prefix reuse as it is configured)")
    if stack is not None and stack.startswith("llama.cpp"):
        return PromptCacheHold(asked, "cache_prompt", "cold: cache_prompt false on every request (llama.cpp)")
    if stack == "vLLM":
        return PromptCacheHold(asked, "cache_salt", "cold: a fresh cache_salt on every request (vLLM)")
    return PromptCacheHold(
        asked,
        None,
        f"not held: {stack or 'this server'} offers no per-request switch compare-tui knows, so the server's "
        "own prefix reuse applied",
    )


def chat_body(task: Task, model_id: str, settings: RunSettings, cache: PromptCacheHold | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model_id,
        "messages": task.input.chat_messages(),
        "stream": True,
        # Without this most servers never send token counts in a stream.
        "stream_options": {"include_usage": True},
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    if task.input.tools is not None:
        body["tools"] = task.input.tools
    if task.input.tool_choice is not None:
        body["tool_choice"] = task.input.tool_choice
    if task.input.response_format is not None:
        body["response_format"] = task.input.response_format
    if cache is not None:
        cache.apply(body)
    return body


def estimated_prompt_tokens(task: Task) -> int:
    """A rough count (4 characters a token) for the spend estimate; never reported as usage."""
    return estimated_message_tokens(task.input.chat_messages(), task.input.tools)


def estimated_message_tokens(messages: Sequence[Mapping[str, Any]], tools: Any = None) -> int:
    """`estimated_prompt_tokens` of any chat messages (a judge call's, too)."""
    import json

    text = json.dumps(messages, ensure_ascii=False)
    if tools:
        text += json.dumps(tools, ensure_ascii=False)
    return len(text) // 4 + 8
