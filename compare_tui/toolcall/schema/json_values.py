"""JSON values as JSON Schema sees them: bounded parsing, equality, types and pointers.

Python's `json` module is not JSON Schema's data model: `True == 1`, `NaN` parses, and a
deeply nested document raises `RecursionError`. These helpers close those gaps once, for
the tools-file reader, the schema checker and the argument checks alike.
"""

from __future__ import annotations

import math
from typing import Any

from compare_tui.errors import CompareTuiError
from compare_tui.scoring.json_values import STRICT_DECODER

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in a tools file or in a call's arguments."""


class JsonLimitError(CompareTuiError, ValueError):
    """The text is not JSON, or is JSON past a limit; the message says which and where."""


def nesting_depth(text: str) -> int:
    """The deepest `[`/`{` nesting in `text`, ignoring brackets inside strings.

    A linear scan that never recurses, so it can size up hostile input before `json.loads`
    (which recurses once per level) ever sees it."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def loads_bounded(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON (no NaN/Infinity) nested at most `max_depth` deep; `JsonLimitError` else."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JsonLimitError(f"nested {depth} levels deep; the limit is {max_depth}")
    try:
        return STRICT_DECODER.decode(text)
    except RecursionError:  # pragma: no cover - the depth scan makes this unreachable
        raise JsonLimitError(f"nested too deeply (the limit is {max_depth})") from None
    except ValueError as exc:
        raise JsonLimitError(f"not valid JSON: {exc}") from None


def is_number(value: Any) -> bool:
    """A JSON number: int or finite float, never a bool (Python's bool is an int)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)


def is_integer(value: Any) -> bool:
    """A JSON Schema integer: a number with no fractional part (`2.0` counts)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value ("integer" for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_integer(value):
        return "integer"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def pointer_token(key: str | int) -> str:
    """One JSON-pointer reference token (RFC 6901: `~` -> `~0`, `/` -> `~1`)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer(*parts: str | int) -> str:
    """A JSON pointer built from unescaped parts: pointer("a/b", 0) == "/a~1b/0"."""
    return "".join("/" + pointer_token(p) for p in parts)


def child(base: str, key: str | int) -> str:
    """`base` extended by one unescaped key."""
    return base + "/" + pointer_token(key)


def resolve_pointer(document: Any, ref: str) -> tuple[bool, Any]:
    """Follow a JSON pointer (already without the leading `#`) into `document`."""
    if ref == "":
        return True, document
    if not ref.startswith("/"):
        return False, None
    node = document
    for raw in ref[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isascii() and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False, None
    return True, node
