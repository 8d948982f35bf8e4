"""What a scorer names outside its own table: JSON Schemas and command scripts.

`resolve_scorer` checks them and returns the scorer a caller can run as is: a json scorer's
`schema` given as a path is replaced by the schema it names, and every file it references
inside the set folder is hashed into `files` (relative POSIX path -> sha256 hex) so the
set's digest covers it. Paths are judged lexically: `../x` leaves the set folder even where
a symlink would lead back in, so what the digest covers never depends on the filesystem.
"""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path
from typing import Any

from .documents import read_bytes, read_document
from .errors import Problem
from .models import CommandScorer, JsonScorer

SCRIPT_SUFFIXES = (".py", ".sh")
"""An argv entry ending so is taken to be a script in the set; it must exist there."""

_CREATE_IT = "create it, or correct the path (relative to the set folder)"


def _inside(relpath: str) -> str | None:
    """`relpath` normalised to a POSIX path inside the set, or None when it leaves it."""
    if not relpath or "\x00" in relpath or relpath.startswith(("/", "\\")):
        return None
    norm = posixpath.normpath(relpath)
    if norm == ".." or norm.startswith("../"):
        return None
    return norm


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # name too long, NUL byte: not a file of the set
        return False


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a valid JSON Schema, or None when it is."""
    # Imported here: jsonschema is slow to import, and only sets with json scorers need it.
    from jsonschema.validators import validator_for
    from referencing.jsonschema import UnknownDialect, specification_with  # jsonschema's own registry

    try:
        if "$schema" in schema:
            specification_with(str(schema["$schema"]))  # raises `UnknownDialect` for one it does not know
        validator_for(schema).check_schema(schema)  # no `$schema`: the latest draft
    except UnknownDialect:
        return f"its `$schema` ({str(schema['$schema'])[:80]!r}) is not a JSON Schema version jsonschema knows"
    except Exception as exc:  # noqa: BLE001 - jsonschema on user data raises more than SchemaError
        message = getattr(exc, "message", None)
        if message is None:
            return f"{type(exc).__name__}: {exc}"
        where = getattr(exc, "json_path", "$")
        return message if where == "$" else f"{message} (at {where})"
    return None


def _hash_into(target: Path, rel: str, file: Path, field: str, files: dict[str, str], problems: list[Problem]) -> None:
    raw = read_bytes(target)
    if isinstance(raw, Problem):
        problems.append(Problem(file, field, f"`{rel}` {raw.message}", raw.fix))
    else:
        files[rel] = hashlib.sha256(raw).hexdigest()


def _load_schema(
    path: str, root: Path, file: Path, field: str, files: dict[str, str], problems: list[Problem]
) -> dict[str, Any] | None:
    rel = _inside(path)
    if not path.strip():
        problems.append(Problem(file, field, "schema path is empty", "give the schema inline, or its path"))
        return None
    if rel is None:
        problems.append(
            Problem(
                file,
                field,
                f"schema path `{path}` leaves the set folder",
                "put the schema file inside the set folder and give its path relative to it",
            )
        )
        return None
    target = root / rel
    if not _is_file(target):
        problems.append(Problem(file, field, f"schema file `{path}` does not exist (looked for {target})", _CREATE_IT))
        return None
    doc = read_document(target, "json", what="a JSON Schema")
    if isinstance(doc, Problem):
        problems.append(doc)
        return None
    files[rel] = hashlib.sha256(doc.raw).hexdigest()
    data: dict[str, Any] | None = doc.data
    return data


def _check_command(
    scorer: CommandScorer, root: Path, file: Path, field: str, files: dict[str, str], problems: list[Problem]
) -> None:
    for i, arg in enumerate(scorer.run):
        if arg.startswith("-") or arg.startswith("/"):
            continue  # an option, or a program outside the set (the digest cannot cover it)
        script = arg.lower().endswith(SCRIPT_SUFFIXES)
        rel = _inside(arg)
        if rel is None or rel == ".":
            if script:
                problems.append(
                    Problem(
                        file,
                        f"{field}.run[{i}]",
                        f"script `{arg}` lies outside the set folder",
                        "keep scripts inside the set folder and name them relative to it, so the digest covers them",
                    )
                )
            continue
        target = root / rel
        if _is_file(target):
            _hash_into(target, rel, file, f"{field}.run[{i}]", files, problems)
        elif script:
            problems.append(
                Problem(
                    file,
                    f"{field}.run[{i}]",
                    f"script `{arg}` does not exist in the set folder (looked for {target})",
                    _CREATE_IT,
                )
            )


def resolve_scorer(
    scorer: Any, *, root: Path, file: Path, field: str, files: dict[str, str], problems: list[Problem]
) -> Any:
    """`scorer` with its references checked (problems appended) and its schema loaded.

    `field` is where the scorer sits in `file` (`scorer` or `default_scorer`).
    """
    if isinstance(scorer, CommandScorer):
        _check_command(scorer, root, file, field, files, problems)
    if not isinstance(scorer, JsonScorer) or scorer.schema_ is None:
        return scorer
    if isinstance(scorer.schema_, str):
        loaded = _load_schema(scorer.schema_, root, file, f"{field}.schema", files, problems)
        if loaded is None:
            return scorer
        schema = loaded
    else:
        schema = scorer.schema_
    why = schema_problem(schema)
    if why is not None:
        where = f" (in {scorer.schema_})" if isinstance(scorer.schema_, str) else ""
        problems.append(
            Problem(
                file,
                f"{field}.schema",
                f"not a valid JSON Schema{where}: {why}",
                "fix the schema so it follows the JSON Schema specification",
            )
        )
        return scorer
    return scorer.model_copy(update={"schema_": schema})
