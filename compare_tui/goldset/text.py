"""How a task reads for people, in the TUI and in a published bundle: the input (each message with
its role, tool calls, the tools offered) and the expected outcome (a tool call in canonical
form). JSON is written with sorted keys, so the same task always reads the same."""

from __future__ import annotations

import json

from compare_tui.goldset.models import Task


def input_text(task: Task) -> str:
    lines = []
    for message in task.input.chat_messages():
        content = message.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        lines.append(f"[{message['role']}] {content}")
        lines += [f"  {json.dumps(call, ensure_ascii=False, sort_keys=True)}" for call in message.get("tool_calls") or ()]
    if task.input.tools:
        names = [t.get("function", {}).get("name", "?") for t in task.input.tools]
        lines.append(f"tools offered: {', '.join(names)}" + (f" (tool_choice {task.input.tool_choice})" if task.input.tool_choice else ""))
    if task.input.response_format:
        lines.append(f"response_format: {json.dumps(task.input.response_format, ensure_ascii=False, sort_keys=True)}")
    return "\n".join(lines)


def expected_text(task: Task) -> str:
    expected = task.expected
    if expected.tool_call is not None:
        args = json.dumps(expected.tool_call.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return f"[tool call] {expected.tool_call.name}({args})"
    if expected.text is not None:
        return expected.text
    return json.dumps(expected.json_, indent=2, sort_keys=True, ensure_ascii=False)
