"""A source row, a problem with one, and reading a field by dotted path.

Rows carry one numbering, the one the user sees when they open the source: a CSV's as a
spreadsheet numbers it (the header is row 1, the first row under it row 2, a cell with line
breaks is one row); a JSONL file's as an editor numbers its lines; for Parquet and a saved dataset
the first record is row 1; for promptfoo the first entry of `tests:`. A blank row or line keeps
its number and is reported as a `BlankRow`, never skipped unsaid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

MISSING = object()
"""What `lookup` returns for a path the row does not have (None is a value a row can hold)."""


@dataclass(frozen=True)
class Row:
    number: int
    """1-based place of the row in its source (see the module docstring)."""
    values: dict[str, Any]
    scorer: dict[str, Any] | None = None
    """A scorer the source itself gives for this row (promptfoo asserts), else None."""
    expected: dict[str, Any] | None = None
    """An expected outcome the source itself gives (promptfoo asserts), else None."""
    not_imported: tuple[str, ...] = field(default=())
    """Parts of the row the source format has that no scorer of ours can check (promptfoo)."""


@dataclass(frozen=True)
class BlankRow:
    """A row with nothing in it (a CSV row of empty cells, a blank JSONL line): no task, named."""

    number: int


class RowProblemEntry(TypedDict):
    """A bad row as `import.json`'s `skipped` lists it."""

    row: int
    column: str
    reason: str


@dataclass(frozen=True)
class RowProblem:
    row: int
    column: str
    reason: str
    missing_column: str | None = None
    """When the row has no such column: which column it was meant to be and what to do (the
    reason's words in parentheses), so the import's refusal needs no reading of `reason`."""

    def __str__(self) -> str:
        where = f"row {self.row}" + (f", column {self.column!r}" if self.column else "")
        return f"{where}: {self.reason}"

    def as_json(self) -> RowProblemEntry:
        return {"row": self.row, "column": self.column, "reason": self.reason}


def lookup(values: dict[str, Any], path: str) -> Any:
    """`values[path]`, else the nested value at dotted `path` (`a.b.0.c`), else `MISSING`.

    A column whose own name holds a dot (a CSV header `meta.id`) wins over the nested reading."""
    if path in values:
        return values[path]
    current: Any = values
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return MISSING
    return current
