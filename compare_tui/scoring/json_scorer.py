"""The `json` scorer: find the JSON in an answer, validate it, compare chosen fields.

Pure: no IO. `$ref`s to remote schemas are never fetched (jsonschema's `referencing` does not
retrieve by default); an unresolvable `$ref` is an `error`, not a fail.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from compare_tui.errors import CompareTuiError
from compare_tui.goldset.models import JsonScorer, Task
from compare_tui.scoring.json_values import STRICT_DECODER, json_equal
from compare_tui.scoring.result import Answer, Outcome, ScoreResult
from compare_tui.scoring.text import shorten

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_MAX_CANDIDATES = 256
"""Bracket positions tried before giving up: bounds the work on adversarial text."""
_ERRORS_SHOWN = 3
_NOT_FOUND = object()


_DECODER = STRICT_DECODER


def _loads(text: str) -> Any:
    """Decode one whole JSON document, or return `_NOT_FOUND`. Never raises."""
    try:
        value, end = _DECODER.raw_decode(text.strip())
    except (ValueError, RecursionError):
        return _NOT_FOUND
    return value if end == len(text.strip()) else _NOT_FOUND


def extract_json(text: str) -> tuple[Any, str] | None:
    """The JSON value in `text` and where it was found, or None. Never raises.

    Tried in order: the whole text; fenced blocks (```json first, then any fence); the
    first `{` or `[` (in text order) at which a JSON value parses, trying at most
    256 positions. `where` is "whole", "fence" or "embedded".
    """
    value = _loads(text)
    if value is not _NOT_FOUND:
        return value, "whole"
    fences = list(_FENCE.finditer(text))
    for block in sorted(fences, key=lambda m: m.group(1).lower() != "json"):
        value = _loads(block.group(2))
        if value is not _NOT_FOUND:
            return value, "fence"
    tried = 0
    for match in re.finditer(r"[\[{]", text):
        if tried >= _MAX_CANDIDATES:
            break
        tried += 1
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        return value, "embedded"
    return None


def json_pointer(path: Any) -> str:
    """RFC 6901 pointer for a jsonschema error path; the document root is shown as `(root)`."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "(root)"


class SchemaProblem(CompareTuiError):
    """The schema (part of the golden set) is unusable; the score is `error`."""


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Validation errors as `pointer: message`, ordered by location. Raises `SchemaProblem`
    when the schema itself is invalid or cannot be resolved."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        errors = sorted(validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    except jsonschema.SchemaError as exc:
        raise SchemaProblem(f"the schema is not valid: {exc.message} at {json_pointer(exc.absolute_path)}") from None
    except Exception as exc:  # referencing.Unresolvable and friends: the set's fault, not the answer's
        raise SchemaProblem(f"the schema could not be used: {exc}") from None
    return [f"{json_pointer(e.absolute_path)}: {e.message}" for e in errors]


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def score_json(task: Task, spec: JsonScorer, answer: Answer) -> ScoreResult:
    """Pass when the answer holds JSON, it satisfies `spec.schema_` (if any), and each name in
    `spec.fields` has a value equal (type-aware) to the same key in `expected.json`.

    Fail: no JSON found, schema violations (first three listed with JSON pointers), or a field
    that differs or is missing. Error: the schema is invalid, or `fields` is set but
    `expected.json` is not an object holding every named field.
    """
    if spec.schema_ is not None and not isinstance(spec.schema_, dict):
        return ScoreResult(Outcome.ERROR, f"task {task.id}: schema path {spec.schema_!r} was not loaded")
    found = extract_json(answer.text)
    if found is None:
        return ScoreResult(Outcome.FAIL, f"no JSON found in {shorten(answer.text)}")
    value, where = found
    data: dict[str, Any] = {"found_in": where}
    if spec.schema_ is not None:
        try:
            errors = schema_errors(spec.schema_, value)
        except SchemaProblem as exc:
            return ScoreResult(Outcome.ERROR, f"task {task.id}: {exc}", data)
        if errors:
            data["schema_errors"] = errors[:20]
            more = f" (+{len(errors) - _ERRORS_SHOWN} more)" if len(errors) > _ERRORS_SHOWN else ""
            return ScoreResult(Outcome.FAIL, "schema: " + "; ".join(errors[:_ERRORS_SHOWN]) + more, data)
    if spec.fields:
        expected = task.expected.json_
        if not isinstance(expected, dict) or any(f not in expected for f in spec.fields):
            missing = [f for f in spec.fields if not isinstance(expected, dict) or f not in expected]
            return ScoreResult(
                Outcome.ERROR,
                f"task {task.id}: `fields` names {', '.join(map(repr, missing))} but `expected.json` "
                "has no such key (it must be an object holding every field)",
                data,
            )
        if not isinstance(value, dict):
            return ScoreResult(
                Outcome.FAIL, f"expected a JSON object with fields {spec.fields}, got {type(value).__name__}", data
            )
        for name in spec.fields:
            if name not in value:
                return ScoreResult(Outcome.FAIL, f"field {name!r} missing", data)
            if not json_equal(value[name], expected[name]):
                got, want = (_clip(json.dumps(v, ensure_ascii=False)) for v in (value[name], expected[name]))
                return ScoreResult(Outcome.FAIL, f"field {name!r}: expected {want}, got {got}", data)
    checks = (
        ["parses"]
        + (["schema"] if spec.schema_ is not None else [])
        + ([f"fields {spec.fields}"] if spec.fields else [])
    )
    return ScoreResult(Outcome.PASS, "JSON " + ", ".join(checks), data)
