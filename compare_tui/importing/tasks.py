"""One source row → one task (as the golden-set JSON it is written as), or the row's problem.

Callers can rely on: a returned task validates as a `goldset.Task`; a problem names the row,
the column and the reason. Ids come from the id column (as text; they must already be valid
task ids: letters, digits, `.`, `_`, `-`) or from the row number (`row-0007`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from compare_tui.goldset.models import TASK_ID, Task
from compare_tui.sampling.redaction import Redactor

from .options import ImportOptions
from .rows import MISSING, Row, RowProblem, lookup

_TASK_ID = re.compile(TASK_ID)


class _Bad(Exception):
    def __init__(self, column: str, reason: str, missing_column: str | None = None) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason
        self.missing_column = missing_column


def _no_such_column(column: str, which: str) -> _Bad:
    """The row has no `column`; `which` says which column it was meant to be and what to do."""
    return _Bad(column, f"no such column ({which})", which)


def row_id(number: int) -> str:
    return f"row-{number:04d}"


def _text(row: Row, column: str, *, what: str) -> str:
    value = lookup(row.values, column)
    if value is MISSING:
        raise _no_such_column(column, f"the {what} column; choose another with --{what}-column")
    if value is None:
        raise _Bad(column, f"empty {what}")
    if isinstance(value, (dict, list)):
        hint = (
            " (a list of acceptable answers is the inspect format's convention: with --format inspect "
            "any of them passes)"
            if what == "expected" and isinstance(value, list)
            else ""
        )
        raise _Bad(column, f"the {what} is a JSON {type(value).__name__}, not text{hint}")
    text = value if isinstance(value, str) else json.dumps(value)
    if what == "input" and not text.strip():
        raise _Bad(column, "empty input")
    return text


def _checked_text(row: Row, column: str) -> str:
    """The expected text an exact or regex scorer compares with. A CSV has no null, so a blank
    cell is how a missing value arrives: kept, it would make a task that no answer passes
    (exact `""`) or that every answer passes (regex `""` matches anywhere)."""
    text = _text(row, column, what="expected")
    if not text.strip():
        raise _Bad(column, "empty expected value")
    return text


def _json_value(row: Row, column: str) -> Any:
    value = lookup(row.values, column)
    if value is MISSING:
        raise _no_such_column(column, "the expected column; choose another with --expected-column")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _Bad(column, f"not JSON ({exc})") from None
    if value is None:
        raise _Bad(column, "empty expected value")
    return value


def _messages(row: Row, column: str) -> list[dict[str, Any]]:
    value = _json_value(row, column) if isinstance(lookup(row.values, column), str) else lookup(row.values, column)
    if value is MISSING:
        raise _no_such_column(column, "the messages column")
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) for m in value):
        raise _Bad(column, "not a non-empty list of chat messages ({role, content})")
    return [{k: v for k, v in m.items() if v is not None} for m in value]


def _input(row: Row, options: ImportOptions, input_column: str) -> dict[str, Any]:
    if options.messages_column is not None:
        return {"messages": _messages(row, options.messages_column)}
    value = lookup(row.values, input_column)
    if isinstance(value, list):
        # inspect_ai: `input` is a string or a list of chat messages.
        return {"messages": _messages(row, input_column)}
    out: dict[str, Any] = {}
    if options.system is not None:
        out["system"] = options.system
    elif options.system_column is not None:
        out["system"] = _text(row, options.system_column, what="system")
    out["prompt"] = _text(row, input_column, what="input")
    return out


def _expected_and_scorer(row: Row, options: ImportOptions, column: str) -> tuple[dict[str, Any], dict[str, Any]]:
    kind = options.scorer
    if kind in ("exact", "human", "command"):
        value = lookup(row.values, column)
        if options.format == "inspect" and isinstance(value, list) and kind == "exact" and value:
            # inspect_ai's convention, and only its: a list of targets, any of which is right,
            # matched whole by a regex; elsewhere a list is not text and the row is refused.
            if not all(isinstance(v, str) for v in value):
                raise _Bad(column, "a list of targets holding something other than text")
            if options.normalize:
                raise _Bad(
                    column,
                    "a list of targets is matched as it is (any one, whole, by a regex), so --normalize "
                    "cannot apply to it: leave out --normalize, or give this row one target",
                )
            pattern = "(?:" + "|".join(re.escape(v) for v in value) + ")"
            return {"text": value[0]}, {"kind": "regex", "pattern": pattern, "mode": "fullmatch"}
        if kind == "human" and value in (MISSING, None, ""):
            return {"text": ""}, {"kind": "human"}
        text = _checked_text(row, column) if kind == "exact" else _text(row, column, what="expected")
        if kind == "exact":
            return {"text": text}, {"kind": "exact", "normalize": list(options.normalize)}
        if kind == "human":
            return {"text": text}, {"kind": "human"}
        return {"text": text}, {"kind": "command", "run": list(options.command)}
    if kind == "regex":
        pattern = _checked_text(row, column)
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            raise _Bad(column, f"not a valid regular expression ({exc})") from None
        return {"text": pattern}, {"kind": "regex", "pattern": pattern, "mode": "search"}
    value = _json_value(row, column)
    if kind == "json":
        if not isinstance(value, dict):
            raise _Bad(column, f"the json scorer compares fields of an object; this is a JSON {type(value).__name__}")
        return {"json": value}, {"kind": "json", "fields": sorted(value)}
    if kind == "json_schema":
        if not isinstance(value, dict):
            raise _Bad(column, "not a JSON Schema (an object)")
        return {"text": "a JSON answer valid against the task's schema"}, {"kind": "json", "schema": value}
    # tool_call
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise _Bad(column, 'not a tool call ({"name": …, "arguments": {…}})')
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise _Bad(column, "the tool call's arguments are not JSON") from None
    return {"tool_call": {"name": value["name"], "arguments": arguments}}, {"kind": "tool_call"}


def _task_id(row: Row, id_column: str | None) -> str:
    if id_column is None:
        return row_id(row.number)
    value = lookup(row.values, id_column)
    if value is MISSING:
        raise _no_such_column(id_column, "the id column; leave out --id-column to number rows")
    if value is None or isinstance(value, (dict, list, bool)):
        raise _Bad(id_column, "no usable id")
    text = str(value)
    if not _TASK_ID.match(text):
        raise _Bad(id_column, f"id {text!r:.60} is not a task id (letters, digits, `.`, `_`, `-`; at most 128)")
    return text


def _scrubbed(task: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    task = dict(task)
    task["input"] = redactor.value(task["input"])
    expected = task["expected"]
    if "text" in expected:
        task["expected"] = {"text": redactor.text(expected["text"])}
    elif "json" in expected:
        task["expected"] = {"json": redactor.value(expected["json"])}
    return task


def build_task(row: Row, options: ImportOptions, redactor: Redactor | None) -> dict[str, Any] | RowProblem:
    """The task a row makes (keys: id, tags, input, expected, scorer), or its problem."""
    id_column, input_column, expected_column = options.columns()
    try:
        task_id = _task_id(row, id_column)
        task_input = _input(row, options, input_column)
        if row.expected is not None and row.scorer is not None:
            expected, scorer = row.expected, row.scorer
        else:
            expected, scorer = _expected_and_scorer(row, options, expected_column)
    except _Bad as bad:
        return RowProblem(row.number, bad.column, bad.reason, bad.missing_column)
    task: dict[str, Any] = {"id": task_id, "tags": list(options.tags), "input": task_input, "expected": expected}
    if redactor is not None:
        task = _scrubbed(task, redactor)
    task["scorer"] = scorer
    try:
        Task.model_validate(task)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return RowProblem(row.number, "", f"does not make a valid task ({where}: {first['msg']})")
    return task
