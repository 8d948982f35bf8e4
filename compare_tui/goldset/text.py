"""How a task reads for people, in the TUI and in a published bundle: the input (each message with
its role, tool calls, the tools offered) and the expected outcome (a tool call in canonical
form). JSON is written with sorted keys, so the same task always reads the same."""

from __future__ import annotations

import json
from typing import Any

from compare_tui.goldset.models import Task


def input_text(task: Task) -> str:
    lines = []
    for message in task.input.chat_messages():
        content = message.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        lines.append(f"[{message['role']}] {content}")
        lines += [
            f"  {json.dumps(call, ensure_ascii=False, sort_keys=True)}" for call in message.get("tool_calls") or ()
        ]
    if task.input.tools:
        names = [t.get("function", {}).get("name", "?") for t in task.input.tools]
        lines.append(
            f"tools offered: {', '.join(names)}"
            + (f" (tool_choice {task.input.tool_choice})" if task.input.tool_choice else "")
        )
    if task.input.response_format:
        lines.append(f"response_format: {json.dumps(task.input.response_format, ensure_ascii=False, sort_keys=True)}")
    return "\n".join(lines)


def _call_text(name: str, arguments: object) -> str:
    """A tool call in canonical form: `[tool call] name({"key":value})`."""
    args = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"[tool call] {name}({args})"


def expected_text(task: Task) -> str:
    expected = task.expected
    if expected.tool_call is not None:
        return _call_text(expected.tool_call.name, expected.tool_call.arguments)
    if expected.text is not None:
        return expected.text
    return json.dumps(expected.json_, indent=2, sort_keys=True, ensure_ascii=False)


def _logged_call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
    except ValueError:
        arguments = raw  # shown as the string it was logged as
    return _call_text(str(function.get("name", "?")), arguments)


def run_context_text(task: Task) -> str | None:
    """For a step of a recorded agent run (`trace`): `step 2 of 3 of run R`, then each earlier
    step as the input records it (its action, tool calls in canonical form, and the tool
    results that came back). None for a task without a trace."""
    if task.trace is None:
        return None
    trace = task.trace
    lines = [f"step {trace.step} of {trace.of} of run {trace.run}"]
    step = 0
    for message in task.input.chat_messages():
        if message["role"] == "assistant":
            step += 1
            calls = message.get("tool_calls") or ()
            content = message.get("content")
            action = (
                "; ".join(_logged_call_text(c) for c in calls)
                if calls
                else (content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
            )
            lines.append(f"step {step}: {action}")
        elif message["role"] == "tool" and step:
            content = message.get("content")
            lines.append(f"  → {content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)}")
    if step == 0:
        lines.append("(the first step: no earlier action)")
    return "\n".join(lines)
