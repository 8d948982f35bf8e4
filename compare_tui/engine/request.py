"""The chat-completion request body for one task under one run's settings."""

from __future__ import annotations

from typing import Any

from compare_tui.engine.settings import RunSettings
from compare_tui.goldset.models import Task


def chat_body(task: Task, model_id: str, settings: RunSettings) -> dict[str, Any]:
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
    return body


def estimated_prompt_tokens(task: Task) -> int:
    """A rough count (4 characters a token) for the spend estimate; never reported as usage."""
    import json

    text = json.dumps(task.input.chat_messages(), ensure_ascii=False)
    if task.input.tools:
        text += json.dumps(task.input.tools, ensure_ascii=False)
    return len(text) // 4 + 8
