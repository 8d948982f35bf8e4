"""One judge call: send the prompt to the judge's endpoint (with the engine's client and retry
policy) and return its reply text, usage and timing, or why there is none. Never raises for
what the server or the network does."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compare_tui.catalogue import ModelEntry
from compare_tui.endpoint.client import ChatClient
from compare_tui.engine.exchange import Exchange, stream_chat
from compare_tui.engine.retry import RetryPolicy, with_retries
from compare_tui.judge.prompt.templates import JudgeMessage, ResponseFormat
from compare_tui.vocabulary import JudgeErrorClass, JudgeFailure


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """How the judge is asked. Temperature 0 so that a rerun asks the same question the same way."""

    max_tokens: int = 256
    """Room for a sentence or two of reasons and the verdict line."""
    temperature: float = 0.0
    timeout_s: float = 120.0
    concurrency: int = 4


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """The judge's reply text, or `error_class`/`error` when no reply arrived."""

    text: str = ""
    error_class: JudgeErrorClass | None = None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    e2e_ms: float | None = None
    retries: int = 0
    finish_reason: str | None = None
    """Why the server stopped (`length`: the reply hit max_tokens), when it said."""


def judge_body(
    entry: ModelEntry,
    messages: list[JudgeMessage],
    settings: JudgeSettings,
    response_format: ResponseFormat | None = None,
) -> dict[str, Any]:
    """The chat-completion request body of one judge call."""
    body = {
        "model": entry.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    if response_format is not None:
        body["response_format"] = response_format
    return body


async def ask_judge(
    client: ChatClient,
    entry: ModelEntry,
    headers: dict[str, str],
    messages: list[JudgeMessage],
    settings: JudgeSettings,
    *,
    retry: RetryPolicy | None = None,
    rng: random.Random | None = None,
    on_exchange: Callable[[Exchange], None] | None = None,
    response_format: ResponseFormat | None = None,
) -> JudgeReply:
    """Ask the judge once (retrying transport failures, 429 and 5xx by the policy)."""
    body = judge_body(entry, messages, settings, response_format)

    async def send() -> Exchange:
        return await stream_chat(client, entry.endpoint, body, headers=headers, timeout_s=settings.timeout_s)

    exchange, retries = await with_retries(send, retry or RetryPolicy(), on_exchange=on_exchange, rng=rng)
    acc = exchange.acc
    prompt, completion = acc.tokens() if acc is not None else (None, None)
    e2e = round(exchange.duration_ms, 3)
    if exchange.error_class is not None or acc is None:
        return JudgeReply(
            "",
            exchange.error_class or JudgeFailure.NO_ANSWER,
            exchange.error or "no answer",
            prompt,
            completion,
            e2e,
            retries,
        )
    answer = acc.answer()
    # A judge that answers with a tool call has not given a verdict; its text is all we read.
    return JudgeReply(answer.text, None, None, prompt, completion, e2e, retries, acc.finish_reason)
