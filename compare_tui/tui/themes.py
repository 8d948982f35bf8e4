"""The app's themes: TOML files packaged in `compare_tui/tui/theme_files/`, loaded at startup.

Each file holds the fields of `textual.theme.Theme` (name, dark, primary, …) plus an optional
`[variables]` table. A broken file is reported (by name and reason) and skipped, never fatal.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from textual.theme import Theme

THEMES_DIR = Path(__file__).resolve().parent / "theme_files"
"""The packaged themes (package data, so a wheel install has them as a checkout does)."""
DEFAULT_THEME = "compare-dark"
SHORT_NAMES = {"dark": "compare-dark", "light": "compare-light", "high-contrast": "compare-high-contrast"}
"""What `--theme` accepts besides a full theme name or a path to a theme file."""
_THEME_FIELDS = {f.name for f in fields(Theme)}


@dataclass(frozen=True, slots=True)
class LoadedThemes:
    themes: tuple[Theme, ...]
    problems: tuple[str, ...]
    """One line per file that could not be used: `<file>: <what was wrong>`."""


def theme_from_file(path: Path) -> Theme:
    """The theme in one TOML file; `ValueError` says what is wrong with it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as TOML ({exc})") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_THEME_FIELDS))}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ValueError(f"{path}: a theme needs `name` and `primary` (strings)")
    try:
        return Theme(**data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def load_themes(folder: Path = THEMES_DIR) -> LoadedThemes:
    """Every `*.toml` theme in `folder`, sorted by file name; problems listed, not raised."""
    themes, problems = [], []
    if not folder.is_dir():
        return LoadedThemes((), (f"no themes folder at {folder}; using Textual's built-in theme",))
    try:
        files = sorted(folder.glob("*.toml"))
    except OSError as exc:
        return LoadedThemes((), (f"{folder}: cannot be listed ({exc})",))
    for file in files:
        try:
            themes.append(theme_from_file(file))
        except ValueError as exc:
            problems.append(str(exc))
    return LoadedThemes(tuple(themes), tuple(problems))


def resolve_theme_name(requested: str | None, available: set[str]) -> tuple[str, str | None]:
    """(theme to use, a problem to show or None) for a `--theme` value: a short name (`dark`,
    `light`, `high-contrast`), a theme name, or None for the default."""
    if not requested:
        return (DEFAULT_THEME if DEFAULT_THEME in available else "textual-dark"), None
    name = SHORT_NAMES.get(requested, requested)
    if name in available:
        return name, None
    fallback = DEFAULT_THEME if DEFAULT_THEME in available else "textual-dark"
    known = ", ".join(sorted(set(SHORT_NAMES) | available))
    return fallback, f"unknown theme {requested!r}; using {fallback}. Known themes: {known}"
