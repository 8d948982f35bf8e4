"""Reading rows from CSV, JSONL, Parquet, a saved Hugging Face dataset, or inspect_ai JSONL.

Each reader yields `Row`s, or a `RowProblem` for a row it cannot read (a JSONL line that is not
a JSON object), and raises `ImportingError` for a source it cannot read at all. Parquet and
saved datasets are read with pyarrow (the `import` extra), locally, in record batches, so a
large file is never held whole: a `datasets` folder written by `save_to_disk` is Arrow IPC
stream files listed in its `state.json`, which pyarrow reads without the `datasets` library
(and without its network access to a hub).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import ImportingError
from .rows import BlankRow, Row, RowProblem

FORMATS = ("csv", "jsonl", "parquet", "hf", "promptfoo", "inspect")


def guess_format(path: Path) -> str:
    """The format a path's name or shape says, or `ImportingError` asking for `--format`."""
    if path.is_dir():
        if (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
            return "hf"
        raise ImportingError(
            f"{path}: a folder that is not a saved Hugging Face dataset (no state.json or dataset_dict.json); "
            "give a file, or a folder written by `Dataset.save_to_disk`"
        )
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".csv"]:
        return "csv"
    if suffixes[-1:] in ([".jsonl"], [".ndjson"]):
        return "jsonl"
    if suffixes[-1:] == [".parquet"]:
        return "parquet"
    if suffixes[-1:] in ([".yaml"], [".yml"]):
        return "promptfoo"
    raise ImportingError(f"{path}: cannot tell the format from the name; pass --format {'|'.join(FORMATS)}")


def source_digest(path: Path) -> tuple[str, int]:
    """sha256 hex and size of a file, or of a folder (over its files' relative names and digests)."""
    if path.is_file():
        h = hashlib.sha256()
        size = 0
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
        return h.hexdigest(), size
    h = hashlib.sha256()
    size = 0
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest, n = source_digest(file)
        h.update(f"{file.relative_to(path).as_posix()}\0{digest}\n".encode())
        size += n
    return h.hexdigest(), size


CSV_FIELD_LIMIT = 64 * 2**20
"""The longest CSV field read (the csv module's default, 128 KiB, is shorter than some prompts)."""

CSV_DELIMITERS = (",", ";", "\t", "|")
"""The delimiters a CSV's header is tried with: a comma, then what spreadsheets write where the
comma is the decimal separator (`;`), tabs and pipes."""

_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def delimiter_name(delimiter: str) -> str:
    """`semicolon`, `tab`, … for a delimiter, as a sentence names it."""
    return _DELIMITER_NAMES.get(delimiter, repr(delimiter))


def _header_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            return f.readline()
    except UnicodeDecodeError as exc:
        raise ImportingError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8 and import again") from None


_EXCEL_SEPARATOR = re.compile(r"^sep=(.)\r?\n?$")
"""The line Excel may write above the header to name the delimiter (`sep=;`); Excel shows no row for it."""


def sniff_delimiter(path: Path) -> str:
    """The delimiter that splits the header line into the most columns; a comma on a tie (a
    one-column header included). Only the header is read: a prompt full of commas in a
    semicolon-delimited file cannot sway it. Excel's `sep=;` line above the header says it."""
    line = _header_line(path)
    named = _EXCEL_SEPARATOR.match(line)
    if named is not None:
        return named.group(1)
    widths = {d: len(next(csv.reader([line], delimiter=d), [])) for d in CSV_DELIMITERS}
    return max(CSV_DELIMITERS, key=lambda d: (widths[d], -CSV_DELIMITERS.index(d)))


def _one_column_problem(path: Path, header: list[str], delimiter: str) -> ImportingError | None:
    """A header read as one column that holds another delimiter: the file is delimited by that
    one (a semicolon export read with `--delimiter ,`), and every row would be refused."""
    if len(header) != 1:
        return None
    for other in CSV_DELIMITERS:
        if other != delimiter and other in header[0]:
            spelled = "tab" if other == "\t" else shlex.quote(other)
            return ImportingError(
                f"{path}: the header is one column, {header[0]!r:.80}, holding a {delimiter_name(other)} "
                f"({other!r}): the file looks {delimiter_name(other)}-delimited; pass --delimiter {spelled} "
                "(or leave --delimiter out: the header tells it)"
            )
    return None


def _blank(fields: list[str]) -> bool:
    """A blank row: no fields, or only empty ones (a spreadsheet's empty row exported as `;;;`)."""
    return not any(field.strip() for field in fields)


def read_csv(path: Path, delimiter: str) -> Iterator[Row | RowProblem | BlankRow]:
    """Rows numbered as a spreadsheet numbers them: the header is row 1, the first row under it
    row 2, a blank row counts (and is yielded as `BlankRow`), a cell with line breaks is one row."""
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    # utf-8-sig drops a byte-order mark (Excel writes one); newline="" lets csv see quoted newlines.
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter=delimiter)
            header = next(reader, None)
            if header is not None and len(header) <= 2 and _EXCEL_SEPARATOR.match(delimiter.join(header)):
                header = next(reader, None)  # Excel's `sep=;`: not a row of the sheet
            if header is None:
                raise ImportingError(f"{path}: empty; a CSV needs a header row naming the columns")
            problem = _one_column_problem(path, header, delimiter)
            if problem is not None:
                raise problem
            duplicates = sorted({h for h in header if header.count(h) > 1})
            if duplicates:
                raise ImportingError(f"{path}: header names {', '.join(map(repr, duplicates))} twice; rename one")
            for number, fields in enumerate(reader, start=2):
                if _blank(fields):
                    yield BlankRow(number)
                    continue
                if len(fields) != len(header):
                    yield RowProblem(number, "", f"has {len(fields)} fields, the header {len(header)}")
                    continue
                yield Row(number, dict(zip(header, fields)))
    except UnicodeDecodeError as exc:
        raise ImportingError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8 and import again") from None
    except csv.Error as exc:
        raise ImportingError(f"{path}: not a readable CSV ({exc})") from None


def read_jsonl(path: Path) -> Iterator[Row | RowProblem | BlankRow]:
    """Rows numbered as an editor numbers lines: a blank line counts (and is yielded as `BlankRow`)."""
    try:
        with path.open(encoding="utf-8-sig") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    yield BlankRow(number)
                    continue
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    yield RowProblem(number, "", f"not JSON ({exc})")
                    continue
                if not isinstance(value, dict):
                    yield RowProblem(number, "", f"a JSON {type(value).__name__}, not an object")
                    continue
                yield Row(number, value)
    except UnicodeDecodeError as exc:
        raise ImportingError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8 and import again") from None


def _pyarrow() -> Any:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise ImportingError(
            "Parquet and saved datasets are read with pyarrow, which is not installed: "
            "pip install 'compare-tui[import]' (or pip install pyarrow)"
        ) from None
    return pyarrow


def _batches_rows(batches: Any, start: int) -> Iterator[Row]:
    number = start
    for batch in batches:
        for record in batch.to_pylist():
            number += 1
            yield Row(number, record)


def read_parquet(path: Path) -> Iterator[Row | RowProblem]:
    pa = _pyarrow()
    try:
        parquet = pa.parquet.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise ImportingError(f"{path}: not a readable Parquet file ({exc})") from None
    yield from _batches_rows(parquet.iter_batches(batch_size=4096), 0)


def hf_arrow_files(path: Path, split: str | None) -> list[Path]:
    """The Arrow files of a `save_to_disk` folder, in order; a `DatasetDict` folder needs `split`."""
    if (path / "dataset_dict.json").is_file():
        try:
            splits = json.loads((path / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ImportingError(f"{path}/dataset_dict.json: not a dataset dictionary (no `splits` list)") from None
        if split is None or split not in splits:
            raise ImportingError(
                f"{path}: a dataset with splits {', '.join(splits)}; choose one with --split "
                + ("" if split is None else f"(there is no {split!r})")
            )
        path = path / split
    elif split is not None:
        raise ImportingError(f"{path}: a single dataset without splits; leave out --split {split}")
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
        names = [entry["filename"] for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise ImportingError(
            f"{path}/state.json: missing or without `_data_files`; give a folder written by `Dataset.save_to_disk`"
        ) from None
    return [path / name for name in names]


def read_hf(path: Path, split: str | None) -> Iterator[Row | RowProblem]:
    pa = _pyarrow()
    number = 0
    for file in hf_arrow_files(path, split):
        try:
            with pa.memory_map(str(file)) as source:
                reader = pa.ipc.open_stream(source)
                for batch in reader:
                    for record in batch.to_pylist():
                        number += 1
                        yield Row(number, record)
        except (OSError, pa.ArrowException) as exc:
            raise ImportingError(f"{file}: not a readable Arrow file ({exc})") from None
