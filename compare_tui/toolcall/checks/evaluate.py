"""Decide one scenario's outcome from its raw exchange. Pure: no IO, same input, same result.

Order of judgement: a refusal the scenario wants (S17) passes; a refusal matching a known
server signature is *unsupported*; a reasoned HTTP error where the scenario says so (a
template that cannot render a tool history) is a *fail*; any other failed exchange is an
*error* (nothing measured). A 200 answer is checked: universal checks, stream rules when
streamed, then the scenario's own checks; it passes only when every check passes.
"""

from __future__ import annotations

from typing import Any

from compare_tui.engine.exchange import RawExchange
from compare_tui.scoring.result import ToolCall
from compare_tui.scoring.textual_call import ADVICE, written_as_text
from compare_tui.toolcall.checks.expectations import expectation_checks, planned
from compare_tui.toolcall.checks.stream_rules import assemble
from compare_tui.toolcall.checks.universal import (
    STREAM,
    UNIVERSAL,
    ParsedCall,
    parse_calls,
    stream_check,
    universal_checks,
)
from compare_tui.toolcall.checks.unsupported import FailureKind, classify
from compare_tui.toolcall.results.model import CallRecord, CheckFailure, CheckResult, ScenarioResult, ToolcallOutcome
from compare_tui.toolcall.scenarios.scenario import Scenario
from compare_tui.toolcall.schema.survey import survey
from compare_tui.toolcall.tools.shapes import responsible
from compare_tui.vocabulary import HTTP_STATUS_CLASSES

FORCED_STOP = (
    'a forced call ended with finish_reason "stop", not "tool_calls": a client that waits for "tool_calls" '
    "before running tools misses it"
)
"""The note a forced call's result carries when its answer ended `stop` (the table counts them)."""

_NOT_REFUSALS = {401, 403, 404, 408, 429}
"""4xx statuses that say nothing about the request's shape (auth, routing, rate)."""


def evaluate(scenario: Scenario, ex: RawExchange) -> ScenarioResult:
    """The scenario's result for the exchange `ex`."""
    base: dict[str, Any] = dict(
        scenario_id=scenario.id,
        name=scenario.name,
        category=scenario.category,
        title=scenario.title,
        status=ex.status,
        duration_ms=round(ex.duration_ms, 1),
        ttft_ms=None if ex.ttft_ms is None else round(ex.ttft_ms, 1),
        stream=scenario.stream,
    )
    if ex.error_class is not None:
        return _failed_exchange(scenario, ex, base)
    notes: list[str] = []
    if scenario.stream:
        assembled = assemble(ex.chunks, ex.done)
        message, finish = assembled.message, assembled.finish_reason
        notes += list(dict.fromkeys(assembled.notes))
    else:
        answered, finish = _message(ex.body)
        if answered is None:
            return ScenarioResult(
                outcome=ToolcallOutcome.ERROR, reason="the 200 answer holds no choices[0].message", **base
            )
        message = answered
    calls = parse_calls(message)
    if calls and finish == "stop" and _forced(scenario.tool_choice):
        notes.append(FORCED_STOP)
    schemas = {tool.wire_name: tool for tool in scenario.tools}
    checks, not_checked = universal_checks(message, calls, scenario, schemas)
    if scenario.stream:
        checks.append(stream_check(assembled.violations))
    checks += expectation_checks(scenario, message, calls)
    failed = [c.id for c in checks if not c.passed]
    outcome = ToolcallOutcome.FAIL if failed else ToolcallOutcome.PASS
    reason = (
        f"failed: {', '.join(failed)}"
        if failed
        else f"all {sum(c.applicable for c in checks)} applicable checks passed"
    )
    called = {c.name for c in calls}
    approximate = [
        f"{t.name}: pattern at {p}"
        for t in scenario.tools
        if t.wire_name in called
        for p in survey(t.parameters).approximate
    ]
    content = message.get("content") if isinstance(message.get("content"), str) else None
    as_text = None
    if failed and not calls:
        # Right intent, unparsed by this stack: said apart from "no call" (the serving setup's
        # template or tool parser, as much as the model).
        found = written_as_text(content, schemas)
        if found is not None:
            as_text = ToolCall(scenario.wire_to_name().get(found.name, found.name), found.arguments).canonical()
            reason = f"{reason} — a tool call written as text, {as_text}; {ADVICE}"
    return ScenarioResult(
        outcome=outcome,
        reason=reason,
        checks=tuple(checks),
        not_checked=tuple(not_checked),
        approximate=tuple(approximate),
        calls=tuple(_record(c, scenario) for c in calls),
        content=content,
        content_chars=len(content or ""),
        finish_reason=finish,
        notes=tuple(notes),
        written_as_text=as_text,
        **base,
    )


def _forced(tool_choice: Any) -> bool:
    """`required`, or a named function: the request left the model no choice but to call."""
    return tool_choice == "required" or isinstance(tool_choice, dict)


def scenario_checks(scenario: Scenario) -> list[tuple[str, str]]:
    """(check id, title) of every check the scenario runs, in the order results list them."""
    if scenario.expect.refused:
        return planned(scenario.expect)
    return [*UNIVERSAL, *([STREAM] if scenario.stream else []), *planned(scenario.expect)]


def _failed_exchange(scenario: Scenario, ex: RawExchange, base: dict[str, Any]) -> ScenarioResult:
    verdict = classify(ex)
    status = ex.status or 0
    if (
        scenario.expect.refused
        and ex.error_class in HTTP_STATUS_CLASSES
        and 400 <= status < 500
        and status not in _NOT_REFUSALS
        and not (verdict.kind == FailureKind.UNSUPPORTED and verdict.confirmed)
    ):
        check = CheckResult("refused", "the invalid request is refused with a 4xx", True)
        return ScenarioResult(
            outcome=ToolcallOutcome.PASS, reason=f"refused as it should be: {ex.error}", checks=(check,), **base
        )
    if verdict.kind == FailureKind.UNSUPPORTED:
        reason = verdict.reason
        culprit = responsible(scenario.tools, ex.server_message, {t.name: t.wire_name for t in scenario.tools})
        if scenario.user_tools and culprit is not None:
            reason = f"{reason}; the tool responsible: {culprit}"
        return ScenarioResult(outcome=ToolcallOutcome.UNSUPPORTED, reason=reason, **base)
    if (
        scenario.expect.http_error_is_fail
        and ex.error_class in HTTP_STATUS_CLASSES
        and status in (400, 422, 500)
        and ex.server_message
    ):
        failure = CheckFailure("", "status", f"the server could not handle the conversation: {ex.server_message[:300]}")
        check = CheckResult(
            "answered", "the request with tool results in its history is answered", False, True, (failure,)
        )
        return ScenarioResult(
            outcome=ToolcallOutcome.FAIL, reason=f"failed: answered ({ex.error})", checks=(check,), **base
        )
    return ScenarioResult(outcome=ToolcallOutcome.ERROR, reason=verdict.reason, **base)


def _message(body: Any) -> tuple[dict[str, Any] | None, str | None]:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, None
    message = choices[0].get("message")
    finish = choices[0].get("finish_reason")
    return (message if isinstance(message, dict) else None), (str(finish) if finish is not None else None)


def _record(call: ParsedCall, scenario: Scenario) -> CallRecord:
    names = scenario.wire_to_name()
    name = names.get(call.name, call.name) if isinstance(call.name, str) else str(call.name)
    arguments = call.parsed if call.parse_error is None and call.parsed is not None else call.arguments
    return CallRecord(name, call.id if isinstance(call.id, str) else None, arguments)


__all__ = ["evaluate", "scenario_checks"]
