"""The `tool_call` scorer: did the model call the expected tool with the expected arguments?

Pure. Calls appear in details in canonical form, `[tool call] name(args)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compare_tui.goldset.models import Task, ToolCallScorer
from compare_tui.scoring.json_values import first_difference
from compare_tui.scoring.result import Answer, Outcome, ScoreResult, ToolCall
from compare_tui.scoring.textual_call import ADVICE, written_as_text

_CALLS_SHOWN = 3
PASSED_AS_TEXT = "passed as text"
"""How the detail of a pass by a call written as text starts (`accept_text_calls`)."""


def _rendered(calls: tuple[ToolCall, ...]) -> str:
    shown = "; ".join(call.canonical() for call in calls[:_CALLS_SHOWN])
    return shown + (f" (+{len(calls) - _CALLS_SHOWN} more)" if len(calls) > _CALLS_SHOWN else "")


def expected_call(task: Task, spec: ToolCallScorer) -> tuple[str | None, dict[str, Any] | None]:
    """The expected tool name and arguments: each from the spec when set there, else from
    `task.expected.tool_call`. Arguments None means only the name is checked."""
    from_task = task.expected.tool_call
    name = spec.name if spec.name is not None else (from_task.name if from_task else None)
    arguments = spec.arguments if spec.arguments is not None else (from_task.arguments if from_task else None)
    return name, arguments


def argument_mismatch(call: ToolCall, expected: dict[str, Any] | None, match: str) -> str | None:
    """Why `call`'s arguments do not match `expected`, or None when they do.

    `exact`: same key set, values equal type-aware (1 == 1.0, true != 1, "1" != 1, nested
    objects and arrays compared recursively). `subset`: the expected keys are present with
    equal values; extra keys are allowed. Arguments that are not a JSON object never match.
    """
    try:
        actual = call.parsed_arguments()
    except ValueError as exc:
        return f"arguments are not valid JSON ({exc})"
    if expected is None:
        return None
    if not isinstance(actual, dict):
        return f"arguments are a JSON {type(actual).__name__}, not an object"
    return first_difference(actual, expected, subset=match == "subset")


_CALL_PREFIX = "[tool call] "


def stored_text_call_right(data: Mapping[str, Any]) -> bool | None:
    """Whether a stored call written as text had the expected name and arguments: as recorded
    (`text_call_right`), else worked out from the stored canonical call and expectation (runs
    scored before that was recorded); None when it cannot be told."""
    if "text_call_right" in data:
        return bool(data["text_call_right"])
    written, name = data.get("written_as_text"), data.get("expected_name")
    if not isinstance(written, str) or not written.startswith(_CALL_PREFIX) or not isinstance(name, str):
        return None
    called, _, rest = written[len(_CALL_PREFIX) :].partition("(")
    if not rest.endswith(")"):
        return None
    expected = data.get("expected_arguments")
    match = str(data.get("match", "exact"))
    return called == name and argument_mismatch(ToolCall(called, rest[:-1]), expected, match) is None


def score_tool_call(task: Task, spec: ToolCallScorer, answer: Answer) -> ScoreResult:
    """Pass when some call has the expected name and matching arguments (any one is enough).

    With `no_tool_call`, pass exactly when the answer made no call. Error when no expected
    tool name can be found in the spec or in `expected.tool_call`.
    """
    calls = answer.tool_calls
    data: dict[str, Any] = {"calls": [call.canonical() for call in calls]}
    if spec.no_tool_call:
        if not calls:
            return ScoreResult(Outcome.PASS, "no tool call, as expected", data)
        return ScoreResult(Outcome.FAIL, f"expected no tool call, got {_rendered(calls)}", data)
    name, arguments = expected_call(task, spec)
    if name is None:
        return ScoreResult(
            Outcome.ERROR, f"task {task.id}: no expected tool name (set `scorer.name` or `expected.tool_call`)"
        )
    data.update(expected_name=name, expected_arguments=arguments, match=spec.match)
    if not calls:
        declared = [t.get("function", {}).get("name") for t in task.input.tools or [] if isinstance(t, dict)]
        as_text = written_as_text(answer.text, [n for n in declared if n] or [name])
        if as_text is not None:
            right = as_text.name == name and argument_mismatch(as_text, arguments, spec.match) is None
            data.update(written_as_text=as_text.canonical(), text_call_right=right)
            if right and spec.accept_text_calls:
                data["passed_as_text"] = True
                return ScoreResult(
                    Outcome.PASS,
                    f"{PASSED_AS_TEXT}: {as_text.canonical()} (accept_text_calls; the server did not parse it)",
                    data,
                )
            return ScoreResult(
                Outcome.FAIL,
                f"expected a call to {name}, got a tool call written as text ({as_text.canonical()}): {ADVICE}",
                data,
            )
        return ScoreResult(Outcome.FAIL, f"expected a call to {name}, got no tool call", data)
    named = [call for call in calls if call.name == name]
    if not named:
        return ScoreResult(Outcome.FAIL, f"expected a call to {name}, got {_rendered(calls)}", data)
    reasons = []
    for call in named:
        reason = argument_mismatch(call, arguments, spec.match)
        if reason is None:
            return ScoreResult(Outcome.PASS, f"called {call.canonical()}", data)
        reasons.append(reason)
    data["mismatches"] = reasons
    return ScoreResult(Outcome.FAIL, f"{named[0].canonical()}: {reasons[0]} ({spec.match} match)", data)
