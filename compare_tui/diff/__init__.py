"""Pure comparisons of runs. The A/B diff (`ab`: two retained runs' figures side by side, the
tasks whose outcome changed, the paired statistics). The reproduce check: two runs of one golden set and one pinned
model, each figure (read from the runs' own reports) against a stated tolerance, with every
setting that differs flagged first. Nothing runs at import time."""

from compare_tui.diff.ab import ChangedTask, FigureDelta, RunPairDiff, deltas, diff_of, read_run_pair
from compare_tui.diff.render_reproduce import render_text, reproduce_document
from compare_tui.diff.reproduce import (
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
    "FigureDelta",
    "NotComparable",
    "ReproduceCheck",
    "RunPairDiff",
    "Tolerance",
    "ToleranceError",
    "deltas",
    "diff_of",
    "differences",
    "parse_value",
    "read_run_pair",
    "render_text",
    "reproduce_check",
    "reproduce_document",
    "resolve_tolerances",
]
