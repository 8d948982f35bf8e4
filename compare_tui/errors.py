"""The root of every error compare-tui raises on purpose.

Each package keeps its own error classes (a golden set that does not load, a refused model, a
store problem, …), and each of them derives from `CompareTuiError`, so a caller that only
wants "did compare-tui refuse this, and why" catches one class. Its message is written for a
user: one line (or a short list) saying what was wrong and what to do. The command line prints
it as `compare-tui: <message>` and exits with `exit_code` (2: bad input or a refusal, unless a
subclass says otherwise). Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class CompareTuiError(Exception):
    """An error meant for the user: its message says what was wrong and what to do."""

    exit_code: int = 2
