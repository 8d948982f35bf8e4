"""A sampled turn → a golden-set task (as the JSON a task file holds), scrubbed.

Callers can rely on:
- the task's input is the logged conversation up to the turn (same tools, tool_choice and
  response_format); its expected outcome is the logged reply: `tool_call` when the reply
  was a tool call, else `text`;
- the scorer is a match-reference scorer chosen per turn: `tool_call` (match `exact`, or as
  asked) for a tool call; for text, `human` unless the user asked for `exact` (whitespace-normalised) or
  `regex` (the logged reply escaped, whitespace-tolerant, full match);
- every string (messages, tool definitions, tool-call arguments, expected outcome, tags) has
  passed through the `Redactor` before the task is returned; a regex scorer is built from
  the already-redacted text;
- the result validates as a `goldset.Task`.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from compare_tui.goldset.models import Task

from .records import LoggedTurn
from .redaction import Redactor
from .selection import PARTS

TEXT_SCORERS = ("human", "exact", "regex")
TOOL_MATCHES = ("exact", "subset")
HUMAN_INSTRUCTIONS = (
    "Does the reply do the same job as the logged reply in `expected.text`? "
    "The logged reply is the production baseline, not ground truth."
)


class StepTrace(TypedDict):
    """A whole run's step as its task file carries it (`trace`): which run, which step of how many."""

    run: str
    step: int
    of: int


def task_id(conversation_hash: int, position: int) -> str:
    """Stable across seeds and sample sizes: the same turn always gets the same id."""
    return f"c{conversation_hash:016x}"[:13] + f"-t{position:04d}"


def _messages(turn: LoggedTurn, redactor: Redactor) -> list[dict[str, Any]]:
    out = []
    for message in turn.request.messages:
        scrubbed = {k: redactor.value(v) for k, v in message.items() if k != "tool_calls"}
        if "tool_calls" in message:
            scrubbed["tool_calls"] = [
                {
                    "id": redactor.text(call["id"]),
                    "type": "function",
                    "function": {
                        "name": redactor.text(call["function"]["name"]),
                        # Arguments are JSON in a string: scrub them as JSON, not as text.
                        "arguments": redactor.json_text(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        out.append(scrubbed)
    return out


def _text_scorer(kind: str, text: str) -> dict[str, Any]:
    if kind == "exact":
        return {"kind": "exact", "normalize": ["whitespace"]}
    if kind == "regex":
        pieces = [re.escape(piece) for piece in text.split()]
        return {
            "kind": "regex",
            "pattern": r"\s*" + r"\s+".join(pieces) + r"\s*",
            "mode": "fullmatch",
            "flags": ["DOTALL"],
        }
    return {"kind": "human", "instructions": HUMAN_INSTRUCTIONS}


def build_task(
    turn: LoggedTurn,
    conversation_hash: int,
    part: int | None,
    redactor: Redactor,
    text_scorer: str = "human",
    *,
    tool_match: str = "exact",
    trace: StepTrace | None = None,
) -> dict[str, Any]:
    """The task file's JSON for `turn`, sampled from third `part` of its conversation (None:
    a step of a whole run, which then carries `trace`). `tool_match` is the `tool_call`
    scorer's argument match (`exact` or `subset`)."""
    if text_scorer not in TEXT_SCORERS:
        raise ValueError(f"text scorer must be one of {TEXT_SCORERS}")
    if tool_match not in TOOL_MATCHES:
        raise ValueError(f"tool match must be one of {TOOL_MATCHES}")
    request = turn.request
    task_input: dict[str, Any] = {"messages": _messages(turn, redactor)}
    if request.tools is not None:
        task_input["tools"] = redactor.value(request.tools)
    if request.tool_choice is not None:
        task_input["tool_choice"] = redactor.value(request.tool_choice)
    if request.response_format is not None:
        task_input["response_format"] = redactor.value(request.response_format)
    reply = turn.reply
    if reply.tool_name is not None:
        expected: dict[str, Any] = {
            "tool_call": {
                "name": redactor.text(reply.tool_name),
                "arguments": redactor.value(reply.tool_arguments or {}),
            }
        }
        scorer: dict[str, Any] = {"kind": "tool_call", "match": tool_match}
        kind = "tool_call"
    else:
        text = redactor.text(reply.text or "")
        expected = {"text": text}
        scorer = _text_scorer(text_scorer, text)
        kind = "text"
    tags = [redactor.text(t) for t in turn.tags]
    tags = sorted(set(tags)) + ([f"part:{PARTS[part]}"] if part is not None else []) + [f"reply:{kind}"]
    task = {
        "id": task_id(conversation_hash, turn.position),
        "tags": tags,
        "input": task_input,
        "expected": expected,
        "scorer": scorer,
    }
    if trace is not None:
        task["trace"] = trace
    Task.model_validate(task)  # a sampled set must load; fail here, not in the user's run
    return task
