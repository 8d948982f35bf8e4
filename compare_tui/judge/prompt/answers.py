"""What a judge sees of a task and of a stored answer, rendered the same way on both sides.

The judged answer of a task is its last attempt that produced an answer (the engine stops at
a pass, so that is the passing attempt when there is one). Reasoning traces are removed and
tool calls are written canonically (`[tool call] name(args)`) for every answer and for the
expected outcome, so that formatting differences between servers cannot decide a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from compare_tui.goldset.models import Task
from compare_tui.judge.prompt.traces import strip_reasoning
from compare_tui.scoring.result import Answer, ToolCall
from compare_tui.store.records import AttemptRecord
from compare_tui.vocabulary import Outcome, task_outcome

NO_ANSWER = "(empty answer)"


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """One task of one run as a judge and a reader see it."""

    task_id: str
    outcome: Outcome
    """The executable scorer's task outcome (pass / fail / review / error), no human verdicts."""
    text: str | None
    """The answer as the judge reads it; None when no attempt produced an answer."""
    detail: str = ""
    """The scorer's one-line reason for the judged attempt (or the error)."""
    attempt: int | None = None


def judged_answers(attempts: Iterable[AttemptRecord]) -> dict[str, StoredAnswer]:
    """Each task's judged answer, keyed by task id (in task id order)."""
    by_task: dict[str, list[AttemptRecord]] = {}
    for attempt in attempts:
        by_task.setdefault(attempt.task_id, []).append(attempt)
    out: dict[str, StoredAnswer] = {}
    for task_id in sorted(by_task):
        tried = sorted(by_task[task_id], key=lambda a: a.attempt)
        outcome = task_outcome(a.outcome for a in tried)
        answered = [a for a in tried if a.outcome != Outcome.ERROR]
        if not answered:
            last = tried[-1]
            out[task_id] = StoredAnswer(task_id, outcome, None, last.error or last.score_detail, last.attempt)
            continue
        chosen = answered[-1]
        out[task_id] = StoredAnswer(
            task_id, outcome, render_answer(chosen.answer()), chosen.score_detail, chosen.attempt
        )
    return out


def render_answer(answer: Answer) -> str:
    """The answer's text without reasoning traces, then each tool call in canonical form."""
    parts = [text] if (text := strip_reasoning(answer.text)) else []
    parts.extend(call.canonical() for call in answer.tool_calls)
    return "\n".join(parts) or NO_ANSWER


def task_text(task: Task) -> str:
    """The request as a judge reads it: each message with its role, and the tools offered."""
    lines = []
    for message in task.input.chat_messages():
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        lines.append(f"[{message['role']}] {content or ''}".rstrip())
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            lines.append("  " + ToolCall(str(function.get("name", "")), str(function.get("arguments", ""))).canonical())
    if task.input.tools:
        names = [str((t.get("function") or {}).get("name", "?")) for t in task.input.tools]
        lines.append(f"[tools offered] {', '.join(names)}")
    return "\n".join(lines)


def expected_text(task: Task) -> str:
    """The expected outcome (the user's baseline), tool calls in canonical form."""
    expected = task.expected
    if expected.tool_call is not None:
        return ToolCall(expected.tool_call.name, json.dumps(expected.tool_call.arguments)).canonical()
    if expected.text is not None:
        return expected.text
    return json.dumps(expected.json_, sort_keys=True, ensure_ascii=False)
