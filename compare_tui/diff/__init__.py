"""Pure comparisons of runs. The reproduce check: two runs of one golden set and one pinned
model, each figure (read from the runs' own reports) against a stated tolerance, with every
setting that differs flagged first. Nothing runs at import time."""

from compare_tui.diff.render_reproduce import render_text, reproduce_document
from compare_tui.diff.reproduce import (
    ChangedTask,
    Difference,
    FigureCheck,
    NotComparable,
    ReproduceCheck,
    differences,
    reproduce_check,
)
from compare_tui.diff.tolerances import DEFAULTS, Tolerance, ToleranceError, parse_value, resolve_tolerances

__all__ = [
    "DEFAULTS",
    "ChangedTask",
    "Difference",
    "FigureCheck",
    "NotComparable",
    "ReproduceCheck",
    "Tolerance",
    "ToleranceError",
    "differences",
    "parse_value",
    "render_text",
    "reproduce_check",
    "reproduce_document",
    "resolve_tolerances",
]
