"""A file path as a toast shows it: whole when it fits, else shortened in the middle.

A path is shown so that it can be found and copied; a toast wraps long text at any character,
so a path wider than the toast used to fold mid-name (`…/compare-tui` / `/bundles/…`). Here the
home folder is written `~`, and a path still too wide keeps its first folder and as many of its
last parts as fit, the file name always whole where the width allows: `/srv/…/bundles/x/index.html`.
"""

from __future__ import annotations

from pathlib import Path

ELLIPSIS = "…"


def home_relative(path: Path, home: Path | None = None) -> str:
    """`path` with the home folder written `~`; as given outside home (or with no home known)."""
    try:
        base = Path.home() if home is None else home
        return "~/" + str(path.relative_to(base))
    except (ValueError, RuntimeError):
        return str(path)


def fit_path(path: Path, width: int, home: Path | None = None) -> str:
    """`home_relative(path)` in at most `width` characters (`width` ≥ 3): the middle folders
    give way to `…` first, then the first folder; only a file name wider than the whole
    width loses its start."""
    text = home_relative(path, home)
    if len(text) <= width:
        return text
    parts = text.split("/")
    name = parts[-1]
    if len(name) + 2 > width:
        return ELLIPSIS + name[-(width - 1) :]
    lead = 2 if parts[0] == "" else 1  # "/srv" or "~" (or a relative path's first folder)
    head = "/".join(parts[:lead]) + "/"
    tail = name
    for part in reversed(parts[lead:-1]):
        if len(head) + len(ELLIPSIS) + 1 + len(part) + 1 + len(tail) > width:
            break
        tail = f"{part}/{tail}"
    if len(head) + len(ELLIPSIS) + 1 + len(tail) > width:
        head = ""
    return f"{head}{ELLIPSIS}/{tail}"


def toast_text_width(screen_width: int) -> int:
    """The characters a toast's line holds on a screen `screen_width` wide: the app's toasts are
    as wide as the screen allows (`report.tcss`), less the rack's margin, the toast's left
    border and its padding."""
    return max(20, screen_width - 5)
