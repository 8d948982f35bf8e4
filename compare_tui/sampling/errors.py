"""The one error sampling raises for anything the user can fix."""

from __future__ import annotations

from compare_tui.errors import CompareTuiError


class SamplingError(CompareTuiError):
    """A user-facing failure: what was wrong, where (file, option), and what to do."""
