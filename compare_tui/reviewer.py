"""Who a review, a triage label or a promotion is recorded as: the one rule every surface uses."""

from __future__ import annotations

import getpass
import os


def reviewer_name(explicit: str | None = None) -> str:
    """`explicit`, else `$COMPARE_TUI_REVIEWER`, else the login name (`unknown` where there is
    no passwd entry, as in some containers)."""
    if explicit:
        return explicit
    env = os.environ.get("COMPARE_TUI_REVIEWER")
    if env:
        return env
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
