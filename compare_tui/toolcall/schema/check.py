"""Check a parsed value against a JSON Schema subset, with JSON-pointer paths on failure.

The subset and its edge cases follow the reference notes (d): `type` (an integer may be
`2.0`; a boolean is never a number), `enum`, `const`, object, array, string and numeric
bounds, `multipleOf` (exact, via `Decimal`), `pattern` (Python `re`: approximate),
`anyOf`/`oneOf`/`allOf` and local `$ref` with a cycle guard. Anything else is listed by
`survey` as not checked, and the report carries that list, so a pass never claims
more validation than was done. Never raises, whatever JSON it is given.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from compare_tui.scoring.json_values import json_equal
from compare_tui.toolcall.schema.json_values import child, is_integer, is_number, json_type, resolve_pointer
from compare_tui.toolcall.schema.survey import NotChecked, keyword_problem, local_ref_target, survey

MAX_STEPS = 50_000
"""Schema evaluations per check at most; past it the rest is reported as not checked."""
MAX_DEPTH = 64
MAX_PATTERN_SUBJECT = 10_000
"""Longest string a `pattern` is tried on (backtracking cost grows with length)."""


@dataclass(frozen=True, slots=True)
class SchemaFailure:
    """One assertion that failed: where in the value, which keyword, and what it wanted.
    Messages describe the schema's demand, never the value itself (values are not stored
    unless the user asks)."""

    pointer: str
    keyword: str
    message: str
    schema_pointer: str = ""


@dataclass(frozen=True, slots=True)
class SchemaReport:
    failures: tuple[SchemaFailure, ...]
    not_checked: tuple[NotChecked, ...]
    approximate: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.failures


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class _Checker:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.steps = 0
        self.extra: list[NotChecked] = []
        self.active_refs: set[tuple[str, str]] = set()
        self.exhausted = False

    def check(self, schema: Any, value: Any, at: str, where: str, depth: int) -> list[SchemaFailure]:
        if schema is True or not isinstance(schema, (dict, bool)):
            return []  # a non-schema is listed by the survey; nothing to assert
        if schema is False:
            return [SchemaFailure(at, "false", "the schema allows no value here", where)]
        if self.exhausted or not isinstance(schema, dict):
            return []
        self.steps += 1
        if self.steps > MAX_STEPS or depth > MAX_DEPTH:
            self.exhausted = self.steps > MAX_STEPS
            limit = (
                f"more than {MAX_STEPS} evaluations" if self.steps > MAX_STEPS else f"deeper than {MAX_DEPTH} levels"
            )
            self.extra.append(NotChecked(where, "schema", f"{limit}: not checked from here"))
            return []
        usable = {k: v for k, v in schema.items() if keyword_problem(k, v, schema) is None}
        out: list[SchemaFailure] = []
        if "$ref" in usable:
            out += self._ref(usable["$ref"], value, at, where, depth)
        out += self._generic(usable, value, at, where)
        kind = json_type(value)
        if kind == "object":
            out += self._object(usable, value, at, where, depth)
        elif kind == "array":
            out += self._array(usable, value, at, where, depth)
        elif kind == "string":
            out += self._string(usable, value, at, where)
        elif kind in ("integer", "number"):
            out += self._number(usable, value, at, where)
        out += self._combinators(usable, value, at, where, depth)
        return out

    def _ref(self, ref: str, value: Any, at: str, where: str, depth: int) -> list[SchemaFailure]:
        target = local_ref_target(ref) or ""
        found, sub = resolve_pointer(self.root, target)
        if not found:
            self.extra.append(NotChecked(where, "$ref", "its target is not in this schema"))
            return []
        key = (target, at)
        if key in self.active_refs:
            # The same reference at the same place in the value again: a cycle that makes
            # no progress through the value (e.g. {"$ref": "#"}); stop rather than loop.
            self.extra.append(NotChecked(where, "$ref", "a reference cycle that consumes no input"))
            return []
        self.active_refs.add(key)
        try:
            return self.check(sub, value, at, target, depth + 1)
        finally:
            self.active_refs.discard(key)

    def _generic(self, s: dict[str, Any], value: Any, at: str, where: str) -> list[SchemaFailure]:
        out = []
        if "type" in s:
            allowed = s["type"] if isinstance(s["type"], list) else [s["type"]]
            kind = json_type(value)
            if kind not in allowed and not (kind == "integer" and "number" in allowed):
                out.append(
                    SchemaFailure(at, "type", f"expected {' or '.join(allowed)}, got {kind}", child(where, "type"))
                )
        if "enum" in s and not any(json_equal(value, option) for option in s["enum"]):
            out.append(
                SchemaFailure(at, "enum", f"expected one of {len(s['enum'])} listed values", child(where, "enum"))
            )
        if "const" in s and not json_equal(value, s["const"]):
            out.append(
                SchemaFailure(at, "const", "expected the constant value the schema gives", child(where, "const"))
            )
        return out

    def _object(self, s: dict[str, Any], value: dict[str, Any], at: str, where: str, depth: int) -> list[SchemaFailure]:
        out = []
        for name in s.get("required", []):
            if name not in value:
                out.append(
                    SchemaFailure(
                        child(at, name), "required", f"required property {name!r} is missing", child(where, "required")
                    )
                )
        properties = s.get("properties", {})
        for name, sub in value.items():
            if name in properties:
                out += self.check(
                    properties[name], sub, child(at, name), child(child(where, "properties"), name), depth + 1
                )
            elif "additionalProperties" in s:
                extra = s["additionalProperties"]
                if extra is False:
                    out.append(
                        SchemaFailure(
                            child(at, name),
                            "additionalProperties",
                            f"property {name!r} is not declared",
                            child(where, "additionalProperties"),
                        )
                    )
                else:
                    out += self.check(extra, sub, child(at, name), child(where, "additionalProperties"), depth + 1)
        out += _count(s, "minProperties", "maxProperties", len(value), "properties", at, where)
        return out

    def _array(self, s: dict[str, Any], value: list[Any], at: str, where: str, depth: int) -> list[SchemaFailure]:
        out = []
        if "items" in s:
            for index, item in enumerate(value):
                out += self.check(s["items"], item, child(at, index), child(where, "items"), depth + 1)
        out += _count(s, "minItems", "maxItems", len(value), "items", at, where)
        if s.get("uniqueItems") is True:
            if len(value) > 1000:
                self.extra.append(NotChecked(where, "uniqueItems", "array longer than 1000 items"))
            elif any(json_equal(value[i], value[j]) for i in range(len(value)) for j in range(i)):
                out.append(SchemaFailure(at, "uniqueItems", "items must be unique", child(where, "uniqueItems")))
        return out

    def _string(self, s: dict[str, Any], value: str, at: str, where: str) -> list[SchemaFailure]:
        out = _count(s, "minLength", "maxLength", len(value), "characters", at, where)
        if "pattern" in s:
            if len(value) > MAX_PATTERN_SUBJECT:
                self.extra.append(NotChecked(where, "pattern", f"string longer than {MAX_PATTERN_SUBJECT} characters"))
            elif _compiled(s["pattern"]).search(value) is None:
                out.append(
                    SchemaFailure(
                        at, "pattern", f"must match /{s['pattern']}/ (approximate: Python re)", child(where, "pattern")
                    )
                )
        return out

    def _number(self, s: dict[str, Any], value: float, at: str, where: str) -> list[SchemaFailure]:
        out: list[SchemaFailure] = []
        tests: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
            ("minimum", lambda b: value >= b, "at least"),
            ("maximum", lambda b: value <= b, "at most"),
            ("exclusiveMinimum", lambda b: value > b, "more than"),
            ("exclusiveMaximum", lambda b: value < b, "less than"),
        )
        for keyword, holds, words in tests:
            if keyword in s and not holds(s[keyword]):
                out.append(SchemaFailure(at, keyword, f"must be {words} {s[keyword]}", child(where, keyword)))
        if "multipleOf" in s:
            try:
                with decimal.localcontext() as ctx:
                    ctx.prec = 60
                    ctx.traps[decimal.Inexact] = False
                    remainder = decimal.Decimal(repr(value)) % decimal.Decimal(repr(s["multipleOf"]))
                if remainder != 0:
                    out.append(
                        SchemaFailure(
                            at, "multipleOf", f"must be a multiple of {s['multipleOf']}", child(where, "multipleOf")
                        )
                    )
            except (decimal.DecimalException, ValueError, OverflowError):
                self.extra.append(NotChecked(where, "multipleOf", "too large to test exactly"))
        return out

    def _combinators(self, s: dict[str, Any], value: Any, at: str, where: str, depth: int) -> list[SchemaFailure]:
        out = []
        for index, sub in enumerate(s.get("allOf", [])):
            out += self.check(sub, value, at, child(child(where, "allOf"), index), depth + 1)
        if "anyOf" in s:
            passed = [
                not self.check(sub, value, at, child(child(where, "anyOf"), i), depth + 1)
                for i, sub in enumerate(s["anyOf"])
            ]
            if not any(passed):
                out.append(
                    SchemaFailure(at, "anyOf", f"matches none of the {len(passed)} alternatives", child(where, "anyOf"))
                )
        if "oneOf" in s:
            passed = [
                not self.check(sub, value, at, child(child(where, "oneOf"), i), depth + 1)
                for i, sub in enumerate(s["oneOf"])
            ]
            if sum(passed) != 1:
                out.append(
                    SchemaFailure(
                        at,
                        "oneOf",
                        f"matches {sum(passed)} of the {len(passed)} alternatives; exactly one is allowed",
                        child(where, "oneOf"),
                    )
                )
        return out


def _count(s: dict[str, Any], low: str, high: str, n: int, noun: str, at: str, where: str) -> list[SchemaFailure]:
    out = []
    if low in s and n < s[low]:
        out.append(SchemaFailure(at, low, f"needs at least {s[low]} {noun}", child(where, low)))
    if high in s and n > s[high]:
        out.append(SchemaFailure(at, high, f"allows at most {s[high]} {noun}", child(where, high)))
    return out


def check_value(schema: Any, value: Any) -> SchemaReport:
    """Check `value` (already parsed JSON) against `schema`. Pointers are relative to `value`."""
    surveyed = survey(schema)
    checker = _Checker(schema)
    failures = checker.check(schema, value, "", "", 0)
    not_checked = tuple(dict.fromkeys([*surveyed.not_checked, *checker.extra]))
    return SchemaReport(tuple(dict.fromkeys(failures)), not_checked, surveyed.approximate)


__all__ = ["SchemaFailure", "SchemaReport", "check_value", "is_integer", "is_number"]
