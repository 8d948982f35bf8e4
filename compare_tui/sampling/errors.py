"""The one error sampling raises for anything the user can fix."""

from __future__ import annotations


class SamplingError(Exception):
    """A user-facing failure: what was wrong, where (file, option), and what to do."""
