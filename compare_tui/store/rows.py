"""Records to SQLite rows and back. JSON-valued fields are stored as TEXT.

Kept apart from the accessors so that the column lists, the JSON columns and the INSERT
statements are written once and used by every write.
"""

from __future__ import annotations

import json
import operator
from enum import Enum
from typing import Any, NotRequired, TypedDict, TypeVar, cast

from pydantic import BaseModel

from compare_tui.store.records import AttemptRecord, AuditRow, ReviewRecord, RunRecord, attempt_id
from compare_tui.vocabulary import ErrorClass, Outcome

R = TypeVar("R", bound=BaseModel)

RUN_JSON = frozenset(
    {"model_entry", "cost_basis", "settings", "environment", "gpu", "task_inputs", "rescore", "serving"}
)
ATTEMPT_JSON = frozenset({"tool_calls", "score_data", "isolation", "server_timings"})
ATTEMPT_BOOL = frozenset({"usage_missing"})
ATTEMPT_ENUMS = ("outcome", "error_class")
"""The attempt columns the engine may give as enums (`Outcome`, `ErrorClass`)."""


class AttemptValues(TypedDict):
    """An `attempts` row as SQLite stores it: what `attempt_values` (the engine's unvalidated
    hot path) and `attempt_row` (from a validated `AttemptRecord`) both make, one shape. JSON
    fields as text, enums as their values, bools as 0/1; `attempt_from` reads it back."""

    id: str
    run_id: str
    task_id: str
    attempt: int
    outcome: str
    answer_text: str
    tool_calls: str
    reasoning: str | None
    score_detail: str
    score_data: str
    isolation: str | None
    error_class: str | None
    error: str | None
    ttft_ms: float | None
    e2e_ms: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    usage_missing: int
    server_timings: str | None
    started_at: str | None
    finished_at: str | None
    retries: int
    finish_reason: str | None
    cached_tokens: int | None


class AuditValues(TypedDict):
    """An `audit` row as SQLite stores it: what `audit_values` (unvalidated) and an `AuditRow`
    record's row both make. `id` only on a row that completes one written before its request
    went out (`Store.open_request`)."""

    id: NotRequired[int | None]
    at: str
    run_id: str | None
    toolcall_run_id: str | None
    task_id: str | None
    attempt: int | None
    endpoint: str
    model: str
    status: int | None
    bytes_in: int | None
    bytes_out: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: float | None
    error_class: str | None
    state: str


RUN_COLUMNS = tuple(RunRecord.model_fields)
ATTEMPT_COLUMNS = tuple(AttemptRecord.model_fields)
NARROW_COLUMNS = tuple(name for name in ATTEMPT_COLUMNS if name not in ("id", "run_id"))
"""The attempt columns `Store.attempt_columns` may read (`AttemptCells`): every field but the
row's keys, the record's own list, so a field added to `AttemptRecord` is readable at once."""
AUDIT_COLUMNS = tuple(name for name in AuditRow.model_fields if name != "id")
REVIEW_COLUMNS = tuple(name for name in ReviewRecord.model_fields if name != "id")


_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
"""`json.dumps(value, sort_keys=True, ensure_ascii=False)`, without making an encoder per call
(which `json.dumps` does whenever it is given options: half the cost of a small value)."""


def _dumps(value: Any) -> str | None:
    # sort_keys: the same record always gives the same bytes (diffable, digest-stable).
    if value is None:
        return None
    if not value and type(value) in (list, dict):  # most attempts' tool calls and score data
        return "[]" if type(value) is list else "{}"
    return _ENCODE(value)


def to_row(
    record: BaseModel, json_fields: frozenset[str] = frozenset(), columns: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The record as a row: JSON fields encoded, enums as their values, bools as 0/1."""
    # The records are flat (no nested models): their field values are the row's values, and
    # reading them directly costs a tenth of `model_dump` (bench/RESULTS.md, "Engine overhead").
    data = record.__dict__
    return {name: _cell(data[name], name in json_fields) for name in columns or tuple(data)}


def _cell(value: Any, is_json: bool) -> Any:
    """A field's value as its column stores it: JSON as text, enums as their values, bools as 0/1."""
    if is_json:
        return _dumps(value)
    if isinstance(value, Enum):  # StrEnum members: store the plain string
        return value.value
    if value is True or value is False:
        return int(value)
    return value


def from_row(
    model: type[R],
    row: dict[str, Any],
    json_fields: frozenset[str] = frozenset(),
    bool_fields: frozenset[str] = frozenset(),
) -> R:
    """The record a row stores. Validates, so a hand-edited bad row fails loudly here."""
    known = _fields(model)
    # Columns a record does not know (none today) are dropped rather than rejected, so an
    # older reader would not choke on an additive column.
    data = {name: value for name, value in row.items() if name in known}
    for name in json_fields:
        if data.get(name) is not None:
            data[name] = json.loads(data[name])
    for name in bool_fields:
        if name in data:
            data[name] = bool(data[name])
    return model.model_validate(data)


_FIELD_CACHE: dict[type, frozenset[str]] = {}


def _fields(model: type[BaseModel]) -> frozenset[str]:
    # `model.model_fields` is rebuilt on each access in pydantic 2.x: read it once per model.
    if model not in _FIELD_CACHE:
        _FIELD_CACHE[model] = frozenset(model.model_fields)
    return _FIELD_CACHE[model]


def insert_sql(table: str, columns: tuple[str, ...], verb: str = "INSERT", *, positional: bool = False) -> str:
    """`verb INTO table (cols) VALUES (:cols)` with named parameters, or `?` ones."""
    names = ", ".join(columns)
    params = ", ".join("?" if positional else f":{c}" for c in columns)
    return f"{verb} INTO {table} ({names}) VALUES ({params})"


INSERT_RUN = insert_sql("runs", RUN_COLUMNS)
# The two the engine writes per request take positional parameters, from a row by
# `attempt_params`/`audit_params`: SQLite binds them a quarter faster than named ones.
# REPLACE keyed by the deterministic id: writing the same attempt twice leaves one row.
UPSERT_ATTEMPT = insert_sql("attempts", ATTEMPT_COLUMNS, "INSERT OR REPLACE", positional=True)
INSERT_AUDIT = insert_sql("audit", AUDIT_COLUMNS, positional=True)
COMPLETE_AUDIT = f"UPDATE audit SET ({', '.join(AUDIT_COLUMNS)}) = ({', '.join('?' * len(AUDIT_COLUMNS))}) WHERE id = ?"
"""Completes an audit row written before its request went out (`AUDIT_COLUMNS` values, then its id)."""
INSERT_REVIEW = insert_sql("reviews", REVIEW_COLUMNS)
attempt_params = operator.itemgetter(*ATTEMPT_COLUMNS)
"""An attempt row's values in `UPSERT_ATTEMPT`'s order."""
audit_params = operator.itemgetter(*AUDIT_COLUMNS)
"""An audit row's values in `INSERT_AUDIT`'s order."""


def _defaults(model: type[BaseModel], columns: tuple[str, ...], json_fields: frozenset[str]) -> dict[str, Any]:
    return {
        name: _cell(model.model_fields[name].get_default(call_default_factory=False), name in json_fields)
        for name in columns
    }


_ATTEMPT_DEFAULTS = _defaults(AttemptRecord, ATTEMPT_COLUMNS, ATTEMPT_JSON)
_AUDIT_DEFAULTS = _defaults(AuditRow, AUDIT_COLUMNS, frozenset())


def attempt_values(**fields: Any) -> AttemptValues:
    """The row of an attempt given as fields (as `AttemptRecord` takes them, `run_id`,
    `task_id`, `attempt`, `outcome`, `started_at` at least), without building the record:
    the engine's hot path, a tenth of the cost of a validated record and `attempt_row`.
    Unvalidated: the engine gives typed values, and every row is validated when read back.
    `_cell`'s rules, applied only to the columns where they can change a value."""
    row = {**_ATTEMPT_DEFAULTS, **fields}
    if len(row) != len(_ATTEMPT_DEFAULTS):  # a field that is no column added a key
        raise KeyError(f"attempts have no column {sorted(fields.keys() - _ATTEMPT_DEFAULTS.keys())[0]!r}")
    for name in ATTEMPT_JSON:
        if name in fields:
            row[name] = _dumps(row[name])
    for name in ATTEMPT_BOOL:
        if name in fields:
            row[name] = int(row[name])
    for name in ATTEMPT_ENUMS:
        if isinstance(row[name], Enum):
            row[name] = row[name].value
    if not row["id"]:
        row["id"] = attempt_id(row["run_id"], row["task_id"], row["attempt"])
    return cast(AttemptValues, row)


def audit_values(**fields: Any) -> AuditValues:
    """The row of one audited request given as fields (as `AuditRow` takes them, `at`,
    `endpoint` and `model` at least), unvalidated like `attempt_values`."""
    row = {**_AUDIT_DEFAULTS, **fields}
    if len(row) != len(_AUDIT_DEFAULTS):  # a field that is no column added a key
        raise KeyError(f"audit rows have no column {sorted(fields.keys() - _AUDIT_DEFAULTS.keys())[0]!r}")
    return cast(AuditValues, row)


_OUTCOMES: dict[object, object] = {o.value: o for o in Outcome}
_ERROR_CLASSES: dict[object, object] = {None: None, **{c.value: c for c in ErrorClass}}


CELL_TYPES: dict[str, tuple[dict[object, object], object]] = {
    "outcome": (_OUTCOMES, Outcome.ERROR),
    "error_class": (_ERROR_CLASSES, ErrorClass.TRANSPORT),
    "usage_missing": ({0: False, 1: True}, True),
}
"""The narrow read's typed cells (`AttemptCells`): column → (stored value → typed value, and the
value of one this version does not know: an unknown outcome (a hand-edited row) measured nothing
it can show, `error`; an unknown error class failed somehow, `transport`)."""


def run_row(record: RunRecord) -> dict[str, Any]:
    return to_row(record, RUN_JSON, RUN_COLUMNS)


def attempt_row(record: AttemptRecord) -> AttemptValues:
    return cast(AttemptValues, to_row(record, ATTEMPT_JSON, ATTEMPT_COLUMNS))


def audit_row(record: AuditRow) -> AuditValues:
    """The record's row (without its `id`: the store assigns it, or the caller completes by it)."""
    return cast(AuditValues, to_row(record, columns=AUDIT_COLUMNS))


def run_from(row: dict[str, Any]) -> RunRecord:
    return from_row(RunRecord, row, RUN_JSON)


def attempt_from(row: dict[str, Any]) -> AttemptRecord:
    return from_row(AttemptRecord, row, ATTEMPT_JSON, ATTEMPT_BOOL)
