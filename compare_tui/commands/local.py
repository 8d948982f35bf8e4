"""`compare-tui local up|status|down`: the embedded default (see `compare_tui/local/`)."""

from compare_tui.local.commands import register

__all__ = ["register"]
