"""Reusable widgets of the TUI (the task block grid, a model's live progress, …)."""
