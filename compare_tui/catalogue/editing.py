"""Edit `models.toml` in place, keeping the user's comments, ordering and other entries.

tomlkit round-trips the file: only the `[[model]]` table being added, replaced or removed
changes. A comment block just before a `[[model]]` header is stored by TOML parsers at the
end of the *previous* table; it describes the next entry, so it is moved along when its
table is replaced or removed rather than deleted with it.

Writes are validated before they land: the new text must load through `load_catalogue`
(the loader every run uses), then it replaces the file atomically. A file that does not
load is refused before any edit and never overwritten.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Comment, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from compare_tui.catalogue.errors import CatalogueEditError, CatalogueError
from compare_tui.catalogue.loader import entry_table, load_catalogue
from compare_tui.catalogue.models import Catalogue, ModelEntry


def read_for_edit(path: Path) -> tuple[TOMLDocument, Catalogue | None]:
    """The file as an editable document plus its validated catalogue (None when the file
    does not exist yet or holds no entries). Raises `CatalogueEditError` when it exists
    but does not load: it is never overwritten."""
    if not path.exists():
        return tomlkit.document(), None
    try:
        text = path.read_text(encoding="utf-8")
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogueEditError(f"{path} cannot be read ({exc}); nothing was written", path) from None
    except Exception as exc:  # noqa: BLE001 - tomlkit's parse errors share no public base
        raise CatalogueEditError(
            f"{path} is not valid TOML ({str(exc).splitlines()[0]}); fix it first, it was left unchanged", path
        ) from None
    if not document.keys():  # comments only: nothing to validate yet
        return document, None
    try:
        return document, load_catalogue(path)
    except CatalogueError as exc:
        first = exc.problems[0] if exc.problems else str(exc)
        more = f" (and {len(exc.problems) - 1} more problems)" if len(exc.problems) > 1 else ""
        raise CatalogueEditError(f"{first}{more}; fix the catalogue first, it was left unchanged", path) from None


def _models(document: TOMLDocument) -> AoT | None:
    value = document.get("model")
    return value if isinstance(value, AoT) else None


def _trailing_body(table: Table) -> list[tuple[Any, Any]]:
    """The body list that holds `table`'s trailing comments: its last sub-table's, if the
    table ends with one (TOML parsers attach following comments to the innermost table)."""
    body = table.value.body
    keyed = [item for key, item in body if key is not None]
    if keyed and isinstance(keyed[-1], Table) and not keyed[-1].is_super_table():
        return _trailing_body(keyed[-1])
    return body


def _take_trailing(table: Table) -> list[Any]:
    """Remove and return the trailing comment/blank-line items of `table`."""
    body = _trailing_body(table)
    taken: list[Any] = []
    while body and body[-1][0] is None and isinstance(body[-1][1], (Comment, Whitespace)):
        taken.insert(0, body.pop()[1])
    return taken


def _append_trivia(table: Table, items: list[Any]) -> None:
    body = _trailing_body(table)
    for item in items:
        body.append((None, item))


def _ends_with_blank(table: Table) -> bool:
    body = _trailing_body(table)
    return bool(body) and isinstance(body[-1][1], Whitespace) and body[-1][1].as_string().endswith("\n")


def _entry_as_table(entry: ModelEntry, comment: str | None) -> Table:
    table = tomlkit.table()
    if comment:
        table.add(tomlkit.comment(comment))
    for key, value in entry_table(entry).items():
        if isinstance(value, dict):
            table.add(key, _sub_table(value))
        else:
            table.add(key, value)
    return table


def _sub_table(values: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, _sub_table(value) if isinstance(value, dict) else value)
    return table


def _index(models: AoT | None, name: str) -> int | None:
    for index, table in enumerate(models or []):
        if table.get("name") == name:
            return index
    return None


def with_entry(
    document: TOMLDocument, entry: ModelEntry, *, replace: bool, comment: str | None = None, path: Path | None = None
) -> TOMLDocument:
    """`document` with `entry` appended, or put in the place of the entry of the same name
    when `replace`; raises `CatalogueEditError` for a duplicate name without `replace`."""
    models = _models(document)
    index = _index(models, entry.name)
    table = _entry_as_table(entry, comment)
    if index is not None and not replace:
        raise CatalogueEditError(
            f"a model named {entry.name!r} is already in {path or 'the catalogue'}; pass --replace to "
            "overwrite it, or choose another NAME",
            path,
        )
    if models is None:
        if document.keys() or document.body:
            document.add(tomlkit.nl())
        models = tomlkit.aot()
        models.append(table)
        document.add("model", models)
        return document
    if index is None:
        last = models[-1]
        if not _ends_with_blank(last):
            _append_trivia(last, [tomlkit.ws("\n")])
        models.append(table)
        return document
    trailing = _take_trailing(models[index])
    models[index] = table
    _append_trivia(models[index], trailing or [tomlkit.ws("\n")])
    return document


def _split_block(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """Split trailing trivia at its last blank line: (what belongs to this table, the
    comment block touching the next header, which describes the next entry)."""
    blanks = [i for i, item in enumerate(items) if isinstance(item, Whitespace) and "\n" in item.as_string()]
    if not blanks:
        return [], items
    last = blanks[-1]
    return items[: last + 1], items[last + 1 :]


def without_entry(document: TOMLDocument, name: str, *, path: Path | None = None) -> TOMLDocument:
    """`document` without the entry called `name`, its own comments included: those inside
    it, and the comment block directly above its header (no blank line between). Comments
    that describe other entries stay. Raises `CatalogueEditError` for an unknown name, or
    when it is the last entry (a catalogue needs one; delete the file instead)."""
    models = _models(document)
    index = _index(models, name)
    if models is None or index is None:
        names = ", ".join(str(t.get("name")) for t in models or [])
        raise CatalogueEditError(
            f"no model named {name!r} in {path or 'the catalogue'}" + (f"; it has: {names}" if names else ""), path
        )
    if len(models) == 1:
        raise CatalogueEditError(
            f"{name!r} is the only model in {path or 'the catalogue'}; a catalogue "
            "needs at least one, so delete the file instead",
            path,
        )
    is_last = index == len(models) - 1
    # At the end of the file there is no next header: trailing comments there are kept.
    trailing = _take_trailing(models[index])
    _own, for_next = _split_block(trailing) if not is_last else ([], [t for t in trailing if isinstance(t, Comment)])
    del models[index]
    if index > 0:
        previous = models[index - 1]
        kept, _describes_removed = _split_block(_take_trailing(previous))
        block = kept + for_next
        if is_last:
            while block and isinstance(block[-1], Whitespace):
                block.pop()
        _append_trivia(previous, block)
        return document
    comments = [t for t in for_next if isinstance(t, Comment)]
    return _with_preamble(document, comments) if comments else document


def _with_preamble(document: TOMLDocument, comments: list[Comment]) -> TOMLDocument:
    """A copy of `document` with `comments` just before its `[[model]]` tables (rebuilt,
    because inserting into a parsed body by hand would desynchronise tomlkit's key map)."""
    rebuilt = tomlkit.document()
    rebuilt.parsing(True)  # as the parser does: take items as they are, add no blank lines
    for key, item in document.body:
        if key is None:
            rebuilt.add(item)
            continue
        if key.key == "model":
            for comment in comments:
                rebuilt.add(comment)
        rebuilt.add(key, item)
    rebuilt.parsing(False)
    return rebuilt


def save(document: TOMLDocument, path: Path) -> Path:
    """Write `document` to `path` atomically, after checking that the new text loads as a
    catalogue; raises `CatalogueEditError` (file untouched) when it would not."""
    text = tomlkit.dumps(document)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            load_catalogue(tmp)
        except CatalogueError as exc:
            raise CatalogueEditError(
                f"the edited catalogue would not load ({exc.problems[0]}); {path} was left unchanged", path
            ) from None
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
