"""Read and write `models.toml` (docs/catalogue.md). Every problem becomes one line of a
`CatalogueError` naming the file, the `[[model]]` entry, the field and the fix; no
traceback or pydantic wording reaches a user, and no value that looks like a key is echoed.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from compare_tui.catalogue.errors import CatalogueError
from compare_tui.catalogue.keys import mask_provider_keys
from compare_tui.catalogue.models import Catalogue, HardwareCost, ModelEntry, ServingNotes, TokenPriceCost

# Fields that users sometimes add to hold a key. The value is never echoed, and the fix
# explains key_env instead of merely "unknown field".
_KEY_LIKE_FIELDS = {"api_key", "apikey", "api-key", "key", "token", "secret", "password"}
_BASIS = 'basis = "hardware" or basis = "token_price"'


def load_catalogue(path: str | os.PathLike[str]) -> Catalogue:
    """Load and validate a catalogue file; raise `CatalogueError` listing every problem.

    A relative `weights_dir` is taken relative to the catalogue file's folder, and `~` is
    expanded. Pins are not checked here (a catalogue may hold unrunnable entries); see
    `refusals.check_entry`."""
    file = Path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueError(
            file,
            [
                f"{file}: no such file; create it with `compare-tui "
                "models add` or `compare-tui local up`, or give the path of an existing one"
            ],
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogueError(file, [f"{file}: cannot be read ({exc}); check the path and its permissions"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(file, [f"{file}: not valid TOML: {exc}; fix the syntax there"]) from None

    problems = [
        f"{file}: unknown top-level key {key!r}; {_did_you_mean(key, ['model'])}the file holds only [[model]] tables"
        for key in raw
        if key != "model"
    ]
    tables = raw.get("model", [])
    if not isinstance(tables, list):
        tables = []
        problems.append(f"{file}: `model` must be an array of tables; write each entry as [[model]]")
    if not tables and not problems:
        problems.append(f"{file}: no models; add at least one [[model]] table")

    entries: list[tuple[int, ModelEntry]] = []
    for index, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            problems.append(f"{file}: [[model]] #{index}: expected a table; write it as [[model]]")
            continue
        label = _entry_label(index, table)
        try:
            entries.append((index, ModelEntry.model_validate(_resolve_dirs(table, file))))
        except ValidationError as exc:
            problems.extend(f"{file}: {label}, {_describe(err)}" for err in exc.errors())

    first_seen: dict[str, int] = {}
    for index, entry in entries:
        if entry.name in first_seen:
            problems.append(
                f"{file}: [[model]] #{index} {entry.name!r}: name already used by "
                f"[[model]] #{first_seen[entry.name]}; names must be unique, rename one"
            )
        first_seen.setdefault(entry.name, index)

    if problems:
        raise CatalogueError(file, [mask_provider_keys(p) for p in problems])
    return Catalogue(models=tuple(e for _, e in entries), path=file)


def write_catalogue(catalogue: Catalogue, path: str | os.PathLike[str], *, header: str | None = None) -> Path:
    """Write `catalogue` as TOML that `load_catalogue` reads back to an equal catalogue.

    The parent folder is created; the file is replaced atomically so a reader never sees
    half a catalogue. `header` (plain text) is written first as `#` comments. Returns the
    path written."""
    import tomlkit  # deferred: reading a catalogue needs only tomllib

    file = Path(path)
    tables = [entry_table(entry) for entry in catalogue.models]
    text = tomlkit.dumps({"model": tables})
    if header:
        text = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines()) + "\n" + text
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file


def entry_table(entry: ModelEntry) -> dict[str, Any]:
    """The `[[model]]` table for `entry` as plain TOML-ready values: unset fields and empty
    tables left out. Both `write_catalogue` and `models add` write entries this way."""
    table: dict[str, Any] = _compact(entry.model_dump(mode="json", exclude_none=True))
    return table


def validation_problems(exc: ValidationError, label: str) -> list[str]:
    """`exc` (from validating one entry) as the loader's one-line problems, each prefixed
    with `label` (e.g. "model 'x'")."""
    return [mask_provider_keys(f"{label}, {_describe(err)}") for err in exc.errors()]


# ------------------------------------------------------------------ helpers


def _compact(value: Any) -> Any:
    # Empty tables (`files = {}`, an empty [model.serving]) only add noise to the file.
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if v != {}}
    return value


def _resolve_dirs(table: dict[str, Any], file: Path) -> dict[str, Any]:
    weights_dir = table.get("weights_dir")
    if not isinstance(weights_dir, str) or not weights_dir:
        return table
    resolved = Path(weights_dir).expanduser()
    if not resolved.is_absolute():
        resolved = file.parent / resolved
    return {**table, "weights_dir": str(resolved)}


def _entry_label(index: int, table: dict[str, Any]) -> str:
    name = table.get("name")
    return f"[[model]] #{index} {name!r}" if isinstance(name, str) else f"[[model]] #{index}"


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _field_path(loc: tuple[Any, ...]) -> tuple[str, ...]:
    parts = [str(p) for p in loc]
    # A discriminated union adds the tag to the location (cost.hardware.usd_per_hour);
    # users wrote cost.usd_per_hour, so drop it.
    if len(parts) >= 2 and parts[0] == "cost" and parts[1] in ("hardware", "token_price"):
        del parts[1]
    if parts and parts[-1] == "[key]":
        parts.pop()
    return tuple(parts)


def _dotted(fields: tuple[str, ...]) -> str:
    # Written the way TOML spells the key, so `files."sub/a.gguf"` reads unambiguously.
    return ".".join(f if re.fullmatch(r"[A-Za-z0-9_-]+", f) else json.dumps(f) for f in fields)


def _table_model(fields: tuple[str, ...]) -> type[BaseModel] | None:
    if len(fields) == 1:
        return ModelEntry
    if fields[:1] == ("serving",) and len(fields) == 2:
        return ServingNotes
    return None


def _describe(err: Any) -> str:
    """One validation error as "field `x`: what is wrong; fix"."""
    fields = _field_path(err["loc"])
    where = f"field `{_dotted(fields)}`" if fields else "entry"
    leaf = fields[-1] if fields else ""
    kind = err["type"]
    if kind == "value_error":
        return f"{where}: {err['ctx']['error']}"
    if kind == "missing":
        table = "this [[model]]" if len(fields) == 1 else f"[model.{'.'.join(fields[:-1])}]"
        return f"{where}: missing; add `{leaf} = …` to {table}"
    if kind == "extra_forbidden":
        if leaf.lower() in _KEY_LIKE_FIELDS:
            return (
                f"{where}: keys never go in the catalogue; remove `{leaf}`, export a "
                "virtual key in an environment variable and name it with key_env"
            )
        model = _table_model(fields)
        if model is None and fields[:1] == ("cost",):
            model = _cost_model(err)
        allowed = sorted(model.model_fields) if model else []
        hint = _did_you_mean(leaf, allowed)
        listing = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return f"{where}: unknown field; {hint}remove or rename it{listing}"
    if kind == "union_tag_not_found":
        return f"{where}: no basis given; add {_BASIS}"
    if kind == "union_tag_invalid":
        return f"{where}: unknown cost basis {err['ctx'].get('tag')!r}; use {_BASIS}"
    if kind == "model_attributes_type" or kind == "model_type" or kind == "dict_type":
        return f"{where}: expected a table; write it as [model.{'.'.join(fields)}] or {{ … }}"
    message = err["msg"]
    got = err.get("input")
    echo = f" (got {got!r})" if isinstance(got, (str, int, float, bool)) and len(repr(got)) <= 80 else ""
    return f"{where}: {message[:1].lower()}{message[1:]}{echo}; change the value"


def _cost_model(err: Any) -> type[BaseModel] | None:
    loc = [str(p) for p in err["loc"]]
    if len(loc) == 3 and loc[1] in ("hardware", "token_price"):
        return HardwareCost if loc[1] == "hardware" else TokenPriceCost
    return None
