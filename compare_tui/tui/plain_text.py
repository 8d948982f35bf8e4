"""User data (names, ids, answers, error messages) shown literally: Textual reads a plain `str`
in a `Static` or a `DataTable` cell as markup, so `[system]` or `[default_scorer]` would vanish
or break the line. Wrap such values with `plain`."""

from __future__ import annotations

from rich.text import Text


def plain(value: object) -> Text:
    """`value` as text with no markup interpretation."""
    return value if isinstance(value, Text) else Text(str(value))


def plain_row(*values: object) -> list[Text]:
    return [plain(v) for v in values]
