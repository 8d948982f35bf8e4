"""The scenario-specific checks: what a scenario's `expect` table asks of the answer.

`expect` keys (data files): `calls` {min, max}; `match` [{name, args}] (each pattern met by
a distinct call, in any order); `content_not_empty`; `text_contains` [strings];
`not_repeated` [{name, args}]; `status` "refused"; `http_error_is_fail`.

Argument matchers, one per argument name:
  {"text": "paris" | [...]}   string equal after BFCL normalisation (lowercase; spaces and
                              , . / - _ * ^ removed) to one of the given values
  {"equals": v}               JSON equality (1 == 1.0; true is not 1; "2" is not 2)
  {"integer": n}              a JSON integer (2.0 counts) equal to n, never a string
  {"contains": [...]}         a string holding every given substring
  {"length": n}               an array of n items
  {"present": true}           any value     {"absent": true}   the argument is left out
"""

from __future__ import annotations

import re
from typing import Any

from compare_tui.scoring.json_values import json_equal
from compare_tui.toolcall.checks.universal import ParsedCall
from compare_tui.toolcall.results.model import CheckFailure, CheckResult
from compare_tui.toolcall.scenarios.scenario import CallPattern, Expectation, Scenario
from compare_tui.toolcall.schema.json_values import child, is_integer, pointer

_BFCL_DROP = re.compile(r"[\s,./\-_*^]")


def normalise(text: str) -> str:
    """BFCL's string normalisation: lowercase; spaces and , . / - _ * ^ removed."""
    return _BFCL_DROP.sub("", text.lower())


def planned(expect: Expectation) -> list[tuple[str, str]]:
    """(check id, title) for each scenario-specific check `expect` asks for, in order."""
    plan = []
    if expect.refused:
        plan.append(("refused", "the invalid request is refused with a 4xx"))
        return plan
    if expect.min_calls is not None or expect.max_calls is not None:
        plan.append(("call_count", f"number of calls {_bounds(expect)}"))
    if expect.match:
        plan.append(("calls_match", "the expected calls, names and argument values (any order)"))
    if expect.content_not_empty:
        plan.append(("content_not_empty", "a text answer is given"))
    if expect.text_contains:
        plan.append(
            ("text_contains", "the text uses the tool results: " + ", ".join(repr(t) for t in expect.text_contains))
        )
    if expect.not_repeated:
        plan.append(("not_repeated", "a call whose result is already in the history is not made again"))
    return plan


def describe(pattern: CallPattern) -> str:
    """A pattern in words, e.g. `get_weather(city ≈ 'paris')`; expected values only."""
    if pattern.args is None:
        return f"to {pattern.name}"
    parts = []
    for name, matcher in pattern.args.items():
        kind, want = next(iter(matcher.items()), ("?", None))
        want = want[0] if isinstance(want, list) and kind == "text" else want
        sign = {"text": "≈", "equals": "=", "integer": "=", "length": "has items:", "contains": "contains"}.get(kind)
        parts.append(f"{name} {sign} {want!r}" if sign else f"{name} {kind}")
    return f"{pattern.name}({', '.join(parts)})"


def _bounds(expect: Expectation) -> str:
    low, high = expect.min_calls, expect.max_calls
    if low == high:
        return f"exactly {low}"
    if high is None:
        return f"at least {low}"
    return f"at most {high}" if not low else f"{low} to {high}"


def expectation_checks(scenario: Scenario, message: dict[str, Any], calls: list[ParsedCall]) -> list[CheckResult]:
    """Run the checks `planned` lists on one answer (a 200 answer; refusals are the runner's)."""
    expect = scenario.expect
    wire = {tool.name: tool.wire_name for tool in scenario.tools}
    content: str = message["content"] if isinstance(message.get("content"), str) else ""
    out = []
    for check_id, title in planned(expect):
        failures: list[CheckFailure] = []
        if check_id == "refused":
            failures.append(
                CheckFailure("", "status", "the server answered 200 to a request naming a tool that was not offered")
            )
        elif check_id == "call_count":
            n = len(calls)
            if (expect.min_calls is not None and n < expect.min_calls) or (
                expect.max_calls is not None and n > expect.max_calls
            ):
                failures.append(CheckFailure("/tool_calls", "count", f"expected {_bounds(expect)} call(s), got {n}", n))
        elif check_id == "calls_match":
            failures += _match_all(expect.match, calls, wire)
        elif check_id == "content_not_empty" and not content.strip():
            failures.append(CheckFailure("/content", "content", "expected a text answer, the content is empty"))
        elif check_id == "text_contains":
            failures += [
                CheckFailure("/content", "contains", f"the text does not mention {t!r}")
                for t in expect.text_contains
                if t not in content
            ]
        elif check_id == "not_repeated":
            for pattern in expect.not_repeated:
                failures += [
                    CheckFailure(c.at, "repeated", f"calls {pattern.name} again although its result is in the history")
                    for c in calls
                    if not _pattern_failures(pattern, c, wire)
                ]
        out.append(CheckResult(check_id, title, not failures, True, tuple(failures)))
    return out


def _pattern_failures(pattern: CallPattern, call: ParsedCall, wire: dict[str, str]) -> list[CheckFailure]:
    """Why `call` does not meet `pattern` (empty when it does)."""
    expected_name = wire.get(pattern.name, pattern.name)
    if call.name != expected_name:
        return [
            CheckFailure(child(call.at, "function") + "/name", "name", f"expected a call to {pattern.name}", call.name)
        ]
    if not isinstance(call.parsed, dict):
        return [
            CheckFailure(
                pointer("tool_calls", call.index, "function", "arguments"),
                "arguments",
                "arguments are not a JSON object, so no value can be compared",
            )
        ]
    base = pointer("tool_calls", call.index, "function", "arguments")
    failures: list[CheckFailure] = []
    if pattern.args is None:
        return failures
    for name, matcher in pattern.args.items():
        present = name in call.parsed
        value = call.parsed.get(name)
        problem = _matcher_problem(matcher, present, value)
        if problem is not None:
            failures.append(CheckFailure(child(base, name), next(iter(matcher), "match"), problem, value))
    if pattern.args == {} and call.parsed:
        failures.append(CheckFailure(base, "empty", f"expected no arguments, got {len(call.parsed)} key(s)"))
    return failures


def _matcher_problem(matcher: dict[str, Any], present: bool, value: Any) -> str | None:
    if "absent" in matcher:
        return "expected this argument to be left out" if present else None
    if not present:
        return "the argument is missing"
    if "present" in matcher:
        return None
    if "text" in matcher:
        allowed = matcher["text"] if isinstance(matcher["text"], list) else [matcher["text"]]
        if not isinstance(value, str):
            return "expected a string"
        return (
            None
            if normalise(value) in {normalise(a) for a in allowed}
            else f"expected {allowed[0]!r} (BFCL normalisation)"
        )
    if "equals" in matcher:
        return None if json_equal(value, matcher["equals"]) else f"expected {matcher['equals']!r}"
    if "integer" in matcher:
        if not is_integer(value):
            return f"expected the integer {matcher['integer']}, got a {type(value).__name__}"
        return None if value == matcher["integer"] else f"expected {matcher['integer']}"
    if "contains" in matcher:
        if not isinstance(value, str):
            return "expected a string"
        missing = [part for part in matcher["contains"] if part not in value]
        return None if not missing else f"expected it to contain {missing[0]!r} (characters must survive escaping)"
    if "length" in matcher:
        if not isinstance(value, list):
            return "expected an array (a real JSON array, not a string holding one)"
        return None if len(value) == matcher["length"] else f"expected {matcher['length']} items"
    return f"unknown matcher {sorted(matcher)}"


def _match_all(patterns: tuple[CallPattern, ...], calls: list[ParsedCall], wire: dict[str, str]) -> list[CheckFailure]:
    """Assign each pattern a distinct matching call (bipartite matching, order-free); report
    the closest call's mismatches for every pattern left without one."""
    fits = [[not _pattern_failures(p, c, wire) for c in calls] for p in patterns]
    owner: dict[int, int] = {}

    def augment(p: int, seen: set[int]) -> bool:
        for c, ok in enumerate(fits[p]):
            if ok and c not in seen:
                seen.add(c)
                if c not in owner or augment(owner[c], seen):
                    owner[c] = p
                    return True
        return False

    matched = {p for p in range(len(patterns)) if augment(p, set())}
    failures: list[CheckFailure] = []
    for p, pattern in enumerate(patterns):
        if p in matched:
            continue
        same_name = [c for c in calls if c.name == wire.get(pattern.name, pattern.name) and c.index not in owner]
        if not same_name:
            failures.append(CheckFailure("/tool_calls", "missing", f"no call {describe(pattern)}"))
        else:
            closest = min((_pattern_failures(pattern, c, wire) for c in same_name), key=len)
            failures += closest
    return failures
