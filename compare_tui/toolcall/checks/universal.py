"""The universal checks (reference notes U1-U7 and the stream rules), run on every answer.

Each takes the answer message (`choices[0].message`, or the message assembled from the
stream) and returns a `CheckResult` whose failures carry JSON pointers into that message.
Argument pointers continue inside the parsed arguments, e.g.
`/tool_calls/0/function/arguments/city`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compare_tui.toolcall.checks.stream_rules import StreamViolation
from compare_tui.toolcall.results.model import CheckFailure, CheckResult
from compare_tui.toolcall.scenarios.scenario import Scenario, ToolSpec
from compare_tui.toolcall.schema.check import check_value
from compare_tui.toolcall.schema.json_values import (
    JsonLimitError,
    child,
    json_type,
    loads_bounded,
    pointer,
    resolve_pointer,
)

UNIVERSAL = (
    ("type_function", 'U1 each call has type "function"'),
    ("arguments_string", "U2 arguments is a JSON string"),
    ("arguments_object", "U3 arguments parse to a JSON object"),
    ("name_offered", "U4 the name is one that was offered, byte for byte"),
    ("ids_unique", "U5 every call has an id, and ids are unique"),
    ("arguments_schema", "U6 arguments satisfy the tool's schema (the checked subset)"),
    ("no_markup_in_content", "U7 no raw tool-call markup in the content when no call was parsed"),
)
STREAM = ("stream_assembly", "streamed deltas assemble by the rules (reference notes c)")

# Raw call syntax of common chat templates; seen in `content` when a server did not parse it.
_MARKUP = re.compile(
    r"<tool_call>|</tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<function=|<\|tool_call\|>|<tool_calls>"
    r"|<\|tool▁calls?▁begin\|>|<start_function_call>|✿FUNCTION✿|<\|plugin\|>"
    r"|\{\s*\"name\"\s*:\s*\"[^\"]{1,64}\"\s*,\s*\"(?:arguments|parameters)\"\s*:"
    r"|\{\s*\"(?:arguments|parameters)\"\s*:[^{}]{0,200}\{[^{}]*\}\s*,\s*\"name\"\s*:"
)


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One call from the message, with its arguments decoded when they could be."""

    index: int
    raw: Any
    name: Any
    id: Any
    arguments: Any
    parsed: Any = None
    parse_error: str | None = None

    @property
    def at(self) -> str:
        return pointer("tool_calls", self.index)


def parse_calls(message: dict[str, Any]) -> list[ParsedCall]:
    """The message's tool calls; arguments parsed strictly (no NaN), depth-bounded."""
    raw_calls = message.get("tool_calls")
    out = []
    for index, raw in enumerate(raw_calls if isinstance(raw_calls, list) else ()):
        function = raw.get("function") if isinstance(raw, dict) else None
        function = function if isinstance(function, dict) else {}
        arguments = function.get("arguments")
        parsed, error = None, None
        if isinstance(arguments, str):
            try:
                parsed = loads_bounded(arguments)
            except JsonLimitError as exc:
                error = str(exc)
        out.append(
            ParsedCall(
                index,
                raw,
                function.get("name"),
                raw.get("id") if isinstance(raw, dict) else None,
                arguments,
                parsed,
                error,
            )
        )
    return out


def universal_checks(
    message: dict[str, Any], calls: list[ParsedCall], scenario: Scenario, schemas: dict[str, ToolSpec]
) -> tuple[list[CheckResult], list[str]]:
    """U1-U7 for one answer, and the not-checked schema keywords met on the way."""
    has = bool(calls)
    u1 = [
        CheckFailure(child(c.at, "type"), "type", 'expected "function"', _typ(c.raw))
        for c in calls
        if not isinstance(c.raw, dict) or c.raw.get("type") != "function"
    ]
    u2 = [
        CheckFailure(
            pointer("tool_calls", c.index, "function", "arguments"),
            "type",
            f"expected a JSON string, got {_kind(c.arguments)}",
            c.arguments,
        )
        for c in calls
        if not isinstance(c.arguments, str)
    ]
    u3 = []
    for c in calls:
        where = pointer("tool_calls", c.index, "function", "arguments")
        if isinstance(c.arguments, str):
            if c.parse_error:
                u3.append(
                    CheckFailure(where, "json", f"arguments are not one JSON value: {c.parse_error}", c.arguments)
                )
            elif not isinstance(c.parsed, dict):
                u3.append(
                    CheckFailure(where, "type", f"arguments parse to {json_type(c.parsed)}, not an object", c.arguments)
                )
    offered = [tool.wire_name for tool in scenario.tools]
    shown = ", ".join(t.name if t.name == t.wire_name else f"{t.name} (sent as {t.wire_name})" for t in scenario.tools)
    u4 = [
        CheckFailure(
            child(c.at, "function") + "/name",
            "name",
            f"{c.name!r} was not offered (offered: {shown or 'none'})",
            c.name,
        )
        for c in calls
        if c.name not in offered
    ]
    ids = [c.id for c in calls]
    u5 = [
        CheckFailure(child(c.at, "id"), "id", "missing or empty id")
        for c in calls
        if not isinstance(c.id, str) or not c.id
    ]
    u5 += [
        CheckFailure(child(c.at, "id"), "id", "the same id as an earlier call in this answer")
        for c in calls
        if isinstance(c.id, str) and c.id and ids.index(c.id) != c.index
    ]
    u6, not_checked = _schema_failures(calls, schemas)
    content = message.get("content")
    u7 = []
    if not has and isinstance(content, str) and (found := _MARKUP.search(content)):
        u7.append(
            CheckFailure(
                pointer("content"),
                "markup",
                f"raw tool-call markup at character {found.start()}: "
                "the server did not parse the call (is a tool-call parser / chat template configured?)",
            )
        )
    failures = (u1, u2, u3, u4, u5, u6, u7)
    results = [
        CheckResult(cid, title, not f, has if cid != "no_markup_in_content" else not has, tuple(f))
        for (cid, title), f in zip(UNIVERSAL, failures)
    ]
    return results, not_checked


def _schema_failures(calls: list[ParsedCall], schemas: dict[str, ToolSpec]) -> tuple[list[CheckFailure], list[str]]:
    failures: list[CheckFailure] = []
    not_checked: list[str] = []
    for c in calls:
        tool = schemas.get(c.name) if isinstance(c.name, str) else None
        if tool is None or not isinstance(c.parsed, dict):
            continue  # U3/U4 already failed this call
        report = check_value(tool.parameters, c.parsed)
        base = pointer("tool_calls", c.index, "function", "arguments")
        failures += [
            CheckFailure(
                base + f.pointer,
                f.keyword,
                f"{f.message} (schema {f.schema_pointer or '/'})",
                _value_at(c.parsed, f.pointer),
            )
            for f in report.failures
        ]
        not_checked += [f"{tool.name}: {n}" for n in report.not_checked]
    return failures, list(dict.fromkeys(not_checked))


def stream_check(violations: list[StreamViolation]) -> CheckResult:
    """The assembly rules as one check; each broken rule is a failure at the chunk it broke in."""
    failures = tuple(CheckFailure(v.pointer, v.rule, v.message) for v in violations)
    return CheckResult(STREAM[0], STREAM[1], not failures, True, failures)


def _value_at(document: Any, where: str) -> Any:
    found, value = resolve_pointer(document, where)
    return value if found else None


def _typ(raw: Any) -> Any:
    return raw.get("type") if isinstance(raw, dict) else None


def _kind(value: Any) -> str:
    return (
        "nothing"
        if value is None
        else {"object": "an object", "array": "an array"}.get(json_type(value), f"a {json_type(value)}")
    )
