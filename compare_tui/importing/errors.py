"""The one error importing raises for anything the user can fix."""

from __future__ import annotations

from compare_tui.errors import CompareTuiError


class ImportingError(CompareTuiError):
    """A user-facing failure: what was wrong, where (file, row, column, option), and what to do."""
