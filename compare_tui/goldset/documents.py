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
        return file.read_bytes()
    except PermissionError:
        return Problem(file, None, "cannot be read: permission denied", f"make it readable (for example `chmod u+r {file}`)")
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
            file, None, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line})",
            "save the file as UTF-8", line,
        )


def _parse(file: Path, text: str, syntax: str) -> Any | Problem:
    name = syntax.upper()
    try:
        if syntax == "json":
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return tomllib.loads(text)
    except json.JSONDecodeError as exc:
        return Problem(
            file, None, f"invalid JSON on line {exc.lineno}, column {exc.colno}: {exc.msg}",
            "fix the JSON syntax there (keys and strings need double quotes; no trailing commas)", exc.lineno,
        )
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        return Problem(
            file, None, f"invalid TOML: {exc}",
            "fix the TOML syntax there (strings need quotes; tables are written [name])", line,
        )
    except _DuplicateKey as exc:
        return Problem(file, None, f"the key `{exc}` appears twice in one object", "keep only one of them")
    except RecursionError:
        return Problem(file, None, f"is nested too deeply to read as {name}", f"keep tables and arrays under {MAX_DEPTH} levels deep")
    except ValueError as exc:
        if "digits" in str(exc):  # Python refuses to parse integers past 4300 digits
            return Problem(file, None, "holds an integer with thousands of digits", "write such a value as a string")
        return Problem(file, None, f"invalid {name}: {exc}", f"fix the {name} value it names")


def _check_values(file: Path, data: Any) -> Problem | None:
    # Iterative walk: recursion here would fail on exactly the inputs it must refuse.
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            # Name where the deep part starts; the full path would be 64 steps long.
            return Problem(file, dotted(path[:3]), f"is nested more than {MAX_DEPTH} levels deep", "flatten the data")
        if isinstance(value, (dt.date, dt.time)):  # datetime is a date
            return Problem(file, dotted(path), "is a TOML date or time, which JSON cannot express", "write it as a quoted string")
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
            return Problem(file, None, "holds a top-level array", f"write {what} as a single JSON object{each}")
        return Problem(file, None, f"holds {kind_of(data, syntax)} at the top level, not an object", f"write {what} as a single JSON object")
    bad = _check_values(file, data)
    return bad if bad is not None else Document(raw, data)
