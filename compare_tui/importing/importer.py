"""A source file → an `ImportedSet` (manifest, tasks, `import.json`), or every bad row.

Callers can rely on:
- nothing is returned while a row cannot become a task, unless `skip_bad_rows`: the
  `ImportingError` lists each (row, column, reason);
- every source row is accounted for, by the number the user sees in the source (`rows.py`): it
  made a task, or it is a bad row (`skipped`), a blank row (`blank_rows`) or left out by `--limit`;
- a CSV's delimiter is `--delimiter`, else the one its header line splits on (`sniff_delimiter`),
  and import.json's options record which;
- ids are unique, even ignoring case (each is a file name: `tasks/<id>.json`), and a
  collision names both rows;
- the result depends only on the source bytes and the options (no clock, no randomness):
  `--limit N` keeps the first N rows, or with `--seed S` the N rows whose sha256(S, id) sorts
  first, written in source order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

from compare_tui.goldset.models import Manifest
from compare_tui.sampling.redaction import Redactor

from .errors import ImportingError
from .options import ImportOptions, default_workload_id, pin
from .promptfoo import read_promptfoo
from .readers import CSV_DELIMITERS, read_csv, read_hf, read_jsonl, read_parquet, sniff_delimiter, source_digest
from .rows import BlankRow, Row, RowProblem, RowProblemEntry
from .tasks import build_task

FORMAT = "compare-tui/import@1"
SHOWN_PROBLEMS = 20


class ImportSource(TypedDict):
    """The file a set was imported from, pinned by its digest."""

    name: str
    sha256: str
    bytes: int
    format: str


class ImportCounts(TypedDict):
    """What became of the source's rows."""

    rows: int
    tasks: int
    bad_rows: int
    blank_rows: int
    left_out_by_limit: int


class ImportRedaction(TypedDict):
    """What `--scrub` replaced (counts per kind, never the values)."""

    replaced: dict[str, int]
    scrubbed: bool


class ImportedRow(TypedDict):
    """A task and the source row it came from."""

    id: str
    row: int


class ImportInfo(TypedDict):
    """`import.json`: the source, the options and what became of every row (`FORMAT`)."""

    format: str
    source: ImportSource
    options: dict[str, Any]
    """`ImportOptions.recorded`: every option as given, so the same options give the same set."""
    counts: ImportCounts
    blank_rows: list[int]
    skipped: list[RowProblemEntry]
    not_imported: dict[str, list[str]]
    """Per task id, the source's asserts that no scorer here checks."""
    redaction: ImportRedaction
    tasks: list[ImportedRow]


@dataclass(frozen=True)
class ImportedSet:
    manifest: dict[str, Any]
    tasks: list[dict[str, Any]]
    info: ImportInfo


def _rows(path: Path, options: ImportOptions) -> Iterator[Row | RowProblem | BlankRow]:
    if options.format == "csv":
        return read_csv(path, options.delimiter or ",")
    if options.format in ("jsonl", "inspect"):
        return read_jsonl(path)
    if options.format == "parquet":
        return read_parquet(path)
    if options.format == "hf":
        return read_hf(path, options.split)
    return read_promptfoo(path, options.input_column)


def check_options(path: Path, options: ImportOptions) -> None:
    """Refuse option combinations that cannot work, before reading a row."""
    if options.format == "hf" and not path.is_dir():
        raise ImportingError(f"{path}: --format hf reads a folder written by `Dataset.save_to_disk`, not a file")
    if options.format != "hf" and not path.is_file():
        raise ImportingError(
            f"{path}: no such file" + ("" if not path.is_dir() else " (a folder; --format hf reads a saved dataset)")
        )
    if options.messages_column and (options.input_column or options.system or options.system_column):
        raise ImportingError(
            "--messages-column gives the whole conversation: leave out --input-column, --system and --system-column"
        )
    if options.system and options.system_column:
        raise ImportingError("give --system TEXT or --system-column C, not both")
    if options.scorer == "command" and not options.command:
        raise ImportingError("--scorer command needs --command 'python3 check.py' (the checker, in the set folder)")
    if options.command and options.scorer != "command":
        raise ImportingError("--command is the `command` scorer's program: pass --scorer command with it")
    if options.normalize and options.scorer != "exact":
        raise ImportingError("--normalize applies to the exact scorer only")
    if options.limit is not None and options.limit < 1:
        raise ImportingError(f"--limit {options.limit}: give a positive number of tasks")
    if options.seed is not None and options.limit is None:
        raise ImportingError("--seed chooses which rows --limit keeps: give --limit N with it")
    if options.delimiter is not None and options.format != "csv":
        raise ImportingError(f"--delimiter is a CSV's; a {options.format} source has none: leave it out")
    if options.delimiter is not None and len(options.delimiter) != 1:
        raise ImportingError(
            f"--delimiter {options.delimiter!r}: give one character, e.g. ';' (or 'tab'); "
            f"left out, it is told from the header ({', '.join(map(repr, CSV_DELIMITERS))})"
        )
    if options.format == "promptfoo" and (options.expected_column or options.scorer != "exact"):
        raise ImportingError(
            "a promptfoo file's asserts give each task its scorer: leave out --expected-column and --scorer"
        )


def _refusal(problems: list[RowProblem], path: Path, columns: list[str]) -> ImportingError:
    missing = {p.column for p in problems if p.missing_column is not None}
    if len(missing) == 1 and all(p.missing_column is not None for p in problems):
        (column,) = missing
        return ImportingError(
            f"{path}: no row has a column {column!r} ({problems[0].missing_column}); "
            f"the first row's columns are: {', '.join(columns) or 'none'}"
        )
    lines = [str(p) for p in problems[:SHOWN_PROBLEMS]]
    more = f"\n  … and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return ImportingError(
        f"{path}: {len(problems)} row(s) cannot become tasks, so nothing was written:\n  "
        + "\n  ".join(lines)
        + more
        + "\nfix them, choose other columns, or pass --skip-bad-rows to import the rest (each skipped row is listed in import.json)"
    )


def _limited(tasks: list[tuple[int, dict[str, Any]]], options: ImportOptions) -> list[tuple[int, dict[str, Any]]]:
    if options.limit is None or len(tasks) <= options.limit:
        return tasks
    if options.seed is None:
        return tasks[: options.limit]

    def key(item: tuple[int, dict[str, Any]]) -> str:
        return hashlib.sha256(f"{options.seed}\0{item[1]['id']}".encode()).hexdigest()

    kept = sorted(tasks, key=key)[: options.limit]
    return sorted(kept, key=lambda item: item[0])


def _default_scorer(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """One scorer for all tasks moves to the manifest; otherwise each task keeps its own."""
    first = tasks[0]["scorer"] if tasks else {"kind": "human"}
    if all(t["scorer"] == first for t in tasks):
        for task in tasks:
            del task["scorer"]
        return first
    return {"kind": "human", "instructions": "Each imported task names its own scorer."}


def import_set(path: Path | str, options: ImportOptions) -> ImportedSet:
    path = Path(path)
    check_options(path, options)
    if options.format == "csv" and options.delimiter is None:
        options = replace(options, delimiter=sniff_delimiter(path))
    redactor = Redactor() if options.scrub else None
    built: list[tuple[int, dict[str, Any]]] = []
    problems: list[RowProblem] = []
    not_imported: dict[str, list[str]] = {}
    seen: dict[str, tuple[str, int]] = {}
    rows = 0
    blank: list[int] = []
    first_columns: list[str] = []
    for row in _rows(path, options):
        if isinstance(row, BlankRow):
            blank.append(row.number)
            continue
        rows += 1
        if rows == 1 and isinstance(row, Row):
            first_columns = [str(k) for k in row.values if not str(k).startswith("__")]
        made = row if isinstance(row, RowProblem) else build_task(row, options, redactor)
        if isinstance(made, RowProblem):
            problems.append(made)
            continue
        assert isinstance(row, Row)
        folded = made["id"].casefold()
        if folded in seen:
            other_id, other_row = seen[folded]
            same = "" if other_id == made["id"] else f" ({other_id!r}: ids differing only in case name the same file)"
            problems.append(
                RowProblem(
                    row.number,
                    options.columns()[0] or "",
                    f"id {made['id']!r} is also row {other_row}'s{same}; ids must be unique",
                )
            )
            continue
        seen[folded] = (made["id"], row.number)
        built.append((row.number, made))
        if row.not_imported:
            not_imported[made["id"]] = list(row.not_imported)
    if problems and not options.skip_bad_rows:
        raise _refusal(problems, path, first_columns)
    if not built:
        raise ImportingError(f"{path}: no row made a task ({rows} rows read); check the column options")
    kept = _limited(built, options)
    tasks = [task for _, task in kept]
    sha256, size = source_digest(path)
    default_scorer = _default_scorer(tasks)
    code = pin(sha256, options)
    info: ImportInfo = {
        "format": FORMAT,
        "source": {"name": path.name, "sha256": sha256, "bytes": size, "format": options.format},
        "options": options.recorded(),
        "counts": {
            "rows": rows,
            "tasks": len(tasks),
            "bad_rows": len(problems),
            "blank_rows": len(blank),
            "left_out_by_limit": len(built) - len(kept),
        },
        "blank_rows": blank,
        "skipped": [p.as_json() for p in problems],
        "not_imported": {
            task_id: not_imported[task_id] for task_id in (t["id"] for t in tasks) if task_id in not_imported
        },
        "redaction": {"replaced": redactor.summary() if redactor else {}, "scrubbed": options.scrub},
        "tasks": [{"id": task["id"], "row": number} for number, task in kept],
    }
    caveats = [
        f"Imported by `compare-tui sets import` from {path.name} (sha256 {sha256[:12]}…); import.json pins the source and the options.",
        "Expected outcomes are the source's: a pass means agreement with them, not ground truth.",
    ]
    if not_imported:
        caveats.append(
            f"{len(info['not_imported'])} tasks had asserts no scorer here checks; import.json lists them per task."
        )
    if problems:
        caveats.append(f"{len(problems)} source rows could not become tasks and were skipped (listed in import.json).")
    manifest: dict[str, Any] = {
        "workload_id": options.workload_id or default_workload_id(path.stem),
        "name": options.name or f"Imported from {path.name}",
        "version": options.version or f"import-{code}",
        "caveats": caveats,
        "default_scorer": default_scorer,
    }
    Manifest.model_validate(manifest)
    return ImportedSet(manifest, tasks, info)
