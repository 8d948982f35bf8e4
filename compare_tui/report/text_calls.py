"""Tool calls written as text that the server did not parse: a serving-stack result.

A model that writes its call as text (a ```json block, a bare JSON object) instead of one the
server parses into `tool_calls` fails a `tool_call` task, yet the failure says as much about the
chat template and the server's tool parser as about the model. These figures name that at the
top of the report (a caveat per model, a note on the decision line), not only in each task's
detail. Pure; computed once, rendered by every surface.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from compare_tui.vocabulary import Outcome, TextCall

SERVING_STACK = "a serving-stack result — chat template / tool parser — not the model's ability"


class _Block(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def human(self) -> bool: ...
    @property
    def text_call(self) -> TextCall | None: ...


@dataclass(frozen=True, slots=True)
class TextCalls:
    """One model's tasks decided by a tool call written as text."""

    failed: int = 0
    """Scored tasks that failed."""
    as_text: int = 0
    """Of the failed tasks, those whose answer was a tool call written as text."""
    right: int = 0
    """Of those, the calls with the expected name and arguments."""
    unknown: int = 0
    """Of those, the calls whose stored data cannot tell whether they were right."""
    passed_as_text: int = 0
    """Passes by a call written as text (the scorer's opt-in `accept_text_calls`)."""


def text_calls(blocks: Iterable[_Block]) -> TextCalls:
    """Count a model's blocks by their deciding attempt's `text_call`."""
    failed = as_text = right = unknown = passed = 0
    for block in blocks:
        if block.human:
            continue
        if block.status == Outcome.FAIL:
            failed += 1
            if block.text_call in (TextCall.RIGHT, TextCall.WRONG, TextCall.UNKNOWN):
                as_text += 1
                right += block.text_call == TextCall.RIGHT
                unknown += block.text_call == TextCall.UNKNOWN
        elif block.status == Outcome.PASS and block.text_call == TextCall.PASSED:
            passed += 1
    return TextCalls(failed, as_text, right, unknown, passed)


def caveat_texts(label: str, figures: TextCalls) -> list[tuple[str, str]]:
    """(code, text) of the caveats for one model: none when no task was decided by a text call."""
    out = []
    if figures.as_text:
        out.append(
            (
                "text_calls",
                f"{label}: {figures.as_text} of {figures.failed} failed tasks are tool calls written as "
                "text that this server did not parse (name and arguments right in "
                f"{figures.right} of them{f'; not told for {figures.unknown}' if figures.unknown else ''}): "
                f"{SERVING_STACK}.",
            )
        )
    if figures.passed_as_text:
        out.append(
            (
                "passed_as_text",
                f"{label}: {figures.passed_as_text} passed "
                f"{'task is a tool call' if figures.passed_as_text == 1 else 'tasks are tool calls'} "
                "written as text that this server did not parse, accepted by the scorer's "
                "accept_text_calls (the ✓ as text column): the model called right, its serving stack did not.",
            )
        )
    return out


def decision_note(label: str, role: str, figures: TextCalls) -> str | None:
    """The sentence the decision line adds for the baseline or a candidate (`role`)."""
    if not figures.as_text:
        return None
    return (
        f"Note: {figures.as_text} of the {figures.failed} failed tasks of {role} {label} are tool calls "
        "written as text that the server did not parse (a serving-stack result, not the model's ability)."
    )
