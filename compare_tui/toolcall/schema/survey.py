"""Which keywords of a schema our checks evaluate, and which they do not.

A result must never claim more validation than was done, so before any argument is checked
the whole schema is walked once and every keyword the checker will not evaluate is listed
with where it is and why (`NotChecked`). The checker (`check.py`) skips exactly the
forms listed here, so the two agree by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compare_tui.toolcall.schema.json_values import child, is_number

STANDARD_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})

CHECKED = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "pattern",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
    }
)
"""Keywords the checker evaluates (in the forms `keyword_problem` accepts)."""

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "contentMediaType",
        "contentEncoding",
    }
)
"""Keywords that assert nothing; neither checked nor reported."""

_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_COUNTS = ("minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength")
_NUMBERS = ("minimum", "maximum")

MAX_NODES = 20_000
"""Schema objects surveyed at most; a larger schema is reported as only partly surveyed."""
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class NotChecked:
    """A keyword present in a schema whose assertion was not evaluated, and why."""

    schema_pointer: str
    keyword: str
    reason: str
    odd_type: str | None = None
    """For `type`: the first type name JSON Schema does not have (as the reason names it)."""

    def __str__(self) -> str:
        return f"{self.keyword} at {self.schema_pointer or '/'} ({self.reason})"


@dataclass(frozen=True, slots=True)
class Survey:
    """The outcome of walking one schema."""

    not_checked: tuple[NotChecked, ...]
    approximate: tuple[str, ...]
    """Schema pointers of `pattern` keywords: evaluated with Python `re`, not ECMA-262."""


def local_ref_target(ref: Any) -> str | None:
    """The JSON pointer a `$ref` names inside this document, or None if it is not local."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    from urllib.parse import unquote

    target = unquote(ref[1:])
    return target if target == "" or target.startswith("/") else None


MAX_PATTERN = 1000
"""Longest `pattern` evaluated; longer ones are listed as not checked."""


def nested_quantifier(pattern: str) -> bool:
    """Whether a regex repeats a group that itself repeats, e.g. `(a+)+` or `(\\w*)*`: the
    shape that makes a backtracking engine take exponential time on a crafted string.

    A linear scan (a regex for this would itself backtrack on hostile input)."""
    repeats: list[bool] = []  # per open group: does it contain a quantifier?
    closed_repeating = False  # the token just read is a group that contains a quantifier
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            closed_repeating = False
            continue
        lazy_or_group = char == "?" and i and pattern[i - 1] in "(?+*}"
        if char in "+*{" or (char == "?" and not lazy_or_group):
            # `?` after a group repeats it at most once: harmless outside, a repeat inside.
            if closed_repeating and char != "?":
                return True
            if repeats:
                repeats[-1] = True
        closed_repeating = False
        if char == "(":
            repeats.append(False)
        elif char == ")" and repeats:
            inner = repeats.pop()
            closed_repeating = inner
            if repeats and inner:
                repeats[-1] = True
        i += 1
    return False


def odd_type_names(value: Any) -> list[Any]:
    """The names of a `type` keyword's `value` that JSON Schema does not have."""
    names = value if isinstance(value, list) else [value]
    return [n for n in names if not isinstance(n, str) or n not in STANDARD_TYPES]


def _odd_type(key: str, value: Any) -> str | None:
    """`NotChecked.odd_type`: the first odd name of a `type` keyword, spelled as a string."""
    odd = odd_type_names(value) if key == "type" else []
    return None if not odd else odd[0] if isinstance(odd[0], str) else repr(odd[0])


def keyword_problem(key: str, value: Any, schema: dict[str, Any]) -> str | None:
    """Why a *checked* keyword cannot be evaluated in this form, or None when it can."""
    if key == "type":
        odd = odd_type_names(value)
        return f"non-standard type name {odd[0]!r}" if odd else None
    if key in ("exclusiveMinimum", "exclusiveMaximum"):
        return None if is_number(value) else "draft-04 boolean form" if isinstance(value, bool) else "not a number"
    if key in _NUMBERS:
        return None if is_number(value) else "not a number"
    if key == "multipleOf":
        return None if is_number(value) and value > 0 else "not a positive number"
    if key in _COUNTS:
        return (
            None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0
            else "not a non-negative integer"
        )
    if key == "required":
        return None if isinstance(value, list) and all(isinstance(v, str) for v in value) else "not a list of names"
    if key == "enum":
        return None if isinstance(value, list) else "not a list"
    if key == "uniqueItems":
        return None if isinstance(value, bool) else "not a boolean"
    if key == "pattern":
        if not isinstance(value, str):
            return "not a string"
        if len(value) > MAX_PATTERN:
            return f"longer than {MAX_PATTERN} characters"
        try:
            re.compile(value)
        except (re.error, RecursionError, OverflowError):
            return "not a regular expression Python can compile"
        if nested_quantifier(value):
            return "nested quantifiers could backtrack catastrophically"
        return None
    if key == "items":
        return (
            "array form (tuple validation)"
            if isinstance(value, list)
            else None
            if isinstance(value, (dict, bool))
            else "not a schema"
        )
    if key == "additionalProperties":
        if "patternProperties" in schema:
            return "depends on patternProperties, which is not checked"
        return None if isinstance(value, (dict, bool)) else "not a schema"
    if key in _SUBSCHEMA_LISTS:
        return None if isinstance(value, list) and value else "not a non-empty list of schemas"
    if key in _SUBSCHEMA_MAPS:
        return None if isinstance(value, dict) else "not an object of schemas"
    if key == "$ref":
        if not isinstance(value, str):
            return "not a string"
        if local_ref_target(value) is None:
            return "remote $ref or $anchor target" if not value.startswith("#") else "$anchor target"
        return None
    return None


def survey(schema: Any) -> Survey:
    """Walk `schema` (bounded) and list every keyword the checker will not evaluate."""
    found: list[NotChecked] = []
    approximate: list[str] = []
    stack: list[tuple[Any, str, int]] = [(schema, "", 0)]
    nodes = 0
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            found.append(NotChecked(where, "schema", "not an object or boolean"))
            continue
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            limit = f"more than {MAX_NODES} schema objects" if nodes > MAX_NODES else f"deeper than {MAX_DEPTH} levels"
            found.append(NotChecked(where, "schema", f"{limit}: this part and below not surveyed, not checked"))
            continue
        for key, value in node.items():
            here = child(where, key)
            if key in ANNOTATIONS:
                continue
            if key not in CHECKED:
                reason = "extension keyword" if key.startswith("x-") else "not evaluated by these checks"
                found.append(NotChecked(where, key, reason))
                continue
            problem = keyword_problem(key, value, node)
            if problem is not None:
                found.append(NotChecked(where, key, problem, _odd_type(key, value)))
                continue
            if key == "pattern":
                approximate.append(here)
            elif key in _SUBSCHEMA_MAPS:
                stack.extend((sub, child(here, name), depth + 1) for name, sub in value.items())
            elif key in _SUBSCHEMA_LISTS:
                stack.extend((sub, child(here, i), depth + 1) for i, sub in enumerate(value))
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                stack.append((value, here, depth + 1))
    found.sort(key=lambda n: (n.schema_pointer, n.keyword))
    return Survey(tuple(dict.fromkeys(found)), tuple(sorted(approximate)))
