"""Reading one TOML or JSON file of a golden set into plain data, or a `Problem`.

Callers can rely on: `read_document` never raises for anything about the file's contents or
permissions; the data it returns is nested at most `MAX_DEPTH` levels (so validation,
dumping and hashing cannot hit recursion limits) and holds only JSON-compatible values
(TOML dates and times are refused: JSON has no such type, so TOML and JSON tasks could
not mean the same thing).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import Problem
from .field_problems import dotted, kind_of

MAX_DEPTH = 64
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_KEY_DOTS = 64
"""Deepest nesting of tables/arrays accepted in a set's files; far beyond any real task."""


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its raw bytes (for hashing) and its data."""

    raw: bytes
    data: Any


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys silently; TOML refuses them. Refuse in
    # JSON too, so a task means the same in either syntax.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def read_bytes(file: Path) -> bytes | Problem:
    """The file's bytes, or a `Problem` saying why it could not be read."""
    try:
        # A FIFO or device would block the read or never end; refuse it before reading.
        special = file.exists() and not file.is_file() and not file.is_dir()
    except (OSError, ValueError):
        special = False  # the read below says what is wrong
    if special:
        return Problem(file, None, "is not a regular file", "replace it with a regular file")
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            return Problem(
                file,
                None,
                f"is {size:,} bytes; a golden-set file may be at most {MAX_FILE_BYTES:,}",
                "split the task, or move large data into a file a command scorer reads",
            )
        return file.read_bytes()
    except PermissionError:
        fix = f"make it readable (for example `chmod u+r {file}`)"
        return Problem(file, None, "cannot be read: permission denied", fix)
    except IsADirectoryError:
        return Problem(file, None, "is a folder, not a file", "replace it with a file, or move it elsewhere")
    except FileNotFoundError:
        return Problem(file, None, "does not exist", "create it, or correct the path")
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        return Problem(file, None, f"cannot be read: {reason}", "check that the file exists and is readable")


def _decode(file: Path, raw: bytes) -> str | Problem:
    try:
        return raw.decode("utf-8-sig")  # a leading BOM is harmless; accept it
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Problem(
            file,
            None,
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line})",
            "save the file as UTF-8",
            line,
        )


def _parse(file: Path, text: str, syntax: str) -> Any | Problem:
    name = syntax.upper()
    if syntax == "toml":
        # tomllib's memory grows with the square of a dotted key's length: a 200 KB key of
        # `a.a.a…` exhausted 24 GiB. No real set needs more than a handful of dots per key.
        for number, line in enumerate(text.splitlines(), 1):
            key = line.split("=", 1)[0]
            if key.count(".") > MAX_KEY_DOTS:
                return Problem(
                    file,
                    None,
                    f"line {number} has a key with more than {MAX_KEY_DOTS} dotted parts",
                    "use [tables] instead of very long dotted keys",
                    number,
                )
    try:
        if syntax == "json":
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return tomllib.loads(text)
    except json.JSONDecodeError as exc:
        return Problem(
            file,
            None,
            f"invalid JSON on line {exc.lineno}, column {exc.colno}: {exc.msg}",
            "fix the JSON syntax there (keys and strings need double quotes; no trailing commas)",
            exc.lineno,
        )
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        at_line = int(found.group(1)) if found else None
        return Problem(
            file,
            None,
            f"invalid TOML: {exc}",
            "fix the TOML syntax there (strings need quotes; tables are written [name])",
            at_line,
        )
    except _DuplicateKey as exc:
        return Problem(file, None, f"the key `{exc}` appears twice in one object", "keep only one of them")
    except RecursionError:
        fix = f"keep tables and arrays under {MAX_DEPTH} levels deep"
        return Problem(file, None, f"is nested too deeply to read as {name}", fix)
    except ValueError as exc:
        if "digits" in str(exc):  # Python refuses to parse integers past 4300 digits
            fix = "write such a value as a string"
            return Problem(file, None, "holds an integer with thousands of digits", fix)
        return Problem(file, None, f"invalid {name}: {exc}", f"fix the {name} value it names")


def _check_values(file: Path, data: Any) -> Problem | None:
    # Iterative walk: recursion here would fail on exactly the inputs it must refuse.
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            # Name where the deep part starts; the full path would be 64 steps long.
            where = dotted(path[:3])
            return Problem(file, where, f"is nested more than {MAX_DEPTH} levels deep", "flatten the data")
        if isinstance(value, (dt.date, dt.time)):  # datetime is a date
            what = "is a TOML date or time, which JSON cannot express"
            return Problem(file, dotted(path), what, "write it as a quoted string")
        if isinstance(value, dict):
            stack.extend((v, [*path, k]) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(value))
    return None


def read_document(file: Path, syntax: str, *, what: str) -> Document | Problem:
    """Read, decode and parse `file` as `syntax` ("toml" or "json").

    The top level must be a table/object; `what` names the file's role in the fix
    ("a task", "a JSON Schema"), e.g. "write one task as an object".
    """
    raw = read_bytes(file)
    if isinstance(raw, Problem):
        return raw
    text = _decode(file, raw)
    if isinstance(text, Problem):
        return text
    data = _parse(file, text, syntax)
    if isinstance(data, Problem):
        return data
    if not isinstance(data, dict):
        if isinstance(data, list):
            each = "; put each task in its own file" if what == "a task" else ""
            fix = f"write {what} as a single JSON object{each}"
            return Problem(file, None, "holds a top-level array", fix)
        found = f"holds {kind_of(data, syntax)} at the top level, not an object"
        return Problem(file, None, found, f"write {what} as a single JSON object")
    bad = _check_values(file, data)
    return bad if bad is not None else Document(raw, data)
