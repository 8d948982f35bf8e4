"""The A/B diff the Diff screen lays out lives in the core (`compare_tui.diff.ab`); this name
stays so the screen and its widgets import it where they always did."""

from compare_tui.diff.ab import ChangedTask, FigureDelta, RunPairDiff, deltas, pair_inputs, read_run_pair

__all__ = ["ChangedTask", "FigureDelta", "RunPairDiff", "deltas", "pair_inputs", "read_run_pair"]
