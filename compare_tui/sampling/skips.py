"""Why log lines (or, for `--whole-runs`, whole agent runs) were not used: counts per reason
and the first few places, never contents."""

from __future__ import annotations

from collections import Counter
from typing import TypedDict

FIRST_SHOWN = 5
"""How many `file:line` places each reason keeps, to find examples without a flood."""

REASONS: dict[str, str] = {
    "blank": "blank line",
    "not_utf8": "not UTF-8 text",
    "bad_json": "not valid JSON",
    "not_object": "JSON, but not an object",
    "unknown_shape": "not a recognised record shape (plain request/response, OpenAI batch, LiteLLM-style)",
    "failed_request": "the logged request failed (error, non-200 status or content filter)",
    "no_messages": "the request has no messages",
    "bad_messages": "a message is not a chat message (role, content, tool calls)",
    "no_user_message": "the request has no user message",
    "unsupported_content": "a message holds images, audio or files (tasks replay text only)",
    "legacy_functions": "legacy `functions`/`function_call` format",
    "bad_tools": "tools that are not function tools",
    "no_reply": "no assistant reply in the response",
    "empty_reply": "the reply is empty",
    "truncated_reply": "the reply was cut off (finish_reason `length`)",
    "several_tool_calls": "the reply makes several tool calls (a task expects one)",
    "bad_tool_call": "the reply's tool call has no name or its arguments are not a JSON object",
    "bad_timestamp": "no readable timestamp",
    "wrong_model": "the logged model is not one given with --model",
    "missing_tag": "none of the --tag tags",
    "outside_window": "outside the sampling window",
    "batch_output_without_request": "batch output whose input line (same custom_id) was not among the logs",
    "batch_request_without_output": "batch input line with no output line (same custom_id)",
    "batch_duplicate_id": "a custom_id already seen (the first line is used)",
    # Whole-run sampling (`--whole-runs`): counted once per run, at the run's first line.
    "run_incomplete": "an agent run with a step missing, or that does not end in a final answer (text)",
    "run_interleaved": "an agent run whose steps disagree: two different records of one step, or a step's history that is not the previous step's history and action",
    "run_missing_tool_result": "an agent run where a tool call is not followed by its tool result",
    "run_tool_id_mismatch": "an agent run where a tool result's tool_call_id does not match its tool call's id",
    "run_without_tool_calls": "a conversation with no tool call: not an agent run",
    "run_outside_window": "an agent run not wholly inside the sampling window",
}


class SkipEntry(TypedDict):
    """One reason in `sample.json`'s `skipped`: how many, what it means, the first places."""

    count: int
    meaning: str
    first: list[str]


class SkipReport:
    """Counts skipped lines per reason, keeping the first `FIRST_SHOWN` places of each."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.first: dict[str, list[str]] = {}

    def add(self, reason: str, place: str) -> None:
        if reason not in REASONS:
            raise KeyError(f"unknown skip reason {reason!r}")
        self.counts[reason] += 1
        shown = self.first.setdefault(reason, [])
        if len(shown) < FIRST_SHOWN:
            shown.append(place)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, SkipEntry]:
        """`{reason: {"count", "meaning", "first"}}`, reasons in `REASONS` order."""
        return {
            reason: {"count": self.counts[reason], "meaning": REASONS[reason], "first": self.first[reason]}
            for reason in REASONS
            if self.counts[reason]
        }
