"""The user's TUI preferences, kept across restarts in `paths.user_config_path()` (XDG config):
today only the theme chosen last (in the command palette, or by `--theme`).

A file that cannot be read is a problem to show, never a crash; one that cannot be written
costs only the remembered choice. The file is edited with tomlkit, so a user's comments and
other keys survive a save.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomlkit


@dataclass(frozen=True, slots=True)
class Preferences:
    theme: str | None = None
    """The theme's name as Textual knows it (e.g. `compare-light`), or None: the default."""
    problem: str | None = None
    """Why the file could not be read, in words (None when it was read, or is absent)."""


def read_preferences(path: Path) -> Preferences:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Preferences()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Preferences(
            problem=f"could not read the preferences at {path} ({exc}); using the defaults. Fix or delete the file."
        )
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        return Preferences(problem=f"{path}: `theme` must be a string (a theme's name); using the default")
    return Preferences(theme=theme)


def save_theme(path: Path, theme: str) -> str | None:
    """Remember `theme`; returns a problem in words when the file could not be written."""
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        document = tomlkit.parse(text)
        document["theme"] = theme
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(tomlkit.dumps(document), encoding="utf-8")
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        return f"could not remember the theme in {path} ({exc}); it applies until you quit"
    return None
