"""Type-aware equality of decoded JSON values, shared by the `json` and `tool_call` scorers.

JSON has one number type, so `1` equals `1.0`; but a boolean is not a number (`true` is not
`1`) and a string is never a number (`"1"` is not `1`). Python's own `==` gets the first right
and the other two wrong (`True == 1`), which is why scorers compare through here.
"""

from __future__ import annotations

import json
from typing import Any


def reject_constant(name: str) -> Any:
    """`parse_constant` of a strict decoder: Python's json accepts NaN and Infinity; JSON does
    not, and neither a schema nor an equality can reason about them."""
    raise ValueError(f"{name} is not JSON (JSON has no NaN or Infinity)")


STRICT_DECODER = json.JSONDecoder(parse_constant=reject_constant)
"""The one strict JSON decoder (no NaN/Infinity); use `decode` or `raw_decode`."""


def json_equal(left: Any, right: Any) -> bool:
    """True when two decoded JSON values are the same JSON value.

    Numbers compare numerically across int/float; booleans equal only booleans; `None` only
    `None`; objects need the same key set with equal values; arrays the same length with equal
    items in order. Never raises on JSON-decoded input.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right))
    return type(left) is type(right) and left == right


def first_difference(actual: dict[str, Any], expected: dict[str, Any], *, subset: bool) -> str | None:
    """The first reason `actual` does not match `expected` at the top level, or None if it does.

    With `subset`, keys in `actual` that `expected` does not name are allowed; values of the
    named keys are still compared whole with `json_equal` (no nested subset matching).
    """
    for key in sorted(expected):
        if key not in actual:
            return f"missing key {key!r}"
        if not json_equal(actual[key], expected[key]):
            return f"{key!r} is {_short(actual[key])}, expected {_short(expected[key])}"
    if not subset:
        extra = sorted(set(actual) - set(expected))
        if extra:
            return f"unexpected key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}"
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
