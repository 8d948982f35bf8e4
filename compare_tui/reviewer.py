"""Who a review, a triage label or a promotion is recorded as: the one rule every surface uses."""

from __future__ import annotations

import getpass

from compare_tui.settings import current


def reviewer_name(explicit: str | None = None) -> str:
    """`explicit`, else `$COMPARE_TUI_REVIEWER`, else the login name (`unknown` where there is
    no passwd entry, as in some containers)."""
    if explicit:
        return explicit
    env = current().reviewer
    if env:
        return env
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
